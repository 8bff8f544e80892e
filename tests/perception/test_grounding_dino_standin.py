"""Grounding DINO pre/post-processing through real ONNX Runtime on a stand-in model.

No registry ships Grounding DINO weights, so this builds, with onnx.helper, a
small graph with the public exports' input/output names, dtypes and shapes
(logits [1,900,256], boxes [1,900,4]). It is a stand-in for the weights, not
for the code: its logits are a real function of ``input_ids`` (query q scores
token t by a table lookup W[q, vocab id], padding -inf), so the test proves
that our tokenisation, feeds, token->label mapping and box decoding are right
wherever the prompt's tokens land.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onboard.inference.ort_session import OrtSession
from onboard.perception.grounding_dino import (
    BertTokenizer,
    GroundingDinoDetector,
    GroundingDinoError,
    encode_prompt,
    phrase_masks,
    resize_shape,
)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "?", "the", "running", "dog", "cat", "red", "car", "a", "person"]
Q, T = 900, 256
ID = {t: i for i, t in enumerate(VOCAB)}
# Crafted answers: query -> (token it responds to, logit, box cxcywh normalised)
ANSWERS = {
    0: ("dog", 3.0, (0.25, 0.50, 0.20, 0.40)),
    1: ("cat", 2.0, (0.75, 0.50, 0.30, 0.60)),
    2: ("car", 4.0, (0.50, 0.20, 0.40, 0.20)),
    3: (".", 5.0, (0.10, 0.10, 0.10, 0.10)),  # a separator: must never become a label
    4: ("dog", 2.9, (0.26, 0.51, 0.20, 0.40)),  # a near duplicate of query 0: NMS removes it
}


def _standin(path, *, community: bool):
    w = np.full((Q, len(VOCAB)), -8.0, np.float32)
    boxes = np.tile(np.array([0.5, 0.5, 0.05, 0.05], np.float32), (1, Q, 1))
    for q, (tok, logit, box) in ANSWERS.items():
        w[q, ID[tok]] = logit
        boxes[0, q] = box
    image_name = "img" if community else "pixel_values"
    inputs = [
        helper.make_tensor_value_info(image_name, TensorProto.FLOAT, [1, 3, "h", "w"]),
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "L"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.BOOL if community else TensorProto.INT64, [1, "L"]),
        helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, [1, "L"]),
    ]
    if community:
        inputs += [
            helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "L"]),
            helper.make_tensor_value_info("text_token_mask", TensorProto.BOOL, [1, "L", "L"]),
        ]
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, Q, T]),
        helper.make_tensor_value_info("boxes" if community else "pred_boxes", TensorProto.FLOAT, [1, Q, 4]),
    ]
    c = lambda name, arr: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))
    mask_in = "attention_mask"
    nodes = [
        c("W", w), c("B", boxes), c("zero_i", np.array([0], np.int64)), c("T", np.array([T], np.int64)),
        c("one", np.array([1], np.int64)), c("neg_inf", np.array(-np.inf, np.float32)), c("zero_f", np.array(0.0, np.float32)),
        helper.make_node("Squeeze", ["input_ids", "zero_i"], ["ids"]),  # [L]
        helper.make_node("Gather", ["W", "ids"], ["qt"], axis=1),  # [Q, L]
        helper.make_node("Cast", [mask_in], ["valid"], to=TensorProto.BOOL),
        helper.make_node("Where", ["valid", "qt", "neg_inf"], ["qt_masked"]),  # padding tokens -> -inf
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node("Gather", ["ids_shape", "one"], ["L"], axis=0),
        helper.make_node("Sub", ["T", "L"], ["pad_len"]),
        helper.make_node("Concat", ["zero_i", "zero_i", "zero_i", "pad_len"], ["pads"], axis=0),
        helper.make_node("Pad", ["qt_masked", "pads", "neg_inf"], ["qT"]),  # [Q, 256]
        helper.make_node("Unsqueeze", ["qT", "zero_i"], ["logits"]),
        # consume the image so it must have the right rank and type
        helper.make_node("ReduceMean", [image_name], ["img_mean"], keepdims=0),
        helper.make_node("Mul", ["img_mean", "zero_f"], ["img_zero"]),
        helper.make_node("Add", ["B", "img_zero"], ["boxes" if community else "pred_boxes"]),
    ]
    graph = helper.make_graph(nodes, "grounding_dino_standin", inputs, outputs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    return path


@pytest.fixture
def vocab(tmp_path):
    p = tmp_path / "vocab.txt"
    p.write_text("\n".join(VOCAB) + "\n")
    return BertTokenizer(p)


@pytest.fixture(params=[True, False], ids=["community-export", "transformers-export"])
def detector(request, tmp_path, vocab):
    session = OrtSession(_standin(tmp_path / "gd.onnx", community=request.param), providers=["CPUExecutionProvider"])
    return GroundingDinoDetector(session, vocab, box_threshold=0.35, text_threshold=0.25, shortest=64, longest=96)


def test_phrase_masks_match_the_reference_example(vocab):
    # GDX: "the running dog ." -> position_ids [0, 0, 1, 2, 3, 0]
    p = encode_prompt(vocab, ["the running dog"])
    assert p.caption == "the running dog ."
    assert p.position_ids.tolist() == [0, 0, 1, 2, 3, 0]
    assert p.block_mask[1:5, 1:5].all() and not p.block_mask[0, 1] and not p.block_mask[5, 4]


def test_two_phrases_get_two_blocks(vocab):
    p = encode_prompt(vocab, ["Dog", "red car."])
    assert p.caption == "dog . red car ."
    assert p.labels == ["dog", "red car"]
    assert p.label_tokens == [[1], [3, 4]]
    assert p.position_ids.tolist() == [0, 0, 1, 0, 1, 2, 0]
    pos, block = phrase_masks(p.input_ids.tolist(), vocab.special_ids)
    assert block[1, 2] and not block[1, 3] and block[3, 5]


def test_resize_follows_800_1333():
    assert resize_shape(480, 640) == (800, 1066)
    assert resize_shape(400, 1200) == (444, 1332)  # the reference truncates: int(444 * 3)


def test_detects_prompted_labels_with_pixel_boxes(detector):
    image = np.zeros((200, 400, 3), np.uint8)
    found = detector.detect(image, ["dog", "cat"])
    assert [d.label for d in found] == ["dog", "cat"]  # the "." query and the dog duplicate are gone
    dog, cat = found
    assert dog.score == pytest.approx(1 / (1 + np.exp(-3.0)), abs=1e-5)
    assert dog.box == pytest.approx((60.0, 60.0, 140.0, 140.0), abs=1e-3)  # cx .25 w .2 of 400, cy .5 h .4 of 200
    assert cat.box == pytest.approx((240.0, 40.0, 360.0, 160.0), abs=1e-3)


def test_label_follows_the_tokens_wherever_they_are(detector):
    image = np.zeros((100, 100, 3), np.uint8)
    found = detector.detect(image, ["red car", "person", "dog"])
    assert {d.label for d in found} == {"red car", "dog"}
    car = next(d for d in found if d.label == "red car")
    assert car.box == pytest.approx((30.0, 10.0, 70.0, 30.0), abs=1e-3)


def test_unprompted_objects_are_not_reported(detector):
    assert detector.detect(np.zeros((64, 64, 3), np.uint8), ["person"]) == []


def test_not_a_dino_export_is_named(tmp_path, vocab):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(tmp_path / "no.onnx"))
    with pytest.raises(GroundingDinoError, match="no image input"):
        GroundingDinoDetector(OrtSession(tmp_path / "no.onnx"), vocab)
