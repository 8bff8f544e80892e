import json, glob, types
from pathlib import Path
from sim.flight_rig import load_task
from sim.world.cache import load_world
import sim.flight_rig as fr
w = load_world()
out = {}
for f in sorted(glob.glob('bench/results/2026-11-28/fleet/fleet4_final_run*.json')):
    d = json.load(open(f))
    rows = []
    for v in d['per_vehicle']:
        o = json.loads((Path(d['out']) / f"vehicle{v['member_id']}" / 'outcome.json').read_text())
        rig = types.SimpleNamespace(world=w, task=load_task(v['task'], w))
        j = fr.SimRig.judge(rig, type("Outcome", (), o)())
        rows.append({"member_id": v['member_id'], "task": v['task'], "reason": o['reason'], "success": j['success'], "spl": j['spl']})
    out[Path(f).name] = {"missions_successful": sum(r['success'] for r in rows), "per_vehicle": rows}
print(json.dumps(out, indent=1))
Path('bench/results/2026-11-28/fleet/fleet4_final_rejudged.json').write_text(json.dumps({
  "why": "the three fleet4_final runs were judged by sim/fleet_bench.py before its fix (it looked for the outcome's old key 'nodes' and judged nothing: success 0); this re-judges each member's kept outcome.json with the rig's own judge, sim.flight_rig.SimRig.judge, unchanged",
  "command": "PYTHONPATH=. python bench/results/2026-11-28/fleet/rejudge_fleet4_final.py", **out}, indent=1))
