import cv2, numpy as np
from dataclasses import replace
from sim.world.cache import load_world
from sim.world.render import ViewRenderer, Camera
from onboard.map.compass import bearing_deg
from onboard.config import load_config
from onboard.perception.text_reader import open_text_reader
from onboard.perception.name_matching import match_name
w = load_world(None)
cfg = load_config(None)
sign_xy = np.array([-364.3, -239.6]); node = 38  # d001's goal sign (Stadin Piste) and the flown waypoint that saw it best
v = sign_xy - w.graph.xy[node]; hd = bearing_deg(float(v[0]), float(v[1]))
for W, H in ((960, 540), (1920, 1080)):
    rnd = ViewRenderer(w, Camera(width=W, height=H))
    img, truths = rnd.render_view(node, hd)
    t = [t for t in truths if t.name == "Stadin Piste"]
    reader = open_text_reader(replace(cfg.inference, text_det_max_side=max(W, H), providers=("CPUExecutionProvider",)))
    reads = reader.read(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
    print(W, H, "truth", [(round(x.letter_px, 1), round(x.visible_fraction, 2), round(x.distance_m)) for x in t],
          "reads", [(r.text, round(r.confidence, 2), match_name(r.text, r.confidence, ["Stadin Piste"])) for r in reads][:8],
          f"{reader.timings_ms['total']:.0f} ms")
