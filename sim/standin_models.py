"""STAND-INS for Grounding DINO and SAM weights, which no registry ships.

Small ONNX graphs built with ``onnx.helper`` that have the real exports'
input/output names, dtypes and shapes (``shared/reference/model-signatures.md``)
and compute a *known function of their inputs*, so that the real
pre/post-processing code can be proven on them through real ONNX Runtime and
timed by ``aerie bench perception`` when the user has not imported the real
weights. They detect or segment nothing real and are never loaded by the
vehicle: nothing outside tests and the benchmark imports this module.

* Grounding DINO stand-in: query q scores token t by a table lookup
  ``W[q, input_ids[t]]`` (padding -inf), boxes are constants.
* SAM encoder stand-in: 16x16 average pool + a 1x1 conv to 256 channels.
* SAM decoder stand-in: mask 0's logits are positive exactly inside the box
  prompt (1024 frame, 256 grid); masks 1-3 are its negation with higher IoU
  predictions; ``official=True`` adds segment-anything's in-graph upscaling
  to ``orig_im_size``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]
IR_VERSION = 8  # what onnxruntime >= 1.17 loads
Q, T = 900, 256


def _c(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))


def build_grounding_dino_standin(path: Path, vocab: Sequence[str], answers: dict[int, tuple[str, float, tuple[float, float, float, float]]], *, signature: str = "community") -> Path:
    """STAND-IN Grounding DINO export. ``answers``: query -> (vocab token it responds to, logit, cxcywh box).

    ``signature``: "community" (img, bool masks, position_ids, text_token_mask -> logits, boxes),
    "transformers" (pixel_values, int64 attention_mask -> logits, pred_boxes) or
    "tao" (inputs fixed 1x3x544x960, text fixed at 256 -> pred_logits, pred_boxes).
    """
    ids = {t: i for i, t in enumerate(vocab)}
    w = np.full((Q, len(vocab)), -8.0, np.float32)
    boxes = np.tile(np.array([0.5, 0.5, 0.05, 0.05], np.float32), (1, Q, 1))
    for q, (tok, logit, box) in answers.items():
        w[q, ids[tok]] = logit
        boxes[0, q] = box
    image_name, inputs, (logits_name, boxes_name) = dino_signature(signature)
    outputs = [
        helper.make_tensor_value_info(logits_name, TensorProto.FLOAT, [1, Q, T]),
        helper.make_tensor_value_info(boxes_name, TensorProto.FLOAT, [1, Q, 4]),
    ]
    c = _c
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
        helper.make_node("Unsqueeze", ["qT", "zero_i"], [logits_name]),
        # consume the image so it must have the right rank and type
        helper.make_node("ReduceMean", [image_name], ["img_mean"], keepdims=0),
        helper.make_node("Mul", ["img_mean", "zero_f"], ["img_zero"]),
        helper.make_node("Add", ["B", "img_zero"], [boxes_name] if signature != "transformers" else ["boxes_pre"]),
    ]
    if signature == "transformers":  # consume pixel_mask too
        nodes += [
            helper.make_node("Cast", ["pixel_mask"], ["pm_f"], to=TensorProto.FLOAT),
            helper.make_node("ReduceMean", ["pm_f"], ["pm_mean"], keepdims=0),
            helper.make_node("Mul", ["pm_mean", "zero_f"], ["pm_zero"]),
            helper.make_node("Add", ["boxes_pre", "pm_zero"], [boxes_name]),
        ]
    graph = helper.make_graph(nodes, "grounding_dino_standin", inputs, outputs)
    onnx.save(helper.make_model(graph, opset_imports=OPSET, ir_version=IR_VERSION), str(path))
    return path


def build_sam_encoder_standin(path: Path) -> Path:
    """STAND-IN SAM image encoder: ``image`` [1,3,1024,1024] -> ``image_embeddings`` [1,256,64,64]."""
    w = np.random.default_rng(0).normal(size=(256, 3, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("AveragePool", ["image"], ["pooled"], kernel_shape=[16, 16], strides=[16, 16]),
        _c("w", w),
        helper.make_node("Conv", ["pooled", "w"], ["image_embeddings"]),
    ]
    g = helper.make_graph(nodes, "sam_encoder_standin",
                          [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 1024, 1024])],
                          [helper.make_tensor_value_info("image_embeddings", TensorProto.FLOAT, [1, 256, 64, 64])])
    onnx.save(helper.make_model(g, opset_imports=OPSET, ir_version=IR_VERSION), str(path))
    return path


def build_sam_decoder_standin(path: Path, *, official: bool = True) -> Path:
    """STAND-IN SAM mask decoder with box-prompt-dependent masks (see the module docstring)."""
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
        nodes += official_upscale_nodes()
    g = helper.make_graph(nodes, "sam_decoder_standin", inputs, outputs)
    onnx.save(helper.make_model(g, opset_imports=OPSET, ir_version=IR_VERSION), str(path))
    return path


def official_upscale_nodes() -> list:
    """segment-anything's in-graph upscaling of ``low_res_masks`` to ``orig_im_size`` (``masks``):
    bilinear to the 1024 square, crop the unpadded region, bilinear to (H, W)."""
    return [
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


def dino_signature(signature: str) -> tuple[str, list, tuple[str, str]]:
    """A Grounding DINO export's image input name, its input infos and its (logits, boxes) output names.

    One copy of the three exports' signatures (`../shared/reference/model-signatures.md`), for the
    stand-in graphs here and the stand-in networks of `sim/standin_networks.py`.
    """
    community, tao = signature in ("community", "tao"), signature == "tao"
    length = 256 if tao else "L"
    image_name = "inputs" if tao else "img" if community else "pixel_values"
    inputs = [
        helper.make_tensor_value_info(image_name, TensorProto.FLOAT, [1, 3, 544, 960] if tao else [1, 3, "h", "w"]),
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, length]),
        helper.make_tensor_value_info("attention_mask", TensorProto.BOOL if community else TensorProto.INT64, [1, length]),
        helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, [1, length]),
    ]
    if community:
        inputs += [helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, length]),
                   helper.make_tensor_value_info("text_token_mask", TensorProto.BOOL, [1, length, length])]
    else:
        inputs.append(helper.make_tensor_value_info("pixel_mask", TensorProto.INT64, [1, "h", "w"]))
    outputs = ("pred_logits", "pred_boxes") if tao else ("logits", "boxes") if community else ("logits", "pred_boxes")
    return image_name, inputs, outputs
