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

Given the camera and the map's walls (a `FootprintRanger`), the reader also
reads the walls seen aslant upright (`facade_views`): each wall's sign band is
warped to face the camera, text is found there, joined there, and each line is
cut from the frame with the wall's own homography at its true width, so the
recogniser sees it square-on. Lines read both ways are kept once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.facade_views import RectifySettings, facade_pieces
from onboard.perception.name_matching import clean, match_name
from onboard.perception.text_detection import DbTextDetector
from onboard.perception.text_range import FootprintRanger, locate_text
from onboard.perception.text_recognition import HEIGHT, CtcTextRecognizer, crop_line, load_charset
from onboard.perception.types import ReadText, TextSighting


@dataclass
class TextReader:
    detector: DbTextDetector
    recognizer: CtcTextRecognizer
    min_confidence: float = 0.5
    sign_height_m: float = 3.0
    max_range_m: float = 400.0
    rectify: RectifySettings | None = None  # None: the frame alone, walls seen aslant as they are
    timings_ms: dict[str, float] = field(default_factory=dict)  # of the last read: detect, recognise, rectify, total

    def read(self, image: np.ndarray, intr: CameraIntrinsics | None = None, pose: CameraPose | None = None,
             walls: FootprintRanger | None = None) -> list[ReadText]:
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
        reads = [ReadText(line.text, line.confidence, b.box, tuple(map(tuple, b.quad.tolist())))
                 for b, line in zip(boxes, lines) if line.confidence >= self.min_confidence and clean(line.text)]
        t3 = t2
        if self.rectify is not None and intr is not None and pose is not None and walls is not None:
            reads += _new(self._read_facades(image, intr, pose, walls), reads)
            t3 = time.perf_counter()
        # "rectify" is 0 exactly when no wall was looked for (no map, no pose, or the setting off)
        self.timings_ms = {"detect": (t1 - t0) * 1e3, "recognise": (t2 - t1) * 1e3, "rectify": (t3 - t2) * 1e3,
                           "total": (t3 - t0) * 1e3}
        return reads

    def _read_facades(self, image: np.ndarray, intr: CameraIntrinsics, pose: CameraPose,
                      walls: FootprintRanger) -> list[ReadText]:
        """Lines on the walls seen aslant, each found on its wall's upright picture and read from the frame."""
        import cv2

        det_scale = min(1.0, self.detector.max_side / max(image.shape[:2]))
        found = []  # (piece, the line's quad in the picture)
        for piece in facade_pieces(walls, intr, pose, self.rectify, det_scale):
            pic = cv2.warpPerspective(image, piece.homography, piece.size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
            side = max(32, int(round(max(piece.size) * det_scale)))
            found += [(piece, b.quad) for b in self.detector.detect(pic, side)]
        crops, quads = [], []
        for piece, q in found:
            w, h = float(np.linalg.norm(q[0] - q[1])), float(np.linalg.norm(q[0] - q[3]))
            if h <= 0 or h >= 1.5 * w:  # upright text is no shop front's: not read here
                continue
            qf = piece.to_frame(q.astype(np.float64))
            crops.append(crop_line(image, qf, (max(1, int(round(HEIGHT * w / h))), HEIGHT)))
            quads.append((piece, q, qf))
        lines = self.recognizer.read(crops) if crops else []
        by_piece: dict[int, list[tuple[ReadText, ReadText]]] = {}
        for (piece, q, qf), line in zip(quads, lines):
            if line.confidence < self.min_confidence or not clean(line.text):
                continue
            in_pic = ReadText(line.text, line.confidence, _box(q), tuple(map(tuple, q.tolist())))
            by_piece.setdefault(id(piece), []).append((in_pic, _in_frame(line.text, line.confidence, qf, image)))
        out = []
        pieces = {id(p): p for p, _ in found}
        for key, pairs in by_piece.items():
            out += [f for _, f in pairs]
            for j in join_lines([p for p, _ in pairs]):  # joined on the upright picture, placed in the frame
                qf = pieces[key].to_frame(np.array(j.quad, np.float64))
                out.append(_in_frame(j.text, j.confidence, qf, image))
        return out

    def sightings(
        self,
        image: np.ndarray,
        intr: CameraIntrinsics,
        pose: CameraPose,
        names: Iterable[str] = (),
        *,
        ranger: FootprintRanger | None = None,
        walls: FootprintRanger | None = None,
    ) -> list[TextSighting]:
        """Every line read (and pair of neighbouring lines), named, with bearing and range.

        `ranger`: the map's walls, for ranges and for reading walls seen aslant upright; `walls`: for the
        latter alone (default: `ranger`)."""
        walls = walls if walls is not None else ranger
        return to_sightings(self.read(image, intr, pose, walls), intr, pose, names, sign_height_m=self.sign_height_m,
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


def _box(q: np.ndarray) -> tuple[float, float, float, float]:
    return float(q[:, 0].min()), float(q[:, 1].min()), float(q[:, 0].max()), float(q[:, 1].max())


def _in_frame(text: str, confidence: float, qf: np.ndarray, image: np.ndarray) -> ReadText:
    """A line placed by its corners in the frame (its box clipped to the frame)."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = _box(qf)
    box = (max(0.0, x0), max(0.0, y0), min(float(w - 1), x1), min(float(h - 1), y1))
    return ReadText(text, confidence, box, tuple(map(tuple, qf.tolist())))


def _new(extra: list[ReadText], reads: list[ReadText]) -> list[ReadText]:
    """`extra` less the lines `reads` already has: the same text where a read of it already is."""
    def overlaps(a, b) -> bool:
        return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])

    return [e for e in extra if not any(clean(r.text) == clean(e.text) and overlaps(r.box, e.box) for r in reads)]


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
                      sign_height_m=cfg.text_sign_height_m, max_range_m=cfg.text_max_range_m,
                      rectify=rectify_settings(cfg))


def rectify_settings(cfg) -> RectifySettings | None:
    """The ``inference.text_rectify_*`` settings; None when rectifying is off."""
    if not cfg.text_rectify:
        return None
    return RectifySettings(min_angle_deg=cfg.text_rectify_min_angle_deg, max_range_m=cfg.text_rectify_max_range_m,
                           band_m=(cfg.text_rectify_band_low_m, cfg.text_rectify_band_high_m),
                           max_pixels=cfg.text_rectify_max_pixels)


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
