"""How sure the agent is of the goal it read, with the VLM's confirm answers weighed in.

The goal is placed only by reading its name (`WorkingMemory.goal_fix`); the VLM's
confirm answer (`GoalSeen`: does this frame show it?) is one more piece of
evidence about that placement, never the only one:

* a "yes" (medium or high) adds to the confidence; it cannot place a goal, since
  confirm is asked only once a name was read, and nothing here reads a position;
* a "no" (medium or high) lowers it. While the newest word on the placement is a
  "no", the locate expert does not arrive on the strength of a name read from
  afar (`experts._goal_in_reach`'s reach beyond `arrive_within_m`) and asks for
  another look (`DynamicState.confirm_again`: the supervisor asks again on the
  next frame). The doubt lasts at most `agent.vlm_doubt_steps` steps after the
  first "no": the name read stays the evidence, and a camera that keeps saying
  no cannot keep the drone from arriving. Within `arrive_within_m` the name read
  close by decides at once.

"low" answers and the contract's fallback count for nothing either way. Without a
VLM there are no answers, and nothing here changes a flight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from onboard.agent.agent_state import AgentState

# What one confirm word moves the confidence by (the name read is 1.0). A "no" weighs more than a "yes": it
# costs steps, never the goal, and the cheap mistake is a look too many.
WEIGHTS = {(True, "high"): 0.3, (True, "medium"): 0.15, (False, "high"): -0.5, (False, "medium"): -0.25}


@dataclass(frozen=True)
class GoalConfidence:
    value: float  # 1.0: the name read alone; above with a camera "yes", below with a "no"
    words: tuple[dict[str, Any], ...]  # the confirm answers that counted, oldest first
    doubted: bool  # the newest word is a "no" and the doubt has not run out

    def text(self) -> str:
        if not self.words:
            return ""
        last = self.words[-1]
        said = "shows" if last["shows_goal"] else "does not show"
        return f"goal confidence {self.value:.2f} (name read; camera {said} it, {last['confidence']}, step {last['step']})"


def counted(state: AgentState) -> list[dict[str, Any]]:
    """The confirm answers that count: valid, medium or high, about a frame since the goal's name was read."""
    d = state.dynamic
    if state.static.memory.goal_fix is None or d.goal_placed_at is None:
        return []
    return [w for w in d.goal_seen if not w.get("used_fallback") and w["confidence"] in ("medium", "high")
            and w["step"] >= d.goal_placed_at]


def goal_confidence(state: AgentState) -> GoalConfidence:
    words = counted(state)
    value = 1.0 + sum(WEIGHTS[(bool(w["shows_goal"]), w["confidence"])] for w in words)
    doubted = False
    if words and not words[-1]["shows_goal"]:
        first_no = min(w["delivered"] for w in words if not w["shows_goal"])
        doubted = state.dynamic.timestep - first_no < state.static.config.vlm_doubt_steps
    return GoalConfidence(round(value, 2), tuple(words), doubted)
