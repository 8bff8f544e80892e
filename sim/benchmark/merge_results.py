"""One result from the parts of a run: `aerie bench nav --merge A.json B.json --json ALL.json`.

A camera run of the 100 `test` tasks takes hours on one core, so it is run in parts on the cores
there are (`--limit 50`, `--skip 50 --limit 50`) and the parts are merged here: their records,
in task order, summarised as one run would be (`metrics.summarise`, and the camera's failure ends).
Parts of different runs (another agent, perception, seed or task file) are refused. What cannot be
merged (the camera's per-part percentiles, its memo) stays per part under `parts`.
"""

from __future__ import annotations

import json
from pathlib import Path

from sim.benchmark.camera_failures import failure_ends
from sim.benchmark.metrics import summarise

SAME = ("agent", "perception", "seed", "tasks", "map", "map_stale", "reader")


class MergeRefused(ValueError):
    """Parts that are not of one run, or that overlap."""


def merge_results(paths: list[str | Path]) -> dict:
    parts = [json.loads(Path(p).read_text()) for p in paths]
    if len(parts) < 2:
        raise MergeRefused("merging needs at least two result files")
    for key in SAME:
        values = {json.dumps(p.get(key)) for p in parts}
        if len(values) > 1:
            raise MergeRefused(f"the parts differ in {key!r}: {sorted(values)}")
    records = [r for p in parts for r in p["records"]]
    ids = [(r["task"], r.get("seed")) for r in records]
    if len(set(ids)) != len(ids):
        raise MergeRefused("the parts overlap: a task was run in two of them")
    summary = summarise(records)
    out = {key: parts[0].get(key) for key in SAME}
    out.update({"sr": summary.sr, "spl": summary.spl, "episodes": len(records), "summary": summary.to_json(),
                "elapsed_s": round(sum(p.get("elapsed_s", 0.0) for p in parts), 2), "world": parts[0].get("world"),
                "merged_from": [str(p) for p in paths], "records": records})
    if any("camera" in p for p in parts):
        out["camera"] = {"failure_ends": failure_ends(records),
                         "views_read": sum(p["camera"]["views_read"] for p in parts if "camera" in p),
                         "parts": [{k: v for k, v in p["camera"].items() if k != "failure_ends"} for p in parts
                                   if "camera" in p]}
    return out


def merge_command(paths: list[str], json_path: str | None) -> int:
    """`aerie bench nav --merge`: print the merged run, write it to `json_path`; exit status 2 when refused."""
    import sys

    from contract.results import write_json

    try:
        result = merge_results(paths)
    except (MergeRefused, OSError, ValueError, KeyError) as exc:
        print(f"aerie bench nav --merge: {exc}", file=sys.stderr)
        return 2
    print(f"{result['agent']} / {result['perception']}: SR {result['sr']:.2f}  SPL {result['spl']:.3f}  "
          f"({result['episodes']} episodes from {len(paths)} parts)")
    if "camera" in result:
        f = result["camera"]["failure_ends"]
        print(f"camera failures: {f['counts']}; SR {f['sr_goal_has_sign']} of the {f['goal_has_sign']} tasks whose "
              f"goal has a sign; {f['wrong_goal_locked']} wrong goals locked")
    if json_path:
        write_json(json_path, result)
    return 0
