"""SAM encoder/decoder pre/post-processing through real ONNX Runtime on stand-in models.

No registry ships SAM-family weights. These onnx.helper graphs have the real
exports' names and shapes (encoder ``image`` [1,3,1024,1024] ->
``image_embeddings`` [1,256,64,64]; decoder ``image_embeddings, point_coords,
point_labels, mask_input, has_mask_input[, orig_im_size]``). The decoder is a
real function of its box prompt: mask 0's logits are positive exactly inside
the box (in the 1024 frame, on the 256 low-res grid), masks 1-3 are its
negation with *higher* predicted IoU, so picking the wrong mask, mis-scaling
the prompt, or upscaling wrongly all fail the test.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onboard.inference.ort_session import OrtSession
from onboard.perception.sam_segmenter import SamError, SamSegmenter, longest_side_shape, upscale_low_res

OPSET = [helper.make_opsetid("", 17)]


def _c(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))


def _encoder(path):
    w = np.random.default_rng(0).normal(size=(256, 3, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("AveragePool", ["image"], ["pooled"], kernel_shape=[16, 16], strides=[16, 16]),
        _c("w", w),
        helper.make_node("Conv", ["pooled", "w"], ["image_embeddings"]),
    ]
    g = helper.make_graph(nodes, "sam_encoder_standin",
                          [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 1024, 1024])],
                          [helper.make_tensor_value_info("image_embeddings", TensorProto.FLOAT, [1, 256, 64, 64])])
    onnx.save(helper.make_model(g, opset_imports=OPSET, ir_version=8), str(path))
    return path


def _decoder(path, *, official: bool):
    centres = (np.arange(256, dtype=np.float32) + 0.5) * 4.0  # low-res cell centres in the 1024 frame
    nodes = [
        _c("gx", centres.reshape(1, 1, 1, 256)), _c("gy", centres.reshape(1, 1, 256, 1)),
        _c("i0", np.array([0], np.int64)), _c("i1", np.array([1], np.int64)), _c("i2", np.array([2], np.int64)),
        _c("zero", np.array(0.0, np.float32)), _c("neg", np.array(-1.0, np.float32)),
        _c("iou", np.array([[0.5, 0.9, 0.8, 0.7]], np.float32)),
        # x0,y0 = point_coords[0,0], x1,y1 = point_coords[0,1]
        helper.make_node("Slice", ["point_coords", "i0", "i1", "i1"], ["p0"]),  # [1,1,2]
        helper.make_node("Slice", ["point_coords", "i1", "i2", "i1"], ["p1"]),
        helper.make_node("Slice", ["p0", "i0", "i1", "i2"], ["x0"]), helper.make_node("Slice", ["p0", "i1", "i2", "i2"], ["y0"]),
        helper.make_node("Slice", ["p1", "i0", "i1", "i2"], ["x1"]), helper.make_node("Slice", ["p1", "i1", "i2", "i2"], ["y1"]),
        helper.make_node("Unsqueeze", ["x0", "i0"], ["x0u"]), helper.make_node("Unsqueeze", ["y0", "i0"], ["y0u"]),
        helper.make_node("Unsqueeze", ["x1", "i0"], ["x1u"]), helper.make_node("Unsqueeze", ["y1", "i0"], ["y1u"]),
        helper.make_node("Sub", ["gx", "x0u"], ["dl"]), helper.make_node("Sub", ["x1u", "gx"], ["dr"]),
        helper.make_node("Sub", ["gy", "y0u"], ["dt"]), helper.make_node("Sub", ["y1u", "gy"], ["db"]),
        helper.make_node("Min", ["dl", "dr", "dt", "db"], ["inside"]),  # [1,1,256,256], > 0 inside the box
        helper.make_node("Mul", ["inside", "neg"], ["outside"]),
        # consume the other inputs so they must be fed with the right names and types
        helper.make_node("ReduceMean", ["image_embeddings"], ["e"], keepdims=0),
        helper.make_node("ReduceMean", ["mask_input"], ["m"], keepdims=0),
        helper.make_node("ReduceMean", ["has_mask_input"], ["hm"], keepdims=0),
        helper.make_node("ReduceMean", ["point_labels"], ["pl"], keepdims=0),
        helper.make_node("Sum", ["e", "m", "hm", "pl"], ["junk"]), helper.make_node("Mul", ["junk", "zero"], ["z"]),
        helper.make_node("Add", ["inside", "z"], ["m0"]),
        helper.make_node("Concat", ["m0", "outside", "outside", "outside"], ["low_res_masks"], axis=1),
        helper.make_node("Identity", ["iou"], ["iou_predictions"]),
    ]
    inputs = [
        helper.make_tensor_value_info("image_embeddings", TensorProto.FLOAT, [1, 256, 64, 64]),
        helper.make_tensor_value_info("point_coords", TensorProto.FLOAT, [1, "N", 2]),
        helper.make_tensor_value_info("point_labels", TensorProto.FLOAT, [1, "N"]),
        helper.make_tensor_value_info("mask_input", TensorProto.FLOAT, [1, 1, 256, 256]),
        helper.make_tensor_value_info("has_mask_input", TensorProto.FLOAT, [1]),
    ]
    outputs = [
        helper.make_tensor_value_info("iou_predictions", TensorProto.FLOAT, [1, 4]),
        helper.make_tensor_value_info("low_res_masks", TensorProto.FLOAT, [1, 4, 256, 256]),
    ]
    if official:
        # segment-anything's export: upscale inside the graph to orig_im_size (1024 square, crop, resize)
        inputs.append(helper.make_tensor_value_info("orig_im_size", TensorProto.FLOAT, [2]))
        outputs.insert(0, helper.make_tensor_value_info("masks", TensorProto.FLOAT, [1, 4, "H", "W"]))
        nodes += [
            _c("sq", np.array([1, 4, 1024, 1024], np.int64)), _c("f1024", np.array(1024.0, np.float32)),
            _c("half", np.array(0.5, np.float32)), _c("lead", np.array([1, 4], np.int64)),
            _c("z2", np.array([0, 0], np.int64)), _c("ax", np.array([2, 3], np.int64)),
            helper.make_node("Resize", ["low_res_masks", "", "", "sq"], ["up"], mode="linear"),
            helper.make_node("ReduceMax", ["orig_im_size"], ["longest"], keepdims=0),
            helper.make_node("Div", ["f1024", "longest"], ["scale"]),
            helper.make_node("Mul", ["orig_im_size", "scale"], ["scaled"]),
            helper.make_node("Add", ["scaled", "half"], ["scaled_r"]),
            helper.make_node("Floor", ["scaled_r"], ["new_hw_f"]),
            helper.make_node("Cast", ["new_hw_f"], ["new_hw"], to=TensorProto.INT64),
            helper.make_node("Slice", ["up", "z2", "new_hw", "ax"], ["cropped"]),
            helper.make_node("Cast", ["orig_im_size"], ["orig_i"], to=TensorProto.INT64),
            helper.make_node("Concat", ["lead", "orig_i"], ["out_size"], axis=0),
            helper.make_node("Resize", ["cropped", "", "", "out_size"], ["masks"], mode="linear"),
        ]
    g = helper.make_graph(nodes, "sam_decoder_standin", inputs, outputs)
    onnx.save(helper.make_model(g, opset_imports=OPSET, ir_version=8), str(path))
    return path


def _iou(mask, box):
    ref = np.zeros_like(mask)
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    ref[y0:y1, x0:x1] = True
    return (mask & ref).sum() / (mask | ref).sum()


@pytest.fixture(params=[True, False], ids=["segment-anything-export", "nanosam-low-res-export"])
def segmenter(request, tmp_path):
    enc = OrtSession(_encoder(tmp_path / "enc.onnx"), providers=["CPUExecutionProvider"])
    dec = OrtSession(_decoder(tmp_path / "dec.onnx", official=request.param), providers=["CPUExecutionProvider"])
    return SamSegmenter(enc, dec)


def test_box_prompt_gives_the_box_mask_at_image_size(segmenter):
    image = np.random.default_rng(1).integers(0, 255, (300, 500, 3), dtype=np.uint8)  # non-square: the crop matters
    boxes = [(50.0, 40.0, 250.0, 200.0), (300.0, 100.0, 480.0, 290.0)]
    masks = segmenter.segment(image, boxes)
    assert len(masks) == 2
    for mask, box in zip(masks, boxes):
        assert mask.shape == (300, 500) and mask.dtype == bool
        assert _iou(mask, box) > 0.95


def test_embeddings_are_computed_once_per_frame(segmenter):
    image = np.zeros((240, 320, 3), np.uint8)
    segmenter.segment(image, [(10, 10, 100, 100)])
    segmenter.segment(image, [(50, 50, 200, 200), (0, 0, 30, 30)])
    assert segmenter.stats.encoder_runs == 1 and segmenter.stats.decoder_runs == 3 and segmenter.stats.cache_hits == 1
    segmenter.segment(image + 1, [(10, 10, 100, 100)])
    assert segmenter.stats.encoder_runs == 2


def test_resize_rules():
    assert longest_side_shape(300, 500, 1024) == (614, 1024)
    assert longest_side_shape(300, 500, 1024, truncate=True) == (614, 1024)
    assert longest_side_shape(301, 500, 1024) == (616, 1024)


def test_upscale_crops_the_padding_away():
    low = -np.ones((256, 256), np.float32)
    low[:128, :] = 1.0  # the top half of the padded square: exactly the image for a 2:1 landscape
    mask = upscale_low_res(low, (100, 200), 1024, (512, 1024))
    assert mask.all()


def test_decoder_without_prompt_inputs_is_named(tmp_path):
    enc = OrtSession(_encoder(tmp_path / "enc.onnx"))
    with pytest.raises(SamError, match="no 'image_embeddings' input"):
        SamSegmenter(enc, enc)
