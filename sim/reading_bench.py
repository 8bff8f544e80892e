"""`aerie bench reading`: reading shop signs on the world's rendered views, per camera setting, same views.

``aerie bench perception`` scores the reader on synthetic walls (`sign_frames`);
this scores it where the agent flies: views the world's renderer draws from
waypoints in front of shop signs, the renderer's truth as the key. Each view is
drawn once per frame size from the same pose, so settings differ only in the
pixels the camera delivers and in how the reader spends them:

* ``--setting 960x540@960``: a 960x540 camera, detection and recognition on it;
* ``--setting 1920x1080@1152``: the sensor's full frame, detection on a copy
  scaled to 1152 px wide, each line recognised from a crop of the full frame.

Views are chosen by a rule fixed in advance, never by whether they read well:
every `stride`-th shop sign (in the world's sign order) that a waypoint 15-90 m in
front of its facade sees, one view per sign, aimed at it from the nearest such
waypoint at cruise altitude. Two splits by that rule: ``dev`` starts at the first
shop sign (the 40 views every setting so far was chosen on), ``test`` at the fourth
(signs 3, 10, 17, ...) and skips the waypoints ``dev`` views from, so no view is
in both (signs in the background may be). Scored (`evaluate_reading`): every sign in a view
whose lettering is at least ``resolvable_px`` tall in the sensor's frame
(1920 px wide) and 90 % unhidden, so every setting is scored on the same signs.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace

import numpy as np

SENSOR = (1920, 1080)
# Lettering this tall in the sensor's frame is scored: 5 px at half resolution, below what any setting reads.
RESOLVABLE_SENSOR_PX = 10.0


@dataclass(frozen=True)
class Setting:
    """A camera frame size and the detector's input side (`inference.text_det_max_side`).

    ``render`` (``1920x1080>960x540@960``): the view is drawn at that size and scaled down to the frame
    size before reading (the sensor's picture at half resolution, against the sensor's picture read
    in crops); otherwise it is drawn at the frame size.
    """

    width: int
    height: int
    det_max_side: int
    render: tuple[int, int] | None = None

    @classmethod
    def parse(cls, text: str) -> "Setting":
        size, _, side = text.partition("@")
        src, _, size = size.rpartition(">")
        w, _, h = size.partition("x")
        render = tuple(int(v) for v in src.split("x")) if src else None
        return cls(int(w), int(h), int(side or max(int(w), int(h))), render)

    def __str__(self) -> str:
        src = f"{self.render[0]}x{self.render[1]}>" if self.render else ""
        return f"{src}{self.width}x{self.height}@{self.det_max_side}"


@dataclass(frozen=True)
class Truth:
    """A sign as `evaluate_reading` scores it (lettering height in the sensor's pixels)."""

    name: str
    bearing_deg: float
    distance_m: float
    visible: float
    letter_px: float
    squash: float  # mean letter advance over letter height in the frame: ~0.7 square-on, less seen aslant


@dataclass(frozen=True)
class View:
    node: int
    heading_deg: float
    goal: str


SPLITS = {"dev": 0, "test": 3}  # the first sign of the split's stride


def choose_views(world, renderer, n: int, stride: int = 7, split: str = "dev") -> list[View]:
    """One view per `stride`-th shop sign that a waypoint 15-90 m in front of it sees: the rule, not the reading.

    ``test`` never views from a waypoint that ``dev`` views from."""
    from onboard.map.compass import bearing_deg

    if split not in SPLITS:
        raise ValueError(f"split {split!r} is none of {sorted(SPLITS)}")
    taken = {v.node for v in choose_views(world, renderer, n, stride, "dev")} if split != "dev" else set()
    g = world.graph
    out: list[View] = []
    for sign in renderer.signs[SPLITS[split]::stride]:
        if sign.kind != "poi":
            continue
        d = np.hypot(*(g.xy - sign.centre[:2]).T)
        front = [k for k in np.argsort(d)[:8] if 15.0 <= d[k] <= 90.0 and int(k) not in taken
                 and float(np.dot(g.xy[k] - sign.centre[:2], sign.normal)) >= 0.5 * d[k]]
        if not front:
            continue
        v = sign.centre[:2] - g.xy[front[0]]
        out.append(View(int(front[0]), round(bearing_deg(float(v[0]), float(v[1])), 1), sign.name))
        if len(out) >= n:
            break
    return out


# Letters at least this wide for their height count as facing the camera (a facade seen within ~65 degrees of square-on).
FACING_SQUASH = 0.3
# Seen aslant, letters this far apart across the frame (squash x letter height, px) or more: what is left of a
# letter's width for any reader, upright or not (a sign seen almost edge-on keeps a pixel a letter or less).
ASLANT_ADVANCE_PX = 3.0
GROUPS = {f"facing (squash >= {FACING_SQUASH})": lambda t: t.squash >= FACING_SQUASH,
          f"aslant (squash < {FACING_SQUASH})": lambda t: t.squash < FACING_SQUASH,
          f"aslant, letters >= {ASLANT_ADVANCE_PX:g} px apart": lambda t: (t.squash < FACING_SQUASH
                                                                           and t.squash * t.letter_px >= ASLANT_ADVANCE_PX)}


def frames_for(world, views: list[View], width: int, height: int, cfg_sup,
               render: tuple[int, int] | None = None) -> tuple[list, list[float]]:
    """The views drawn at `render` (default `width` x `height`), as `width` x `height` RGB `SignFrame`s, the truth
    (`Truth`) from the sensor's frame; and ms per render."""
    import time

    import cv2

    from sim.sign_frames import SignFrame
    from onboard.perception.camera_model import CameraIntrinsics, CameraPose
    from sim.world.render import Camera, ViewRenderer

    rw, rh = render or (width, height)
    cam = replace(Camera.from_config(cfg_sup), width=rw, height=rh)
    rnd = ViewRenderer(world, cam)
    truth_rnd = rnd if (rw, rh) == SENSOR else ViewRenderer(world, replace(cam, width=SENSOR[0], height=SENSOR[1]))
    intr = CameraIntrinsics.from_hfov(width, height, cam.fov_deg)
    frames, ms = [], []
    for v in views:
        t0 = time.perf_counter()
        img, truths = rnd.render_view(v.node, v.heading_deg)
        ms.append((time.perf_counter() - t0) * 1e3)
        if (rw, rh) != (width, height):
            img = cv2.resize(img, (width, height), interpolation=cv2.INTER_AREA)
        if truth_rnd is not rnd:
            truths = truth_rnd.render_view(v.node, v.heading_deg)[1]
        xy = world.graph.xy[v.node]
        pose = CameraPose(north=float(xy[1]), east=float(xy[0]), down=-world.cruise_alt, yaw_deg=v.heading_deg,
                          pitch_deg=cam.pitch_deg)
        frames.append(SignFrame(cv2.cvtColor(img, cv2.COLOR_BGR2RGB), intr, pose,
                            tuple(Truth(t.name, t.bearing_deg, t.distance_m, t.visible_fraction, t.letter_px, t.squash)
                                  for t in truths),
                            v.goal))
    return frames, ms


def bench_setting(world, views: list[View], setting: Setting, cfg, use_map: bool = False,
                  threads: int = 1, rectify: bool | None = None) -> dict[str, object]:
    """Render the views for one setting and score the reader on them."""
    from sim.reading_scores import evaluate_reading
    from onboard.perception.text_reader import open_text_reader

    frames, render_ms = frames_for(world, views, setting.width, setting.height, cfg.supervisor, setting.render)
    inf = replace(cfg.inference, text_det_max_side=setting.det_max_side, text_threads=threads,
                  providers=("CPUExecutionProvider",), **({} if rectify is None else {"text_rectify": rectify}))
    reader = open_text_reader(inf)
    reader.read(frames[0].image)  # warm-up
    names = sorted({t.name for f in frames for t in f.truths} | {lm.name for lm in world.landmarks})
    res = evaluate_reading(reader, frames, names, goal_min_confidence=cfg.inference.text_goal_min_confidence,
                           gazetteer=[lm.name for lm in world.landmarks], resolvable_px=RESOLVABLE_SENSOR_PX,
                           groups=GROUPS, ranger=_ranger(world) if use_map else None,
                           walls=_ranger(world) if reader.rectify is not None else None)
    groups = list(GROUPS)
    return {"setting": str(setting), "frame": [setting.width, setting.height], "text_det_max_side": setting.det_max_side,
            "rectify": reader.rectify is not None,
            # the two figures: signs facing the camera and signs seen aslant (FACING_SQUASH apart)
            "name_recall_facing": res["name_recall_by_group"][groups[0]][0],
            "name_recall_aslant": res["name_recall_by_group"][groups[1]][0],
            "render_ms_per_view_p50": float(np.percentile(render_ms, 50)), **res}


def _ranger(world):
    from onboard.perception.text_range import FootprintRanger

    return FootprintRanger([b.footprint for b in world.city.buildings], [b.height for b in world.city.buildings])


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie bench reading", description=__doc__.split("\n")[0])
    p.add_argument("--setting", action="append", default=[],
                   help="[RWxRH>]WxH@DET: frame size (drawn at RWxRH and scaled down to it) and text_det_max_side (repeatable; default 960x540@960 and 1920x1080@1152)")
    p.add_argument("--views", type=int, default=40, help="views (one per chosen shop sign)")
    p.add_argument("--split", choices=sorted(SPLITS), default="dev",
                   help="dev: the views every setting was chosen on; test: held out (other signs, other waypoints)")
    p.add_argument("--rectify", choices=("on", "off"),
                   help="read walls seen aslant upright with the map's footprints (default: inference.text_rectify)")
    p.add_argument("--config", help="config file (supervisor.camera_*, world_camera, inference.text_*)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--map", action="store_true", help="range the reads with the onboard map's footprints")
    p.add_argument("--threads", type=int, default=1,
                   help="ONNX Runtime threads of the reader (default 1: its CPU time is then the idle-core figure)")
    p.add_argument("--goals", metavar="TASKS",
                   help="instead: for each task of this file, can its goal's sign be read from any waypoint at all "
                        "(sim/goal_sign_reach.py; no model runs)")
    p.add_argument("--pitches", help="with --goals: camera pitches to try, e.g. -15,-30,-45 (default: the configured one)")
    p.add_argument("--altitude", type=float, help="with --goals: the camera's height in metres (default: cruise)")
    args = p.parse_args(argv)

    from onboard.config import load_config
    from sim.world.cache import load_world
    from sim.world.render import Camera, ViewRenderer

    cfg = load_config(args.config)
    world = load_world(None)
    if args.goals:
        return _goals(world, cfg, args)
    settings = [Setting.parse(s) for s in (args.setting or ["960x540@960", "1920x1080@1152"])]
    views = choose_views(world, ViewRenderer(world, replace(Camera.from_config(cfg.supervisor), width=SENSOR[0],
                                                            height=SENSOR[1])), args.views, split=args.split)
    out: dict[str, object] = {"split": args.split, "views": [[v.node, v.heading_deg, v.goal] for v in views],
                              "scored": f"signs >= {RESOLVABLE_SENSOR_PX:g} px lettering in the 1920x1080 frame, 90 % unhidden",
                              "settings": []}
    for s in settings:
        print(f"bench reading {s} on {len(views)} views ...", file=sys.stderr)
        r = bench_setting(world, views, s, cfg, use_map=args.map, threads=args.threads,
                          rectify=None if args.rectify is None else args.rectify == "on")
        out["settings"].append(r)
        print(f"{args.split} {s} rectify {'on' if r['rectify'] else 'off'}: "
              f"recall {r['name_recall']:.3f} ({r['name_resolvable_signs']} signs; facing {r['name_recall_facing']}, "
              f"aslant {r['name_recall_aslant']}), by distance "
              f"{r['name_recall_by_band_m']}, by letter px {r['name_recall_by_letter_px']}, {r['name_recall_by_group']}; name precision {r['name_precision']}, goal precision "
              f"{r['goal_name_precision']}; detect {r['text_detect_p50_ms']:.0f} + recognise {r['text_recognise_p50_ms']:.0f} "
              f"+ upright {r['text_rectify_p50_ms']:.0f} "
              f"= {r['text_p50_ms_per_view']:.0f} ms/view p50 (CPU {r['text_cpu_p50_ms_per_view']:.0f} ms); range error p50/p90 "
              + ", ".join(f"{k[len('range_error_p50_m_'):]} {r[k]:.1f}/{r['range_error_p90_m_' + k[len('range_error_p50_m_'):]]:.1f} m"
                          for k in r if k.startswith("range_error_p50_m_")), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
    return 0


def _goals(world, cfg, args) -> int:
    from sim.benchmark.tasks import load_tasks
    from sim.goal_sign_reach import reach_report
    from sim.world.render import Camera, ViewRenderer

    cam = replace(Camera.from_config(cfg.supervisor), width=SENSOR[0], height=SENSOR[1])
    pitches = [float(x) for x in args.pitches.split(",")] if args.pitches else [cam.pitch_deg]
    if args.altitude is not None and not 1.0 <= args.altitude <= 500.0:  # NaN fails too
        raise SystemExit(f"--altitude {args.altitude} is not within 1..500 m")
    rep = reach_report(world, ViewRenderer(world, cam), pitches, load_tasks(args.goals)[1],
                       cfg.supervisor.camera_reading.poi_range_m, RESOLVABLE_SENSOR_PX, args.altitude)
    a = rep["any_pitch"]
    print(f"{args.goals}: of {rep['tasks']} goals, {a['reachable']} readable from some waypoint within "
          f"{rep['range_m']:g} m, {rep['altitude_m']:g} m up, at pitch {'/'.join(f'{p:g}' for p in pitches)}, "
          f"{a['unreadable']} seen only aslant, "
          f"hidden or too small, {a['no_sign']} with no sign; per pitch {rep['per_pitch']}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"goals": args.goals, **rep}, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
