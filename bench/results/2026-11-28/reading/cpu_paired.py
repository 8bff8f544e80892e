"""CPU time a view of the reader with and without the map's walls, read alternately view by view.

On a 2-core machine shared with other jobs the process's CPU time per view moves with the load (two
runs of the same bench minutes apart differed by 60 ms); reading each view both ways in turn, the first
way alternating, puts both under the same load. Usage:
PYTHONPATH=. python bench/results/2026-11-28/reading/cpu_paired.py dev|test > cpu_paired_SPLIT.json
"""
import json
import sys
import time
from dataclasses import replace

import numpy as np

from onboard.config import load_config
from onboard.perception.text_reader import open_text_reader
from sim.reading_bench import SENSOR, _ranger, choose_views, frames_for
from sim.world.cache import load_world
from sim.world.render import Camera, ViewRenderer

split = sys.argv[1]
cfg = load_config(None)
world = load_world(None)
views = choose_views(world, ViewRenderer(world, replace(Camera.from_config(cfg.supervisor), width=SENSOR[0],
                                                        height=SENSOR[1])), 40, split=split)
frames, _ = frames_for(world, views, 1920, 1080, cfg.supervisor)
reader = open_text_reader(replace(cfg.inference, text_threads=1, providers=("CPUExecutionProvider",)))
reader.read(frames[0].image)
walls = _ranger(world)
names = sorted({t.name for f in frames for t in f.truths} | {lm.name for lm in world.landmarks})
cpu = {"frame alone": [], "with the map's walls": []}
parts = {"detect": [], "recognise": [], "rectify": []}
for i, f in enumerate(frames):
    for key in (list(cpu) if i % 2 == 0 else list(cpu)[::-1]):
        c0 = time.process_time()
        reader.sightings(f.image, f.intr, f.pose, names, walls=walls if key != "frame alone" else None)
        cpu[key].append((time.process_time() - c0) * 1e3)
        if key != "frame alone":
            for k in parts:
                parts[k].append(reader.timings_ms[k])
out = {"split": split, "views": len(frames),
       "cpu_p50_ms_per_view": {k: float(np.percentile(v, 50)) for k, v in cpu.items()},
       "cpu_mean_ms_per_view": {k: float(np.mean(v)) for k, v in cpu.items()},
       "with_walls_wall_clock_p50_ms": {k: float(np.percentile(v, 50)) for k, v in parts.items()},
       "cpu_ms_per_view": cpu}
print(json.dumps(out, indent=1))
