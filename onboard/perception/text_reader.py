"""Read names on facades: an image in, lines of text (and where they are) out.

Usage (what the flight loop calls)::

    reader = open_text_reader(load_config().inference)
    reads = reader.read(rgb)                              # [ReadText(text, confidence, box, quad)]
    seen = reader.sightings(rgb, intrinsics, pose, names,
                            ranger=FootprintRanger([b.footprint for b in m.buildings], [b.height for b in m.buildings]))
    locked = goal_sightings(seen, goal_description, cfg.text_goal_min_confidence)

Detection and recognition are PP-OCRv5 through Aerie's own ONNX Runtime
sessions (`text_detection`, `text_recognition`); names are matched with the
instruction reader's rules (`name_matching`); ranges come from the vehicle's
altitude or the map (`text_range`).

A sign's name is often set on two lines, or its words fall into two boxes;
`join_lines` offers each pair of neighbouring lines read together as one more
candidate, so "ALEPA" over "KALLIO" can still spell Alepa Kallio. The parts
stay candidates too; alone they name a chain or a district, which the goal
rule refuses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.name_matching import clean, match_name
from onboard.perception.text_detection import DbTextDetector
from onboard.perception.text_range import FootprintRanger, locate_text
from onboard.perception.text_recognition import CtcTextRecognizer, crop_line, load_charset
from onboard.perception.types import ReadText, TextSighting


@dataclass
class TextReader:
    detector: DbTextDetector
    recognizer: CtcTextRecognizer
    min_confidence: float = 0.5
    sign_height_m: float = 3.0
    max_range_m: float = 400.0
    timings_ms: dict[str, float] = field(default_factory=dict)  # of the last read: detect, recognise, total

    def read(self, image: np.ndarray) -> list[ReadText]:
        """Lines read in `image`, boxes in its pixels.

        Finding text is paid per pixel and reading per line, so they run at two scales: the detector
        sees a copy scaled to its ``max_side`` and each box it finds is cut from `image` itself. A
        1920x1080 frame found at 1152 reads a shop sign 6 px tall at half resolution with 12 px letters
        (PP-OCR needs about 10) for the price of a small crop (bench/results/2026-11-26/camera_crops).
        """
        t0 = time.perf_counter()
        boxes = self.detector.detect(image)
        t1 = time.perf_counter()
        lines = self.recognizer.read([crop_line(image, b.quad) for b in boxes]) if boxes else []
        t2 = time.perf_counter()
        self.timings_ms = {"detect": (t1 - t0) * 1e3, "recognise": (t2 - t1) * 1e3, "total": (t2 - t0) * 1e3}
        return [ReadText(line.text, line.confidence, b.box, tuple(map(tuple, b.quad.tolist())))
                for b, line in zip(boxes, lines) if line.confidence >= self.min_confidence and clean(line.text)]

    def sightings(
        self,
        image: np.ndarray,
        intr: CameraIntrinsics,
        pose: CameraPose,
        names: Iterable[str] = (),
        *,
        ranger: FootprintRanger | None = None,
    ) -> list[TextSighting]:
        """Every line read (and pair of neighbouring lines), named, with bearing and range."""
        return to_sightings(self.read(image), intr, pose, names, sign_height_m=self.sign_height_m,
                            ranger=ranger, max_range_m=self.max_range_m)


def to_sightings(
    reads: list[ReadText],
    intr: CameraIntrinsics,
    pose: CameraPose,
    names: Iterable[str] = (),
    *,
    sign_height_m: float = 3.0,
    ranger: FootprintRanger | None = None,
    max_range_m: float = 400.0,
) -> list[TextSighting]:
    names = list(names)
    out = []
    for r in reads + join_lines(reads):
        text = clean(r.text)
        m = match_name(text, r.confidence, names)
        bearing, rng, method = locate_text(r.box, intr, pose, sign_height_m=sign_height_m, ranger=ranger,
                                           max_range_m=max_range_m)
        exact = m is not None and m.slips == 0
        out.append(TextSighting(
            name=m.name if exact else text, bearing_deg=bearing, range_m=rng, range_method=method,
            confidence=m.confidence if m else r.confidence, box=r.box, text=text,
            close_to=m.name if m and not exact else None, slips=m.slips if m else 0))
    return out


def join_lines(reads: list[ReadText]) -> list[ReadText]:
    """Pairs of lines of about one letter height that sit side by side or one above the other, read as one."""
    out = []
    for i, a in enumerate(reads):
        for b in reads[i + 1:]:
            a, b2 = (a, b) if (a.box[1], a.box[0]) <= (b.box[1], b.box[0]) else (b, a)
            ha, hb = a.box[3] - a.box[1], b2.box[3] - b2.box[1]
            h = min(ha, hb)
            if h <= 0 or max(ha, hb) > 1.4 * h:
                continue
            same_row = abs((a.box[1] + a.box[3]) - (b2.box[1] + b2.box[3])) / 2 < 0.5 * h
            first, second = (a, b2) if a.box[0] <= b2.box[0] else (b2, a)
            side_by_side = same_row and 0 <= second.box[0] - first.box[2] < 1.5 * h
            overlap = min(a.box[2], b2.box[2]) - max(a.box[0], b2.box[0])
            stacked = not same_row and 0 <= b2.box[1] - a.box[3] < 0.8 * h and \
                overlap > 0.5 * min(a.box[2] - a.box[0], b2.box[2] - b2.box[0])
            if side_by_side or stacked:
                x, y = (first, second) if side_by_side else (a, b2)
                box = (min(x.box[0], y.box[0]), min(x.box[1], y.box[1]), max(x.box[2], y.box[2]), max(x.box[3], y.box[3]))
                quad = ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))
                out.append(ReadText(f"{clean(x.text)} {clean(y.text)}", min(x.confidence, y.confidence), box, quad))
    return out


def open_text_reader(cfg, directory: Path | None = None, manifest=None) -> TextReader:
    """The reader from the manifest's verified files and the ``inference.text_*`` settings.

    ``cfg`` is an :class:`~onboard.inference.settings.InferenceConfig`. A missing
    or corrupted model or charset raises :class:`ModelFileError` naming the file.
    """
    from dataclasses import replace

    from onboard.inference.manifest import load_manifest, model_dir
    from onboard.inference.ort_session import open_model

    manifest = manifest or load_manifest(cfg.manifest or None)
    directory = directory or model_dir(cfg.model_dir)
    if cfg.text_threads:
        cfg = replace(cfg, intra_op_threads=cfg.text_threads)
    det_spec, rec_spec = manifest.get(cfg.text_det_model), manifest.get(cfg.text_rec_model)
    detector = DbTextDetector(open_model(det_spec, directory, cfg), max_side=cfg.text_det_max_side,
                              threshold=cfg.text_det_threshold, box_threshold=cfg.text_box_threshold,
                              unclip_ratio=cfg.text_unclip_ratio, min_height_px=cfg.text_min_height_px)
    charset_path = _verified_companion(rec_spec, "charset", directory)
    rec_session = open_model(rec_spec, directory, cfg)
    recognizer = CtcTextRecognizer(rec_session, load_charset(charset_path))
    return TextReader(detector, recognizer, min_confidence=cfg.text_min_confidence,
                      sign_height_m=cfg.text_sign_height_m, max_range_m=cfg.text_max_range_m)


def _verified_companion(spec, key: str, directory: Path) -> Path:
    """The companion file, refused (named) when it is absent or differs from the pinned sha256."""
    from onboard.inference.manifest import ModelFileError, sha256_file

    path = directory / spec.companions[key]
    if not path.exists():
        raise ModelFileError(f"{key} file {path} ({spec.name}) is absent: run `aerie models prepare`")
    pinned = (spec.source.get("companion_members") or {}).get(key, {}).get("sha256")
    if pinned and (actual := sha256_file(path)) != pinned:
        raise ModelFileError(f"{key} file {path} ({spec.name}) is corrupted or not the expected file: "
                             f"sha256 {actual} != expected {pinned}")
    return path
