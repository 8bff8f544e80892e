"""Render the calibration set of Grounding DINO and SAM: `python -m sim.calibration_scenes`.

Static INT8 quantisation sets each activation's range from what the network sees during
calibration, so the frames should be the vehicle's: views of the simulated Helsinki from the
drone camera at cruise altitude, at the gimbal's pitch and looking further down, through the
camera model's blur, noise and JPEG. Each frame carries the prompts the models are given in
flight, from what the renderer knows is in view: DINO's text prompts (the kinds of the shops
whose signs are visible, and the generic words of the goal kinds) and SAM's box prompts (the
visible sign panels). They are written once to ``models/calibration/scenes/`` with
``scenes.yaml`` and committed, so `aerie models quantize` needs neither the world nor the
renderer; none of these views is one the tests measure agreement on.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "models" / "calibration" / "scenes"
NODES = tuple(12 + 57 * i for i in range(8))  # away from the text set's nodes (5 + 41 k) and the reading bench's
SIZE = (1280, 720)  # stored size: every model resizes further (DINO to 750x1333 at most, SAM to 1024 on the long side)
GENERIC = ("building", "shop sign", "car", "person")


def _prompts(truths) -> list[str]:
    kinds = [t.category.replace("_", " ") for t in truths if t.kind == "poi" and t.visible_fraction > 0.3]
    seen: list[str] = []
    for k in kinds + list(GENERIC):
        if k not in seen:
            seen.append(k)
    return seen[:5]


def _boxes(truths, scale: float, width: int, height: int) -> list[list[float]]:
    boxes = []
    for t in truths:
        if t.visible_fraction < 0.5 or len(boxes) == 3:
            continue
        q = np.asarray(t.panel_quad, float) * scale
        x0, y0 = np.clip(q.min(axis=0), 0, [width - 1, height - 1])
        x1, y1 = np.clip(q.max(axis=0), 0, [width - 1, height - 1])
        if x1 - x0 >= 8 and y1 - y0 >= 8:
            boxes.append([round(float(v), 1) for v in (x0, y0, x1, y1)])
    if not boxes:  # a box on the middle of the frame: SAM is asked about something in every frame
        boxes.append([width / 3, height / 3, 2 * width / 3, 2 * height / 3])
    return boxes


def render_scenes(out: Path = OUT, nodes=NODES) -> list[dict]:
    import cv2
    import yaml

    from sim.world.cache import load_world
    from sim.world.render import ViewRenderer

    world = load_world()
    renderer = ViewRenderer(world)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for i, node in enumerate(nodes):
        heading = float(37 * node % 360)
        pitch = -15.0 if i % 2 == 0 else -35.0
        img, truths = renderer.render_view(node, heading, pitch_deg=pitch)  # BGR, the camera's 1920x1080
        scale = SIZE[0] / img.shape[1]
        name = f"node{node}_h{int(heading)}_p{int(-pitch)}.jpg"
        cv2.imwrite(str(out / name), cv2.resize(img, SIZE, interpolation=cv2.INTER_AREA), [cv2.IMWRITE_JPEG_QUALITY, 90])
        records.append({"file": name, "node": int(node), "heading_deg": heading, "pitch_deg": pitch,
                        "prompts": _prompts(truths), "boxes": _boxes(truths, scale, *SIZE)})
    header = ("# Grounding DINO / SAM INT8 calibration frames: `python -m sim.calibration_scenes` (sim/calibration_scenes.py).\n"
              "# prompts: DINO's text prompts for the frame; boxes: SAM's box prompts, x0 y0 x1 y1 pixels of the stored frame.\n")
    (out / "scenes.yaml").write_text(header + yaml.safe_dump({"frames": records}, sort_keys=False, allow_unicode=True),
                                     encoding="utf-8")
    return records


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.calibration_scenes", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    for r in render_scenes(Path(args.out)):
        print(f"{r['file']}: prompts {r['prompts']}, {len(r['boxes'])} boxes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
