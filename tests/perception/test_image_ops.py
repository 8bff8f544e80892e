import numpy as np

from onboard.perception.image_ops import normalise_nchw


def test_matches_the_reference_formula():
    rgb = np.random.default_rng(0).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    ref = ((rgb.astype(np.float32) / 255 - mean) / std).transpose(2, 0, 1)[None]
    assert np.allclose(normalise_nchw(rgb, mean, std, scale=1 / 255), ref, atol=1e-5)


def test_pads_bottom_right_with_zeros():
    rgb = np.full((2, 3, 3), 200, np.uint8)
    out = normalise_nchw(rgb, np.zeros(3), np.ones(3), pad_to=(4, 4))
    assert out.shape == (1, 3, 4, 4) and (out[0, :, :2, :3] == 200).all() and out[0, :, 2:, :].sum() == 0 and out[0, :, :, 3:].sum() == 0
