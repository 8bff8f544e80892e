"""STAND-IN Grounding DINO and SAM *networks* with random weights, for the quantisation path.

`sim/standin_models.py` builds graphs that compute a known function of their inputs, to prove
the pre/post-processing. Quantisation needs the other thing: the operators a real export is
made of (strided patch convolutions, residual convolutions, masked softmax attention between
image, text and query tokens, MLPs, a hypernetwork mask head), whose activations have ranges
to calibrate and whose INT8/FP16 error compounds through several layers as a real network's
does. These graphs have those operators, small, with the real exports' input/output names,
dtypes and dynamic axes (``shared/reference/model-signatures.md``):

* Grounding DINO, ``community`` (img, bool masks, position_ids, the block self-attention mask
  as ``text_token_mask``; h, w and L dynamic -> logits, boxes), ``transformers``
  (pixel_values, int64 attention_mask, pixel_mask -> logits, pred_boxes) or ``tao``
  (inputs fixed 1x3x544x960, text fixed at 256 -> pred_logits, pred_boxes). Logits are
  [1,900,256], -inf at padding and past L, as the reference.
* SAM encoder: ``image`` [1,3,1024,1024] -> ``image_embeddings`` [1,256,64,64].
* SAM decoder: ``image_embeddings, point_coords [1,N,2], point_labels [1,N], mask_input,
  has_mask_input[, orig_im_size]`` -> ``[masks,] iou_predictions, low_res_masks``; N dynamic.

Weights are seeded (the same file every build) and initializers, as an exporter writes them,
so the quantiser finds weights to quantise per channel. They detect and segment nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from sim.standin_models import IR_VERSION, OPSET, Q, T, dino_signature, official_upscale_nodes


class _Graph:
    """Nodes and seeded random initializers of one graph, named as it goes."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self._n = 0

    def const(self, name: str, value) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name: str, shape: tuple[int, ...], fan_in: int, gain: float = 1.0) -> str:
        w = self.rng.normal(0.0, gain / np.sqrt(fan_in), size=shape).astype(np.float32)
        return self.const(name, w)

    def op(self, op_type: str, inputs: list[str], out: str | None = None, **attrs) -> str:
        self._n += 1
        out = out or f"{op_type.lower()}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._n}", **attrs))
        return out

    def linear(self, x: str, name: str, d_in: int, d_out: int, gain: float = 1.0) -> str:
        w = self.weight(f"{name}.w", (d_in, d_out), d_in, gain)
        b = self.const(f"{name}.b", self.rng.normal(0.0, 0.02, size=d_out).astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def attention(self, q_in: str, kv_in: str, name: str, d_q: int, d_kv: int, d: int, mask: str | None = None) -> str:
        """Single-head attention of q_in over kv_in (projected to d), out projected back to d_q, residual added."""
        q = self.linear(q_in, f"{name}.q", d_q, d)
        k = self.linear(kv_in, f"{name}.k", d_kv, d)
        v = self.linear(kv_in, f"{name}.v", d_kv, d)
        s = self.op("Mul", [self.op("MatMul", [q, self.op("Transpose", [k], perm=[0, 2, 1])]),
                            self.const(f"{name}.scale", np.array(1.0 / np.sqrt(d), np.float32))])
        if mask is not None:
            s = self.op("Where", [mask, s, self.const(f"{name}.neg", np.array(-1e4, np.float32))])
        a = self.op("Softmax", [s], axis=-1)
        return self.op("Add", [q_in, self.linear(self.op("MatMul", [a, v]), f"{name}.o", d, d_q)])

    def mlp(self, x: str, name: str, d: int) -> str:
        h = self.op("Relu", [self.linear(x, f"{name}.1", d, 2 * d)])
        return self.op("Add", [x, self.linear(h, f"{name}.2", 2 * d, d)])

    def save(self, path: Path, name: str, inputs: list, outputs: list) -> Path:
        g = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        model = helper.make_model(g, opset_imports=OPSET, ir_version=IR_VERSION)
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
        return path


def build_grounding_dino_network(path: Path, vocab_size: int, *, signature: str = "community", dim: int = 64,
                                 seed: int = 0) -> Path:
    """STAND-IN Grounding DINO export with random weights (see the module docstring)."""
    if signature not in ("community", "transformers", "tao"):
        raise ValueError(f"unknown signature {signature!r} (community, transformers or tao)")
    community = signature in ("community", "tao")
    image, inputs, (logits_name, boxes_name) = dino_signature(signature)
    g, d = _Graph(seed), dim

    # image backbone: a 16x16 patch convolution, then a residual 3x3 block
    x = image
    if not community:  # transformers: padded pixels are zeroed by pixel_mask
        pm = g.op("Unsqueeze", [g.op("Cast", ["pixel_mask"], to=TensorProto.FLOAT), g.const("ax1", np.array([1], np.int64))])
        x = g.op("Mul", [x, pm])
    f = g.op("Relu", [g.op("Conv", [x, g.weight("patch.w", (d, 3, 16, 16), 3 * 256), g.const("patch.b", np.zeros(d, np.float32))],
                           strides=[16, 16])])
    f = g.op("Relu", [g.op("Add", [f, g.op("Conv", [f, g.weight("res.w", (d, d, 3, 3), d * 9)], pads=[1, 1, 1, 1])])])
    tokens = g.op("Transpose", [g.op("Reshape", [f, g.const("flat", np.array([1, d, -1], np.int64))])], perm=[0, 2, 1])

    # text encoder: token, position and type embeddings, one self-attention layer
    valid = g.op("Cast", ["attention_mask"], to=TensorProto.BOOL)
    valid_row = g.op("Unsqueeze", [valid, g.const("ax1b", np.array([1], np.int64))])  # [1,1,L]
    emb = [g.op("Gather", [g.weight("tok_emb", (vocab_size, d), 1), "input_ids"]),
           g.op("Gather", [g.weight("type_emb", (2, d), 1), "token_type_ids"])]
    if community:
        emb.append(g.op("Gather", [g.weight("pos_emb", (256, d), 1, 0.5), "position_ids"]))
    text = g.op("Sum", emb)
    text = g.mlp(g.attention(text, text, "text_attn", d, d, d, "text_token_mask" if community else valid_row), "text_mlp", d)

    # decoder: 900 queries attend to the image tokens, then to the text, then an MLP
    q = g.weight("queries", (1, Q, d), 1)
    q = g.attention(q, tokens, "img_xattn", d, d, d)
    q = g.attention(q, text, "txt_xattn", d, d, d, valid_row)
    q = g.mlp(q, "dec_mlp", d)

    # heads: token similarity (-inf at padding, padded to 256) and sigmoid boxes
    sim = g.op("MatMul", [g.linear(q, "logit_proj", d, d), g.op("Transpose", [text], perm=[0, 2, 1])])
    sim = g.op("Mul", [sim, g.const("logit_scale", np.array(0.25 / np.sqrt(d), np.float32))])
    neg_inf = g.const("neg_inf", np.array(-np.inf, np.float32))
    sim = g.op("Where", [valid_row, sim, neg_inf])
    L = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const("one", np.array([1], np.int64))], axis=0)
    zero = g.const("zero", np.array([0], np.int64))
    pads = g.op("Concat", [zero, zero, zero, zero, zero, g.op("Sub", [g.const("T", np.array([T], np.int64)), L])], axis=0)
    g.op("Pad", [sim, pads, neg_inf], logits_name)
    g.op("Sigmoid", [g.linear(g.op("Relu", [g.linear(q, "box1", d, d)]), "box2", d, 4)], boxes_name)
    outputs = [helper.make_tensor_value_info(logits_name, TensorProto.FLOAT, [1, Q, T]),
               helper.make_tensor_value_info(boxes_name, TensorProto.FLOAT, [1, Q, 4])]
    return g.save(path, "grounding_dino_network_standin", inputs, outputs)


def build_sam_encoder_network(path: Path, *, dim: int = 64, seed: int = 1) -> Path:
    """STAND-IN SAM image encoder: patch conv, residual conv, attention to pooled tokens, 1x1 neck to 256."""
    g, d = _Graph(seed), dim
    f = g.op("Relu", [g.op("Conv", ["image", g.weight("patch.w", (d, 3, 16, 16), 3 * 256), g.const("patch.b", np.zeros(d, np.float32))],
                           strides=[16, 16])])  # [1,d,64,64]
    f = g.op("Relu", [g.op("Add", [f, g.op("Conv", [f, g.weight("res.w", (d, d, 3, 3), d * 9)], pads=[1, 1, 1, 1])])])
    flat = g.const("flat", np.array([1, d, -1], np.int64))
    tokens = g.op("Transpose", [g.op("Reshape", [f, flat])], perm=[0, 2, 1])  # [1,4096,d]
    pooled = g.op("Transpose", [g.op("Reshape", [g.op("AveragePool", [f], kernel_shape=[4, 4], strides=[4, 4]), flat])], perm=[0, 2, 1])
    tokens = g.mlp(g.attention(tokens, pooled, "attn", d, d, d), "mlp", d)
    grid = g.op("Reshape", [g.op("Transpose", [tokens], perm=[0, 2, 1]), g.const("grid", np.array([1, d, 64, 64], np.int64))])
    g.op("Conv", [grid, g.weight("neck.w", (256, d, 1, 1), d), g.const("neck.b", np.zeros(256, np.float32))], "image_embeddings")
    return g.save(path, "sam_encoder_network_standin",
                  [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 1024, 1024])],
                  [helper.make_tensor_value_info("image_embeddings", TensorProto.FLOAT, [1, 256, 64, 64])])


def build_sam_decoder_network(path: Path, *, official: bool = True, dim: int = 64, seed: int = 2) -> Path:
    """STAND-IN SAM mask decoder: prompt tokens attend to the embedding, a hypernetwork makes 4 masks.

    ``official``: segment-anything's export (``orig_im_size`` in, ``masks`` upscaled in the graph);
    otherwise NanoSAM's (``iou_predictions, low_res_masks`` only).
    """
    g, e = _Graph(seed), 256
    # prompt tokens: a random Fourier encoding of the points in the 1024 frame plus a label embedding
    c = g.op("Sub", [g.op("Mul", [g.op("Add", ["point_coords", g.const("pt_half", np.array(0.5, np.float32))]),
                                  g.const("inv1024x2", np.array(2.0 / 1024.0, np.float32))]),
                     g.const("one_f", np.array(1.0, np.float32))])
    # dense prompt: the previous mask, downscaled by a strided conv, added where has_mask_input is 1
    dense = g.op("Conv", ["mask_input", g.weight("mask_down", (e, 1, 4, 4), 16)], strides=[4, 4])
    src = g.op("Add", ["image_embeddings", g.op("Mul", [dense, "has_mask_input"])])
    # the image's positional encoding, the points' Fourier features at each cell centre: prompts find their place
    cells = (np.arange(64, dtype=np.float32) + 0.5) / 64.0 * 2.0 - 1.0
    grid = np.stack(np.meshgrid(cells, cells), axis=-1).reshape(-1, 2)  # (x, y) per cell
    fourier = g.rng.normal(0.0, 1.0, size=(2, e // 2)).astype(np.float32)
    g.const("fourier", fourier)
    ang = 2 * np.pi * grid @ fourier
    image_pe = np.concatenate([np.sin(ang), np.cos(ang)], axis=1).T.reshape(1, e, 64, 64).astype(np.float32)
    src = g.op("Add", [src, g.const("image_pe", image_pe)])
    proj = g.op("Mul", [g.op("MatMul", [c, "fourier"]), g.const("two_pi", np.array(2 * np.pi, np.float32))])
    pe = g.op("Concat", [g.op("Sin", [proj]), g.op("Cos", [proj])], axis=-1)
    label = g.op("Cast", [g.op("Add", ["point_labels", "one_f"])], to=TensorProto.INT64)  # -1..3 -> 0..4
    sparse = g.op("Add", [pe, g.op("Gather", [g.weight("label_emb", (5, e), 1, 0.3), label])])
    tokens = g.op("Concat", [g.weight("out_tokens", (1, 5, e), 1, 0.3), sparse], axis=1)  # iou token, 4 mask tokens, prompts
    flat = g.op("Transpose", [g.op("Reshape", [src, g.const("flat", np.array([1, e, -1], np.int64))])], perm=[0, 2, 1])
    tokens = g.attention(tokens, tokens, "self_attn", e, e, dim)  # the output tokens read the prompts
    tokens = g.mlp(g.attention(tokens, flat, "xattn", e, e, dim), "mlp", e)
    # heads: IoU from token 0; masks = hypernetwork(tokens 1-4) . upscaled embedding
    one_ax = g.const("one_ax", np.array([1], np.int64))
    first = g.op("Slice", [tokens, g.const("s0", np.array([0], np.int64)), g.const("s1", np.array([1], np.int64)), one_ax])
    g.op("Sigmoid", [g.op("Reshape", [g.linear(first, "iou_head", e, 4), g.const("iou_shape", np.array([1, 4], np.int64))])],
         "iou_predictions")
    mask_tok = g.op("Slice", [tokens, "s1", g.const("s5", np.array([5], np.int64)), one_ax])
    hyper = g.linear(g.op("Relu", [g.linear(mask_tok, "hyper1", e, dim)]), "hyper2", dim, 32)  # [1,4,32]
    up = g.op("Conv", [src, g.weight("up.w", (32, e, 1, 1), e)])
    up = g.op("Resize", [up, "", g.const("x4", np.array([1, 1, 4, 4], np.float32))], mode="linear")
    up = g.op("Reshape", [up, g.const("up_flat", np.array([1, 32, -1], np.int64))])
    logits = g.op("MatMul", [hyper, up])  # [1,4,65536]; centred per mask, so each has both signs
    logits = g.op("Sub", [logits, g.op("ReduceMean", [logits], axes=[-1], keepdims=1)])
    g.op("Reshape", [logits, g.const("low_shape", np.array([1, 4, 256, 256], np.int64))], "low_res_masks")
    inputs = [
        helper.make_tensor_value_info("image_embeddings", TensorProto.FLOAT, [1, 256, 64, 64]),
        helper.make_tensor_value_info("point_coords", TensorProto.FLOAT, [1, "N", 2]),
        helper.make_tensor_value_info("point_labels", TensorProto.FLOAT, [1, "N"]),
        helper.make_tensor_value_info("mask_input", TensorProto.FLOAT, [1, 1, 256, 256]),
        helper.make_tensor_value_info("has_mask_input", TensorProto.FLOAT, [1]),
    ]
    outputs = [helper.make_tensor_value_info("iou_predictions", TensorProto.FLOAT, [1, 4]),
               helper.make_tensor_value_info("low_res_masks", TensorProto.FLOAT, [1, 4, 256, 256])]
    if official:
        inputs.append(helper.make_tensor_value_info("orig_im_size", TensorProto.FLOAT, [2]))
        outputs.insert(0, helper.make_tensor_value_info("masks", TensorProto.FLOAT, [1, 4, "H", "W"]))
        g.nodes += official_upscale_nodes()
    return g.save(path, "sam_decoder_network_standin", inputs, outputs)
