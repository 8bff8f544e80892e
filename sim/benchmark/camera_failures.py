"""Where each failed camera episode ended: the goal's sign, from the world to the agent.

A camera episode fails for one of five reasons, checked in this order on the
judge's truth (the renderer's, per frame; no reader sees it):

* ``no_sign``: the goal hangs on no facade: no camera finds it;
* ``never_in_frame``: it has a sign, but no frame of the flight had at least half of it in view, unhidden;
* ``in_frame_not_read``: some frame had it, the reader never read its name;
* ``read_not_fused``: read, but never confirmed (too few views, too little confidence) so the agent
  never got it;
* ``fused_not_reached``: handed to the agent, which still did not arrive (the steps ran out, or it
  arrived elsewhere).

A flight that arrived at the wrong place is also counted as a wrong goal lock.
"""

from __future__ import annotations

ENDS = ("no_sign", "never_in_frame", "in_frame_not_read", "read_not_fused", "fused_not_reached")


def failure_end(record: dict) -> str | None:
    """The end of one episode's record (None: it succeeded, or it has no camera figures)."""
    sign = record.get("goal_sign")
    if record.get("success") or sign is None:
        return None
    if not sign["has_sign"]:
        return "no_sign"
    if sign["in_frame_views"] == 0:
        return "never_in_frame"
    if not sign["read"]:
        return "in_frame_not_read"
    if not sign["fused"]:
        return "read_not_fused"
    return "fused_not_reached"


def failure_ends(records: list[dict]) -> dict:
    """The run's tally: per end the tasks, SR over the tasks whose goal has a sign, wrong goals locked."""
    camera = [r for r in records if "goal_sign" in r]
    ends: dict[str, list[str]] = {e: [] for e in ENDS}
    for r in camera:
        end = failure_end(r)
        if end is not None:
            ends[end].append(r["task"])
    signed = [r for r in camera if r["goal_sign"]["has_sign"]]
    seen = [r for r in camera if r["goal_sign"]["in_frame_views"] > 0]
    return {"counts": {e: len(v) for e, v in ends.items()}, "tasks": ends,
            "episodes": len(camera), "succeeded": sum(bool(r["success"]) for r in camera),
            "goal_has_sign": len(signed), "sr_goal_has_sign": round(sum(bool(r["success"]) for r in signed) / len(signed), 3)
            if signed else None,
            "goal_in_a_frame": len(seen), "sr_goal_in_a_frame": round(sum(bool(r["success"]) for r in seen) / len(seen), 3)
            if seen else None,
            "wrong_goal_locked": sum(r.get("end") == "wrong_place" for r in camera)}
