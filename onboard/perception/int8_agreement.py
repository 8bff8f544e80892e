"""Whether an INT8 detector still finds what its FP32 original finds, on held-out photos.

`aerie models quantize` checks this after quantizing the person detector, and
`aerie bench perception` reports it: a quantized model that is faster but sees
other boxes is not the same detector. The photos (`tests/perception/fixtures`)
were never used to calibrate; each is also compared mirrored, cropped, darker
and brighter, for more detections to compare.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
HELD_OUT = REPO / "tests" / "perception" / "fixtures"


def variants(image: np.ndarray) -> list[np.ndarray]:
    """The image, mirrored, cropped and darker/brighter: more detections to compare."""
    h, w = image.shape[:2]
    out = [image, image[:, ::-1].copy(), image[h // 8 :, : w - w // 8].copy(), image[: h - h // 8, w // 8 :].copy()]
    out += [np.clip(image.astype(np.int16) + d, 0, 255).astype(np.uint8) for d in (-40, 40)]
    return out


def held_out_images() -> list[np.ndarray]:
    import cv2

    images = []
    for name in ("astronaut.png", "coffee.png"):
        p = HELD_OUT / name
        if p.exists():
            images += variants(cv2.cvtColor(cv2.imread(str(p)), cv2.COLOR_BGR2RGB))
    if not images:
        rng = np.random.default_rng(0)
        images = [rng.integers(0, 255, (300, 300, 3), dtype=np.uint8)]
    return images


def ssdlite_agreement(fp32_path: Path, int8_path: Path, threshold: float = 0.3):
    from onboard.inference.ort_session import OrtSession
    from onboard.inference.quantize import detection_agreement
    from onboard.perception.ssdlite_detector import SsdliteDetector

    cpu = ["CPUExecutionProvider"]
    a = SsdliteDetector(OrtSession(fp32_path, providers=cpu), score_threshold=threshold)
    b = SsdliteDetector(OrtSession(int8_path, providers=cpu), score_threshold=threshold)
    images = held_out_images()
    return detection_agreement([a.detect(im) for im in images], [b.detect(im) for im in images])
