"""Strategy-tree error control: classify each move's effect, count failures, break loops.

Before/after effect classification compares what was commanded with what
was achieved: the move reached the commanded waypoint (the waypoint we left
is on offer again from the new one), and the distance to the target shrank.
SUCCESS: closer by at least `min_progress_m`; FAILURE: the move did not
happen, or the target got further away; INEFFECTIVE: neither.

The error-threshold controller turns patterns into reflections, which the
planner obeys for a while (`ttl`) and the reflection window keeps (last 3):
* `max_consecutive_failures` non-successes in a row: the direct approach is
  blocked here; avoid the waypoints of the failed run and take a detour.
* repeated action / ABABA (A, B, A, B, A in the last five waypoints): the
  planner is oscillating; forbid the way back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Effect(str, Enum):
    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    INEFFECTIVE = "INEFFECTIVE"


def classify_effect(moved: bool, before_m: float | None, after_m: float | None, min_progress_m: float) -> Effect:
    """Effect of one move from the target distance before and after it (same target for both)."""
    if not moved:
        return Effect.FAILURE
    if before_m is None or after_m is None:
        return Effect.INEFFECTIVE
    if before_m - after_m >= min_progress_m:
        return Effect.SUCCESS
    if after_m - before_m >= min_progress_m:
        return Effect.FAILURE
    return Effect.INEFFECTIVE


@dataclass(frozen=True)
class Reflection:
    """A lesson the planner must follow until `until_step`: text for prompts, waypoints to avoid."""

    text: str
    avoid: frozenset[int]
    until_step: int

    def active(self, step: int) -> bool:
        return step < self.until_step


STUCK_WINDOW = 10  # waypoints looked back on for pattern:STUCK
STUCK_UNIQUE_MAX = 3  # ... at most this many distinct waypoints in them is STUCK


def is_stuck(trail: list[int]) -> bool:
    """Circling: the last `STUCK_WINDOW` waypoints hold at most `STUCK_UNIQUE_MAX` distinct ones."""
    return len(trail) >= STUCK_WINDOW and len(set(trail[-STUCK_WINDOW:])) <= STUCK_UNIQUE_MAX


def is_ababa(trail: list[int]) -> bool:
    """The last five waypoints read A, B, A, B, A with A != B."""
    if len(trail) < 5:
        return False
    a, b, c, d, e = trail[-5:]
    return a == c == e and b == d and a != b


def would_ababa(trail: list[int], candidate: int) -> bool:
    """Moving to `candidate` would complete an A, B, A, B(, A) oscillation."""
    t = trail[-3:] + [candidate]
    return len(t) == 4 and t[0] == t[2] and t[1] == t[3] and t[0] != t[1]


class ErrorThresholdController:
    """Counts consecutive non-successes and watches for loops; emits reflections."""

    def __init__(self, max_consecutive_failures: int = 4, ttl_steps: int = 8) -> None:
        self.max_failures = max_consecutive_failures
        self.ttl = ttl_steps
        self.consecutive_failures = 0
        self.effects: list[Effect] = []

    def record(self, effect: Effect, step: int, trail: list[int]) -> Reflection | None:
        """Take one move's effect (and the waypoint trail after it); a reflection when a threshold is hit."""
        self.effects.append(effect)
        self.consecutive_failures = 0 if effect == Effect.SUCCESS else self.consecutive_failures + 1
        if is_ababa(trail):
            self.consecutive_failures = 0
            a, b = trail[-1], trail[-2]
            return Reflection(f"step {step}: oscillated between waypoints {a} and {b} (ABABA); "
                              f"do not go back to {b}, leave by another street", frozenset({b}), step + self.ttl)
        if self.consecutive_failures >= self.max_failures:
            n = self.consecutive_failures
            self.consecutive_failures = 0
            run = frozenset(trail[-n - 1:-1])
            return Reflection(f"step {step}: {n} moves in a row did not bring the target closer; "
                              f"these streets lead away, detour through unflown ones", run, step + self.ttl)
        return None
