"""Does PP-OCR detection on a downscaled copy find the small goal sign, and does the full-res crop read it?

d001's goal sign (Stadin Piste) from the flown waypoint that saw it best (as ../camera/fullres_check.py).
The frame is rendered at the sensor's 1920x1080; `text_det_max_side` sets the detector's input
(the frame is scaled down for detection only; boxes are scaled back and cropped from the full frame).
Baseline: the same frame downscaled to 960x540 before reading (what a 960x540 camera setting does).
"""
import sys
from dataclasses import replace

import cv2
import numpy as np

from onboard.config import load_config
from onboard.map.compass import bearing_deg
from onboard.perception.name_matching import match_name
from onboard.perception.text_reader import open_text_reader
from sim.world.cache import load_world
from sim.world.render import Camera, ViewRenderer

w = load_world(None)
cfg = load_config(None)
sign_xy = np.array([-364.3, -239.6]); node = 38
v = sign_xy - w.graph.xy[node]; hd = bearing_deg(float(v[0]), float(v[1]))
hd = float(sys.argv[1]) if len(sys.argv) > 1 else hd  # 72: the look-around's view from this waypoint (5 x 72 deg from north)
img, truths = ViewRenderer(w, Camera(width=1920, height=1080)).render_view(node, hd)
t = next(t for t in truths if t.name == "Stadin Piste")
print(f"heading {hd:.1f}: truth", t.bbox, t.letter_px, t.visible_fraction, t.distance_m)
rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
small = cv2.resize(rgb, (960, 540), interpolation=cv2.INTER_AREA)
sides = [int(s) for s in sys.argv[2:]] or [960, 1152, 1280, 1408]
for name, frame, side in [("960x540 frame, det 960", small, 960)] + [(f"1920x1080 frame, det {s}", rgb, s) for s in sides]:
    reader = open_text_reader(replace(cfg.inference, text_det_max_side=side, providers=("CPUExecutionProvider",)))
    reader.read(frame)
    reads = reader.read(frame)
    boxes = reader.detector.detect(frame)
    k = frame.shape[1] / 1920
    bx = [tuple(round(x / k) for x in b.box) for b in boxes]
    near = [b for b in bx if b[0] < t.bbox[2] + 20 and b[2] > t.bbox[0] - 20 and b[1] < t.bbox[3] + 20 and b[3] > t.bbox[1] - 20]
    hit = [(r.text, round(r.confidence, 2)) for r in reads if match_name(r.text, r.confidence, ["Stadin Piste"])]
    print(f"{name}: {len(boxes)} boxes, near the sign (1920 px) {near}, reads of the goal {hit}, "
          + ", ".join(f"{a} {b:.0f} ms" for a, b in reader.timings_ms.items()))
# PYTHONPATH=$PWD .venv/bin/python bench/results/2026-11-26/camera_crops/det_check.py [HEADING [SIDES...]]  (2026-11-26, shared 2-core CPU)
