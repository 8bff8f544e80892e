"""Open-vocabulary detection with a Grounding DINO ONNX export.

No registry ships Grounding DINO weights, so the file comes from the user
(``aerie models import grounding-dino-swint FILE`` plus its BERT
``vocab.txt`` as the ``vocab`` companion). This module accepts the three
public export signatures (see ``shared/reference/model-signatures.md``):

* transformers: ``pixel_values, input_ids, token_type_ids, attention_mask[, pixel_mask]`` -> ``logits, pred_boxes``
* community (wenyi5608/GDX): ``img, input_ids, attention_mask, position_ids, token_type_ids, text_token_mask`` -> ``logits, boxes``
* TAO (fixed 544x960, text padded to 256): ``inputs, ..., text_token_mask`` -> ``pred_logits, pred_boxes``

Inputs are matched by name and their dtypes/fixed sizes read from the
session, so the same code feeds each. Pre/post-processing follows the
reference implementation: caption ``"a . b ."``, phrase-wise position ids and
block-diagonal text self-attention, shortest side 800 / longest 1333, ImageNet
normalisation; sigmoid of the token logits, a box threshold on the max, the
label whose tokens score highest, cxcywh -> xyxy in pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from onboard.inference.ort_session import OrtSession
from onboard.perception.image_ops import normalise_nchw
from onboard.perception.types import Detection, PerceptionError, check_image

IMAGE_INPUTS = ("pixel_values", "img", "inputs", "image", "samples")
BLOCK_MASK_INPUTS = ("text_self_attention_masks", "text_token_mask")
LOGIT_OUTPUTS = ("logits", "pred_logits")
BOX_OUTPUTS = ("boxes", "pred_boxes")
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


class GroundingDinoError(PerceptionError):
    """The ONNX file does not look like a Grounding DINO export; says which name is missing."""


class BertTokenizer:
    """BERT WordPiece (``bert-base-uncased`` vocab.txt) via the ``tokenizers`` package."""

    def __init__(self, vocab_path: str | Path) -> None:
        from tokenizers import BertWordPieceTokenizer

        self._tok = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
        self.cls_id = self._tok.token_to_id("[CLS]")
        self.sep_id = self._tok.token_to_id("[SEP]")
        self.special_ids = {i for i in (self.cls_id, self.sep_id, self._tok.token_to_id("."), self._tok.token_to_id("?")) if i is not None}

    def encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        enc = self._tok.encode(text)
        return list(enc.ids), [tuple(o) for o in enc.offsets]


@dataclass(frozen=True)
class TextPrompt:
    caption: str
    labels: list[str]
    input_ids: np.ndarray  # [L] int64
    label_tokens: list[list[int]]  # token positions of each label
    position_ids: np.ndarray  # [L] int64, restarting at 0 in each phrase
    block_mask: np.ndarray  # [L, L] bool, one block per phrase


def build_caption(prompts: Sequence[str]) -> tuple[str, list[str], list[tuple[int, int]]]:
    """``"cat . red car ."`` and each label's character span in it."""
    labels = [p.strip().lower().rstrip(".").strip() for p in prompts if p.strip().strip(".")]
    spans, parts, pos = [], [], 0
    for label in labels:
        spans.append((pos, pos + len(label)))
        parts.append(label)
        pos += len(label) + 3
    return " . ".join(parts) + " .", labels, spans


def encode_prompt(tokenizer: BertTokenizer, prompts: Sequence[str], max_len: int = 256) -> TextPrompt:
    caption, labels, spans = build_caption(prompts)
    if not labels:
        raise PerceptionError("Grounding DINO needs at least one non-empty prompt")
    ids, offsets = tokenizer.encode(caption)
    ids, offsets = ids[:max_len], offsets[:max_len]
    label_tokens = [
        [i for i, (s, e) in enumerate(offsets) if e > s and s >= a and e <= b and ids[i] not in tokenizer.special_ids]
        for a, b in spans
    ]
    position_ids, block = phrase_masks(ids, tokenizer.special_ids)
    return TextPrompt(caption, labels, np.array(ids, np.int64), label_tokens, position_ids, block)


def phrase_masks(ids: Sequence[int], special_ids: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """Reference ``generate_masks_with_special_tokens_and_transfer_map`` for one caption.

    Each phrase (tokens up to and including its ``.``) attends only to itself
    and numbers its positions from 0; [CLS] and [SEP] attend to themselves.
    """
    n = len(ids)
    block = np.eye(n, dtype=bool)
    pos = np.zeros(n, np.int64)
    previous = 0
    for col in [i for i, t in enumerate(ids) if t in special_ids]:
        if col == 0 or col == n - 1:
            pos[col] = 0
        else:
            block[previous + 1 : col + 1, previous + 1 : col + 1] = True
            pos[previous + 1 : col + 1] = np.arange(col - previous)
        previous = col
    return pos, block


def resize_shape(h: int, w: int, shortest: int = 800, longest: int = 1333) -> tuple[int, int]:
    """``RandomResize([800], max_size=1333)``: shorter side to 800 unless the longer would pass 1333."""
    small, large = min(h, w), max(h, w)
    size = shortest
    if large / small * size > longest:
        size = int(round(longest * small / large))
    if h < w:
        return size, int(size * w / h)
    return int(size * h / w), size


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


class GroundingDinoDetector:
    def __init__(
        self,
        session: OrtSession,
        tokenizer: BertTokenizer,
        *,
        box_threshold: float = 0.35,
        text_threshold: float = 0.25,
        nms_iou: float = 0.5,
        shortest: int = 800,
        longest: int = 1333,
        max_text_len: int = 256,
    ) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.box_threshold = box_threshold
        self.text_threshold = text_threshold
        self.nms_iou = nms_iou
        self.shortest, self.longest = shortest, longest
        self.max_text_len = max_text_len
        inputs = session.inputs()
        self.inputs = inputs
        self.image_name = _pick(inputs, IMAGE_INPUTS, "image input")
        self.block_name = next((n for n in BLOCK_MASK_INPUTS if n in inputs), None)
        for required in ("input_ids", "attention_mask"):
            if required not in inputs:
                raise GroundingDinoError(f"{session.path}: no {required!r} input (has {sorted(inputs)})")
        outputs = session.outputs()
        self.logits_name = _pick(outputs, LOGIT_OUTPUTS, "logits output")
        self.boxes_name = _pick(outputs, BOX_OUTPUTS, "boxes output")
        self._out_idx = (session.output_names.index(self.logits_name), session.output_names.index(self.boxes_name))
        shape = inputs[self.image_name][1]
        self.fixed_hw = (shape[2], shape[3]) if isinstance(shape[2], int) and isinstance(shape[3], int) else None
        ids_shape = inputs["input_ids"][1]
        self.fixed_len = ids_shape[1] if len(ids_shape) > 1 and isinstance(ids_shape[1], int) else None

    # -- pre-processing -------------------------------------------------
    def image_tensor(self, image: np.ndarray) -> np.ndarray:
        check_image(image)
        h, w = image.shape[:2]
        nh, nw = self.fixed_hw or resize_shape(h, w, self.shortest, self.longest)
        return normalise_nchw(cv2.resize(image, (nw, nh), interpolation=cv2.INTER_LINEAR), MEAN, STD, scale=1 / 255.0)

    def feeds(self, image: np.ndarray, prompt: TextPrompt) -> dict[str, np.ndarray]:
        n = len(prompt.input_ids)
        length = self.fixed_len or n
        ids = np.zeros((1, length), np.int64)
        ids[0, :n] = prompt.input_ids
        valid = np.zeros((1, length), bool)
        valid[0, :n] = True
        pos = np.zeros((1, length), np.int64)
        pos[0, :n] = prompt.position_ids
        block = np.zeros((1, length, length), bool)
        block[0, np.arange(length), np.arange(length)] = True
        block[0, :n, :n] = prompt.block_mask
        pixels = self.image_tensor(image)
        feeds = {
            self.image_name: pixels,
            "input_ids": ids,
            "attention_mask": valid,
        }
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros((1, length), np.int64)
        if "position_ids" in self.inputs:
            feeds["position_ids"] = pos
        if self.block_name:
            feeds[self.block_name] = block
        if "pixel_mask" in self.inputs:
            feeds["pixel_mask"] = np.ones((1, pixels.shape[2], pixels.shape[3]), np.int64)
        return {k: _as_input_type(v, self.inputs[k][0]) for k, v in feeds.items()}

    # -- post-processing ------------------------------------------------
    def decode(self, logits: np.ndarray, boxes: np.ndarray, prompt: TextPrompt, width: int, height: int) -> list[Detection]:
        """Model outputs for one image -> detections in pixels (reference post-processing)."""
        prob = _sigmoid(logits[0].astype(np.float32))  # [Q, T]; -inf padding -> 0
        n = min(len(prompt.input_ids), prob.shape[1])
        prob[:, n:] = 0.0
        special = [i for i, t in enumerate(prompt.input_ids[:n]) if int(t) in self.tokenizer.special_ids]
        prob[:, special] = 0.0
        scores = prob.max(axis=1)
        found: list[Detection] = []
        for q in np.flatnonzero(scores > self.box_threshold):
            per_label = [prob[q, toks].max() if toks else 0.0 for toks in prompt.label_tokens]
            best = int(np.argmax(per_label))
            if per_label[best] <= self.text_threshold:
                continue
            cx, cy, bw, bh = (float(v) for v in boxes[0, q])
            x0, y0 = np.clip((cx - bw / 2) * width, 0, width), np.clip((cy - bh / 2) * height, 0, height)
            x1, y1 = np.clip((cx + bw / 2) * width, 0, width), np.clip((cy + bh / 2) * height, 0, height)
            found.append(Detection(prompt.labels[best], float(scores[q]), (float(x0), float(y0), float(x1), float(y1))))
        return nms(found, self.nms_iou) if self.nms_iou < 1.0 else sorted(found, key=lambda d: -d.score)

    def detect(self, image: np.ndarray, prompts: Sequence[str]) -> list[Detection]:
        prompt = encode_prompt(self.tokenizer, prompts, self.fixed_len or self.max_text_len)
        out = self.session.run(self.feeds(image, prompt))
        return self.decode(out[self._out_idx[0]], out[self._out_idx[1]], prompt, image.shape[1], image.shape[0])


def nms(detections: list[Detection], iou: float) -> list[Detection]:
    """Per-label non-maximum suppression (DINO's 900 queries often repeat an object)."""
    kept: list[Detection] = []
    for label in sorted({d.label for d in detections}):
        group = [d for d in detections if d.label == label]
        rects = [[d.box[0], d.box[1], d.box[2] - d.box[0], d.box[3] - d.box[1]] for d in group]
        idx = cv2.dnn.NMSBoxes(rects, [d.score for d in group], 0.0, iou)
        kept += [group[int(i)] for i in np.array(idx).reshape(-1)]
    return sorted(kept, key=lambda d: -d.score)


def _pick(names: dict, candidates: Sequence[str], what: str) -> str:
    for c in candidates:
        if c in names:
            return c
    raise GroundingDinoError(f"no {what} among {sorted(names)} (expected one of {list(candidates)})")


def _as_input_type(value: np.ndarray, onnx_type: str) -> np.ndarray:
    kind = onnx_type[len("tensor(") : -1] if onnx_type.startswith("tensor(") else onnx_type
    dtype = {"bool": bool, "int64": np.int64, "int32": np.int32, "float": np.float32, "float16": np.float16}.get(kind)
    return value.astype(dtype) if dtype is not None and value.dtype != dtype else value
