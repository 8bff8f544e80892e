"""The reading part of ``aerie bench perception``: what reading names costs, and how often it is right.

`evaluate_reading` takes frames (image, camera, pose, the truth of every sign:
name, bearing, distance, box) from any source: `sign_frames` today, the
world's renderer once it draws signage. Per frame it runs the reader exactly
as the flight loop would (`TextReader.sightings`, then `goal_sightings`) and
scores:

* time per view: detection, recognition, total (p50/p99 ms, wall clock), and
  the process's CPU time per view (on a shared machine the wall clock counts
  other programs' turns; with one thread the CPU time is the idle-core figure);
* ``name_recall``: truths read exactly (the known name, within 5 degrees of
  its bearing), over the signs that are resolvable (lettering at least
  `RESOLVABLE_PX` tall, at least 90 % unhidden), also by distance band;
* ``name_precision``: exact reads of a known name that are a sign of that name
  in view (within 5 degrees of its bearing), over all exact reads of known names;
* ``goal_name_precision``: goal locks on the goal's own sign over all goal
  locks; ``false_goal_locks``: locks in frames where the goal is not to be
  seen, or on another sign;
* bearing and range error of correct reads, range by the method that gave it.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Iterable

import numpy as np

from onboard.perception.name_matching import goal_sightings

# Lettering (its ink, accents and descenders included) this tall in the frame is resolvable: about the
# least PP-OCR reads once blurred and JPEG-compressed (SignTruth.letter_px).
RESOLVABLE_PX = 10.0
MIN_VISIBLE = 0.9
BEARING_MATCH_DEG = 5.0
BANDS_M = ((0, 30), (30, 60), (60, 90), (90, 150))
# Lettering height bands, as multiples of the resolvable size: where reading gives out.
LETTER_BANDS = ((1.0, 1.6), (1.6, 2.0), (2.0, 4.0), (4.0, float("inf")))


def goal_for(name: str, gazetteer: list[str]):
    from onboard.agent.goal_description import parse_goal_description

    return parse_goal_description(f"Find {name}. It is about 200 m north of Kiasma.", gazetteer)


def _angle(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def evaluate_reading(reader, frames: Iterable, names: list[str], *, goal_min_confidence: float = 0.8,
                     gazetteer: list[str] | None = None, resolvable_px: float = RESOLVABLE_PX,
                     groups: dict[str, Callable[[object], bool]] | None = None, ranger=None,
                     walls=None) -> dict[str, object]:
    """`resolvable_px`: the least lettering scored, in the truth's pixels (`SignTruth.letter_px`); a bench that
    compares frame sizes gives its truth in one frame size so every setting is scored on the same signs.
    `groups`: name -> which scored signs belong to it, for a recall per group (a cause of misses, told apart).
    `ranger` (`FootprintRanger`): range reads with the map's footprints, as a vehicle carrying a map does;
    `walls` (the same): the map's walls for the reader's upright reading of walls seen aslant alone."""
    groups = groups or {}
    gazetteer = gazetteer or ["Kiasma"]
    goals: dict[str, object] = {}
    det, rec, rect, tot, cpu = [], [], [], [], []
    resolvable = found = 0
    band_total = {b: 0 for b in BANDS_M}
    band_found = {b: 0 for b in BANDS_M}
    letter_total = {b: 0 for b in LETTER_BANDS}
    letter_found = {b: 0 for b in LETTER_BANDS}
    group_total = {g: 0 for g in groups}
    group_found = {g: 0 for g in groups}
    bearing_err, range_err = [], {}
    locks = good_locks = 0
    known = set(names)
    exact_reads = true_reads = 0
    false_locks = []
    frames_n = 0
    for frame in frames:
        frames_n += 1
        c0 = time.process_time()
        extra = {k: v for k, v in (("ranger", ranger), ("walls", walls)) if v is not None}
        seen = reader.sightings(frame.image, frame.intr, frame.pose, names, **extra)
        cpu.append((time.process_time() - c0) * 1e3)
        det.append(reader.timings_ms["detect"])
        rec.append(reader.timings_ms["recognise"])
        rect.append(reader.timings_ms.get("rectify", 0.0))
        tot.append(reader.timings_ms["total"])
        for s in seen:
            if s.slips == 0 and s.name in known:
                exact_reads += 1
                true_reads += any(t.name == s.name and t.visible > 0 and _angle(s.bearing_deg, t.bearing_deg)
                                  <= BEARING_MATCH_DEG for t in frame.truths)
        for t in frame.truths:
            ok = t.visible >= MIN_VISIBLE and t.letter_px >= resolvable_px
            hits = [s for s in seen if s.name == t.name and s.slips == 0 and _angle(s.bearing_deg, t.bearing_deg) <= BEARING_MATCH_DEG]
            if ok:
                resolvable += 1
                band = next((b for b in BANDS_M if b[0] <= t.distance_m < b[1]), None)
                size = next(b for b in LETTER_BANDS if b[0] <= t.letter_px / resolvable_px < b[1])
                letter_total[size] += 1
                for g, member in groups.items():
                    if member(t):
                        group_total[g] += 1
                        group_found[g] += bool(hits)
                if band:
                    band_total[band] += 1
                if hits:
                    found += 1
                    letter_found[size] += 1
                    if band:
                        band_found[band] += 1
            if hits:
                best = min(hits, key=lambda s: _angle(s.bearing_deg, t.bearing_deg))
                bearing_err.append(_angle(best.bearing_deg, t.bearing_deg))
                if best.range_m is not None:
                    range_err.setdefault(best.range_method, []).append(abs(best.range_m - t.distance_m))
        if frame.goal:
            goal = goals.setdefault(frame.goal, goal_for(frame.goal, gazetteer))
            goal_truths = [t for t in frame.truths if t.name == frame.goal and t.visible > 0]
            for s in goal_sightings(seen, goal, goal_min_confidence):
                locks += 1
                if any(_angle(s.bearing_deg, t.bearing_deg) <= BEARING_MATCH_DEG for t in goal_truths):
                    good_locks += 1
                else:
                    false_locks.append({"goal": frame.goal, "read": s.text, "in_frame": [t.name for t in frame.truths]})
    p = lambda xs, q: float(np.percentile(xs, q)) if xs else None  # noqa: E731
    out: dict[str, object] = {
        "text_frames": frames_n,
        "text_p50_ms_per_view": p(tot, 50),
        "text_p99_ms_per_view": p(tot, 99),
        # CPU time of the whole process per view: with one thread, what the wall time is on an idle core
        "text_cpu_p50_ms_per_view": p(cpu, 50),
        "text_detect_p50_ms": p(det, 50),
        "text_recognise_p50_ms": p(rec, 50),
        # walls seen aslant warped upright, found and read (0 when the reader does not)
        "text_rectify_p50_ms": p(rect, 50),
        "name_recall": found / resolvable if resolvable else None,
        "name_resolvable_signs": resolvable,
        "name_recall_by_band_m": {f"{lo}-{hi}": (band_found[(lo, hi)] / band_total[(lo, hi)] if band_total[(lo, hi)] else None,
                                                 band_total[(lo, hi)]) for lo, hi in BANDS_M},
        # lettering height in the truth's pixels: recall, signs
        "name_recall_by_letter_px": {f"{lo * resolvable_px:g}-{hi * resolvable_px:g}": (
            letter_found[(lo, hi)] / letter_total[(lo, hi)] if letter_total[(lo, hi)] else None, letter_total[(lo, hi)])
            for lo, hi in LETTER_BANDS},
        "name_recall_by_group": {g: (group_found[g] / group_total[g] if group_total[g] else None, group_total[g])
                                 for g in groups},
        # exact reads of a known name that name a sign in view at that bearing, over all of them
        "name_precision": true_reads / exact_reads if exact_reads else None,
        "name_exact_reads": exact_reads,
        "goal_locks": locks,
        "goal_name_precision": good_locks / locks if locks else None,
        "false_goal_locks": len(false_locks),
        "false_goal_lock_examples": false_locks[:5],
        "bearing_error_p50_deg": p(bearing_err, 50),
        "bearing_error_p90_deg": p(bearing_err, 90),
    }
    for method, errs in sorted(range_err.items()):
        out[f"range_error_p50_m_{method}"] = statistics.median(errs)
        out[f"range_error_p90_m_{method}"] = p(errs, 90)
        out[f"range_reads_{method}"] = len(errs)
    return out


def bench_reading(cfg, n_per_task: int = 8, threads: tuple[int, ...] = (1, 2)) -> dict[str, object]:
    """The reader from the manifest on `sign_frames.bench_frames`, once per thread count."""
    from dataclasses import replace

    from sim.sign_frames import all_names, bench_frames
    from onboard.perception.text_reader import open_text_reader

    frames = bench_frames(n_per_task)
    names = all_names()
    out: dict[str, object] = {"text_frame_size": list(frames[0].image.shape[1::-1]), "text_det_max_side": cfg.text_det_max_side,
                              "text_frames_source": "sim/sign_frames.py (synthetic, PIL lettering warped onto walls)"}
    for k, n in enumerate(threads):
        reader = open_text_reader(replace(cfg, text_threads=n, providers=("CPUExecutionProvider",)))
        reader.read(frames[0].image)  # warm-up
        res = evaluate_reading(reader, frames, names, goal_min_confidence=cfg.text_goal_min_confidence)
        if k == 0:
            out.update(res)
        for key in ("text_p50_ms_per_view", "text_p99_ms_per_view", "text_cpu_p50_ms_per_view", "text_detect_p50_ms",
                    "text_recognise_p50_ms"):
            out[f"{key}_{n}thread"] = res[key]
    return out
