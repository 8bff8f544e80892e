"""What a real camera does to a clean rendering: defocus, sensor noise, JPEG.

A text reader scored on perfectly sharp, noiseless, losslessly stored
frames would read farther in simulation than through a drone's lens and
video encoder; these three effects take the edge off the same way. The noise
is deterministic per view (a crop of one fixed noise field at an offset
drawn from the view's seed), so a frame re-rendered from the same pose is
identical and cheap: no fresh megapixel of Gaussian samples per frame.
"""

from __future__ import annotations

import functools

import numpy as np

_PAD = 64  # the noise field is this much larger than the frame on each axis: room for the offsets


@functools.lru_cache(maxsize=4)
def _noise_field(height: int, width: int, sigma: float) -> np.ndarray:
    rng = np.random.default_rng(20240611)
    return np.round(rng.standard_normal((height + _PAD, width + _PAD, 3), dtype=np.float32) * sigma).astype(np.int16)


def apply_camera(img: np.ndarray, *, blur_sigma_px: float, noise_sigma: float, jpeg_quality: int,
                 seed: int) -> np.ndarray:
    """`img` (BGR uint8) as the camera would deliver it: blurred, noisy, JPEG-compressed (0 turns each off)."""
    import cv2

    out = img
    if blur_sigma_px > 0:
        out = cv2.GaussianBlur(out, (0, 0), blur_sigma_px)
    if noise_sigma > 0:
        h, w = out.shape[:2]
        field = _noise_field(h, w, float(noise_sigma))
        dy, dx = seed % _PAD, (seed // _PAD) % _PAD
        out = np.clip(out.astype(np.int16) + field[dy:dy + h, dx:dx + w], 0, 255).astype(np.uint8)
    if 0 < jpeg_quality < 100:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out
