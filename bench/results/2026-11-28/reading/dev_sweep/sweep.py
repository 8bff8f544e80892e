"""Dev-only sweep of the rectify constants (tuned on dev; test is never run here)."""
import json, sys
from dataclasses import replace
from onboard.config import load_config
from sim.world.cache import load_world
from sim.world.render import Camera, ViewRenderer
from sim.reading_bench import choose_views, frames_for, _ranger, SENSOR, GROUPS, RESOLVABLE_SENSOR_PX
from sim.reading_scores import evaluate_reading
from onboard.perception.text_reader import open_text_reader
from onboard.perception.facade_views import RectifySettings
cfg = load_config(None); world = load_world(None)
views = choose_views(world, ViewRenderer(world, replace(Camera.from_config(cfg.supervisor), width=SENSOR[0], height=SENSOR[1])), 40, split="dev")
frames, _ = frames_for(world, views, 1920, 1080, cfg.supervisor)
reader = open_text_reader(replace(cfg.inference, text_threads=1, providers=("CPUExecutionProvider",)))
reader.read(frames[0].image)
names = sorted({t.name for f in frames for t in f.truths} | {lm.name for lm in world.landmarks})
walls = _ranger(world)
out = []
for spec in sys.argv[1:]:
    kw = json.loads(spec)
    if "band_m" in kw: kw["band_m"] = tuple(kw["band_m"])
    reader.detector.max_side = kw.pop("det_side", 1152)
    off = kw.pop("off", False)
    reader.rectify = None if off else replace(RectifySettings(), **kw)
    kw["off"] = off
    r = evaluate_reading(reader, frames, names, goal_min_confidence=cfg.inference.text_goal_min_confidence,
                         gazetteer=[lm.name for lm in world.landmarks], resolvable_px=RESOLVABLE_SENSOR_PX, groups=GROUPS, walls=walls)
    line = {"kw": kw, "det_side": reader.detector.max_side, "recall": r["name_recall"], "groups": r["name_recall_by_group"], "prec": r["name_precision"],
            "goal_prec": r["goal_name_precision"], "locks": r["goal_locks"], "cpu": r["text_cpu_p50_ms_per_view"], "rect_ms": r["text_rectify_p50_ms"]}
    print(json.dumps(line), flush=True)
