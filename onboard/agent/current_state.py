"""The `current_state` string (RAG query and reflection snapshot) and the geo-instruction it embeds.

Format exactly as the design gives it::

    Current aerial perspective observation: {'scene_description': ..., 'geoinstruct': ...}. Task: {task}. Current Goal: {goal} (Strategy: {strategy})

Built once per step by `execute_subtask_router`. The scene description says what
the drone can read and recognise around it; with a vision-language model on the
flight path its newest caption comes first (`with_caption`).
"""

from __future__ import annotations

import numpy as np

from onboard.agent.geometry import bearing_of, norm
from onboard.vocab.observation import AgentObservation
from onboard.map.compass import compass8 as compass


def scene_description(obs: AgentObservation) -> str:
    """A caption stand-in from the structured perception: readable names and recognised landmarks."""
    parts = []
    if obs.pois:
        parts.append("signs readable: " + ", ".join(f"{p.name} ({p.distance:.0f} m {compass(p.bearing)})"
                                                    for p in obs.pois[:4]))
    if obs.landmarks:
        parts.append("landmarks in view: " + ", ".join(sorted(s.name for s in obs.landmarks)[:5]))
    parts.append(f"{len(obs.moves)} street corridors lead on")
    return "; ".join(parts)


def with_caption(scene: str, caption: tuple[int, str] | None) -> str:
    """The camera's caption (a VLM's, of the frame of step k) ahead of the description; unchanged without one."""
    return scene if caption is None else f"camera (step {caption[0]}): {caption[1][:200]}; {scene}"


def geoinstruct(obs: AgentObservation, position: np.ndarray, target: np.ndarray | None) -> str:
    """Landmarks by bearing and distance, the moves on offer, and the target estimate relative to the drone."""
    lms = ", ".join(f"{s.name} {s.distance:.0f} m {compass(s.bearing)}" for s in
                    sorted(obs.landmarks, key=lambda s: s.distance)[:5]) or "no landmark recognised"
    moves = ", ".join(compass(m.bearing) for m in obs.moves)
    if target is None:
        tgt = "target estimate unknown"
    else:
        v = target - position
        tgt = f"target estimated {norm(v):.0f} m {compass(bearing_of(v))}"
    return f"{lms}; moves: {moves}; {tgt}"


def build_current_state(scene: str, geo: str, task: str, goal: str, strategy: str) -> str:
    obs = {"scene_description": scene, "geoinstruct": geo}
    task = task.strip().rstrip(".")  # the format supplies the full stop
    return f"Current aerial perspective observation: {obs}. Task: {task}. Current Goal: {goal} (Strategy: {strategy})"
