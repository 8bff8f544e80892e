"""Box-prompted segmentation with a SAM-style image encoder + mask decoder (ONNX).

No registry ships SAM/MobileSAM/NanoSAM/EfficientViT-SAM weights; the user
imports the encoder and decoder exports (``mobilesam-encoder``/``-decoder`` in
the manifest). One encoder run per frame is the expensive part (the decoder
is ~1 ms), so image embeddings are cached per frame and every box prompt of
that frame reuses them.

Handled decoder signatures (``shared/reference/model-signatures.md``):

* segment-anything ``export_onnx_model.py`` (SAM, MobileSAM): takes
  ``orig_im_size`` and returns ``masks`` already at the image's size;
* NanoSAM: no ``orig_im_size``, returns ``iou_predictions, low_res_masks``;
* EfficientViT-SAM: ``masks`` are the 256x256 low-res logits.

Low-res logits are upscaled as the reference does: bilinear to the encoder's
square frame, crop the unpadded region, bilinear to (H, W), threshold at 0.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

from onboard.inference.ort_session import OrtSession
from onboard.perception.image_ops import normalise_nchw
from onboard.perception.types import Box, PerceptionError, check_image

PIXEL_MEAN = np.array([123.675, 116.28, 103.53], np.float32)
PIXEL_STD = np.array([58.395, 57.12, 57.375], np.float32)
PROMPT_FRAME = 1024  # decoders take point coordinates in the 1024 frame, whatever the encoder size


class SamError(PerceptionError):
    """The encoder/decoder files do not have a SAM-style signature; names what is missing."""


@dataclass
class SegmenterStats:
    encoder_runs: int = 0
    decoder_runs: int = 0
    cache_hits: int = 0


def longest_side_shape(h: int, w: int, side: int, *, truncate: bool = False) -> tuple[int, int]:
    """``ResizeLongestSide``: (new_h, new_w), rounded (SAM) or truncated (NanoSAM)."""
    scale = side / max(h, w)
    if truncate:
        return int(h * scale), int(w * scale)
    return int(h * scale + 0.5), int(w * scale + 0.5)


def upscale_low_res(logits: np.ndarray, image_hw: tuple[int, int], frame: int, resized_hw: tuple[int, int]) -> np.ndarray:
    """256x256 mask logits in the padded square frame -> boolean (H, W) mask."""
    square = cv2.resize(logits.astype(np.float32), (frame, frame), interpolation=cv2.INTER_LINEAR)
    crop = square[: resized_hw[0], : resized_hw[1]]
    full = cv2.resize(crop, (image_hw[1], image_hw[0]), interpolation=cv2.INTER_LINEAR)
    return full > 0.0


def encoder_input(image: np.ndarray, frame: int, *, truncate: bool = False) -> tuple[np.ndarray, tuple[int, int]]:
    """The encoder's input for an RGB frame (longest side to `frame`, SAM's normalisation, zero-padded
    square) and the resized (h, w) inside it."""
    h, w = image.shape[:2]
    nh, nw = longest_side_shape(h, w, frame, truncate=truncate)
    resized = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_LINEAR)
    return normalise_nchw(resized, PIXEL_MEAN, PIXEL_STD, pad_to=(frame, frame)), (nh, nw)


class SamSegmenter:
    def __init__(self, encoder: OrtSession, decoder: OrtSession, *, truncate_resize: bool = False, cache_frames: int = 2) -> None:
        self.encoder, self.decoder = encoder, decoder
        self.truncate_resize = truncate_resize
        self.cache_frames = cache_frames
        self.stats = SegmenterStats()
        self._cache: OrderedDict[str, tuple[np.ndarray, tuple[int, int]]] = OrderedDict()
        enc_in = encoder.inputs()
        self.encoder_input = encoder.input_names[0]
        shape = enc_in[self.encoder_input][1]
        self.frame = shape[-1] if isinstance(shape[-1], int) else PROMPT_FRAME
        dec = decoder.inputs()
        for required in ("image_embeddings", "point_coords", "point_labels"):
            if required not in dec:
                raise SamError(f"{decoder.path}: no {required!r} input (has {sorted(dec)})")
        self.decoder_inputs = dec
        outs = decoder.output_names
        if "masks" in outs:
            self.mask_output = "masks"
        elif "low_res_masks" in outs:
            self.mask_output = "low_res_masks"
        else:
            raise SamError(f"{decoder.path}: no 'masks' or 'low_res_masks' output (has {outs})")
        self._mask_idx = outs.index(self.mask_output)

    def frame_key(self, image: np.ndarray) -> str:
        return hashlib.blake2b(image.tobytes(), digest_size=16).hexdigest() + str(image.shape)

    def preprocess(self, image: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
        return encoder_input(image, self.frame, truncate=self.truncate_resize)

    def embeddings(self, image: np.ndarray, frame_key: str | None = None) -> np.ndarray:
        """The encoder's output for this frame, computed once per frame."""
        key = frame_key or self.frame_key(image)
        if key in self._cache:
            self.stats.cache_hits += 1
            self._cache.move_to_end(key)
            return self._cache[key][0]
        x, resized = self.preprocess(image)
        emb = self.encoder.run({self.encoder_input: x})[0]
        self.stats.encoder_runs += 1
        self._cache[key] = (emb, resized)
        while len(self._cache) > self.cache_frames:
            self._cache.popitem(last=False)
        return emb

    def box_prompt(self, box: Box, image_hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        h, w = image_hw
        nh, nw = longest_side_shape(h, w, PROMPT_FRAME, truncate=self.truncate_resize)
        x0, y0, x1, y1 = box
        coords = np.array([[[x0 * nw / w, y0 * nh / h], [x1 * nw / w, y1 * nh / h]]], np.float32)
        return coords, np.array([[2, 3]], np.float32)

    def decoder_feeds(self, embeddings: np.ndarray, box: Box, image_hw: tuple[int, int]) -> dict[str, np.ndarray]:
        """The decoder's inputs for one box prompt on a frame's embeddings (also its INT8 calibration)."""
        coords, labels = self.box_prompt(box, image_hw)
        feeds = {"image_embeddings": embeddings, "point_coords": coords, "point_labels": labels}
        if "mask_input" in self.decoder_inputs:
            feeds["mask_input"] = np.zeros((1, 1, 256, 256), np.float32)
        if "has_mask_input" in self.decoder_inputs:
            feeds["has_mask_input"] = np.zeros((1,), np.float32)
        if "orig_im_size" in self.decoder_inputs:
            feeds["orig_im_size"] = np.array(image_hw, np.float32)
        return feeds

    def segment(self, image: np.ndarray, boxes: Sequence[Box], frame_key: str | None = None) -> list[np.ndarray]:
        check_image(image)
        if not boxes:
            return []
        h, w = image.shape[:2]
        key = frame_key or self.frame_key(image)
        emb = self.embeddings(image, key)
        resized = self._cache[key][1]
        masks = []
        for box in boxes:
            out = self.decoder.run(self.decoder_feeds(emb, box, (h, w)))[self._mask_idx]
            self.stats.decoder_runs += 1
            # Box prompts use mask 0: the single-mask token (SamPredictor, multimask_output=False).
            logits = out[0, 0]
            if logits.shape == (h, w):
                masks.append(logits > 0.0)
            else:
                masks.append(upscale_low_res(logits, (h, w), self.frame, resized))
        return masks
