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
import pytest

from onboard.inference.ort_session import OrtSession
from sim.standin_models import build_sam_decoder_standin, build_sam_encoder_standin
from onboard.perception.sam_segmenter import SamError, SamSegmenter, longest_side_shape, upscale_low_res


def _iou(mask, box):
    ref = np.zeros_like(mask)
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    ref[y0:y1, x0:x1] = True
    return (mask & ref).sum() / (mask | ref).sum()


@pytest.fixture(params=[True, False], ids=["segment-anything-export", "nanosam-low-res-export"])
def segmenter(request, tmp_path):
    enc = OrtSession(build_sam_encoder_standin(tmp_path / "enc.onnx"), providers=["CPUExecutionProvider"])
    dec = OrtSession(build_sam_decoder_standin(tmp_path / "dec.onnx", official=request.param), providers=["CPUExecutionProvider"])
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
    enc = OrtSession(build_sam_encoder_standin(tmp_path / "enc.onnx"))
    with pytest.raises(SamError, match="no 'image_embeddings' input"):
        SamSegmenter(enc, enc)
