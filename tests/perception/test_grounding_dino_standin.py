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
from onnx import TensorProto, helper

from onboard.inference.ort_session import OrtSession
from sim.standin_models import build_grounding_dino_standin
from onboard.perception.grounding_dino import (
    BertTokenizer,
    GroundingDinoDetector,
    GroundingDinoError,
    encode_prompt,
    phrase_masks,
    resize_shape,
)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "?", "the", "running", "dog", "cat", "red", "car", "a", "person"]
# Crafted answers: query -> (token it responds to, logit, box cxcywh normalised)
ANSWERS = {
    0: ("dog", 3.0, (0.25, 0.50, 0.20, 0.40)),
    1: ("cat", 2.0, (0.75, 0.50, 0.30, 0.60)),
    2: ("car", 4.0, (0.50, 0.20, 0.40, 0.20)),
    3: (".", 5.0, (0.10, 0.10, 0.10, 0.10)),  # a separator: must never become a label
    4: ("dog", 2.9, (0.26, 0.51, 0.20, 0.40)),  # a near duplicate of query 0: NMS removes it
}


@pytest.fixture
def vocab(tmp_path):
    p = tmp_path / "vocab.txt"
    p.write_text("\n".join(VOCAB) + "\n")
    return BertTokenizer(p)


@pytest.fixture(params=["community", "transformers", "tao"])
def detector(request, tmp_path, vocab):
    session = OrtSession(build_grounding_dino_standin(tmp_path / "gd.onnx", VOCAB, ANSWERS, signature=request.param), providers=["CPUExecutionProvider"])
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
