"""Place–anchor memory of the current flight: where the vehicle has been, from its own actions.

There is no SLAM here on purpose (the Place–Anchor design keeps it out of
scope): the pose is dead-reckoned from the discrete actions the planner
issued, anchors are dropped along the path as topological waypoints, and
places are semantic regions confirmed from the scene type the perception
model reports. Drift is expected, so nearby anchors of the same place type
are only offered as localisation *hints*; nothing is ever merged.

Two rule-based avoid hints feed the planner:

* ``pattern:STUCK`` — in the last W steps the vehicle was at most at one
  unique place. Places are counted at anchor granularity (the finest place
  unit): semantic places are only re-observed every ``place_period_steps``
  (20 by default), so within a 10-step window they could never change and
  the hint would fire on every clean flight.
* ``pattern:ABABA`` — the last four places visited alternate between two
  place types (A, B, A, B with A != B).
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field

from onboard.memory.discovered_context import DiscoveredContextQueue, DCRecord
from onboard.memory.settings import AnchorGraphConfig

ACTIONS = ("forward", "turn_left", "turn_right", "stop")
_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")


class AnchorGraphError(ValueError):
    """An unknown action or an invalid argument was given to the anchor graph."""


def normalise_scene_type(scene_type: str) -> str:
    """Lower-case, punctuation stripped, whitespace collapsed, hallway -> corridor."""
    text = _PUNCT.sub(" ", scene_type.lower())
    text = _SPACES.sub(" ", text).strip()
    return re.sub(r"\bhallways?\b", "corridor", text)


@dataclass(frozen=True)
class Pose:
    """Dead-reckoned pose in map units (see ``AnchorGraphConfig.forward_step_units``)."""

    x: float
    y: float
    yaw_deg: float  # 0 = initial heading, positive = left (counter-clockwise)

    def distance_to(self, other: "Pose") -> float:
        return math.hypot(self.x - other.x, self.y - other.y)


@dataclass
class Anchor:
    anchor_id: int
    pose: Pose
    step: int
    place_id: int | None
    neighbours: list[int] = field(default_factory=list)


@dataclass
class Place:
    place_id: int
    place_type: str  # normalised scene type
    raw_scene_type: str
    first_step: int
    anchors: list[int] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)
    description: str = ""


@dataclass(frozen=True)
class StepResult:
    """What one step changed: the new pose, a new anchor and/or a newly confirmed place."""

    step: int
    pose: Pose
    new_anchor: int | None
    new_place: int | None
    avoid_hints: tuple[str, ...]


@dataclass(frozen=True)
class LocalisationCandidate:
    anchor_id: int
    distance: float
    place_id: int | None
    place_type: str


class AnchorGraph:
    """One flight's anchors, places, discovered-context queue and avoid hints."""

    def __init__(self, cfg: AnchorGraphConfig | None = None) -> None:
        self.cfg = cfg or AnchorGraphConfig()
        c = self.cfg
        if min(c.forward_step_units, c.step_length_m, c.anchor_every_forward_steps, c.place_dwell_observations) <= 0:
            raise AnchorGraphError("forward_step_units, step_length_m, anchor_every_forward_steps and "
                                   "place_dwell_observations must be positive")
        self.pose = Pose(0.0, 0.0, 0.0)
        self.step_count = 0
        self.anchors: dict[int, Anchor] = {}
        self.places: dict[int, Place] = {}
        self.current_place: int | None = None
        self.discovered = DiscoveredContextQueue(self.cfg.discovered_context_size)
        self._forward_since_anchor = 0
        self._turned_since_anchor = False
        self._pending_type: str | None = None
        self._pending_raw = ""
        self._pending_count = 0
        # Per-step place key (anchor granularity) for STUCK, and the place-type visit sequence for ABABA.
        self._step_anchor: deque[int] = deque(maxlen=max(self.cfg.stuck_window_steps, 1))
        self._place_visits: list[str] = []
        self.current_anchor = self._new_anchor()

    # ------------------------------------------------------------------ dead reckoning and anchors
    def _new_anchor(self) -> int:
        anchor_id = len(self.anchors)
        anchor = Anchor(anchor_id, self.pose, self.step_count, self.current_place)
        previous = getattr(self, "current_anchor", None)
        if previous is not None:
            anchor.neighbours.append(previous)
            self.anchors[previous].neighbours.append(anchor_id)
        self.anchors[anchor_id] = anchor
        if self.current_place is not None:
            self.places[self.current_place].anchors.append(anchor_id)
        self.current_anchor = anchor_id
        self._forward_since_anchor = 0
        self._turned_since_anchor = False
        return anchor_id

    def _move(self, action: str) -> bool:
        """Apply one action to the pose; True when it was a forward move."""
        if action == "forward":
            yaw = math.radians(self.pose.yaw_deg)
            d = self.cfg.forward_step_units
            self.pose = Pose(self.pose.x + d * math.cos(yaw), self.pose.y + d * math.sin(yaw), self.pose.yaw_deg)
            return True
        if action in ("turn_left", "turn_right"):
            sign = 1.0 if action == "turn_left" else -1.0
            yaw = (self.pose.yaw_deg + sign * self.cfg.turn_angle_deg + 180.0) % 360.0 - 180.0
            self.pose = Pose(self.pose.x, self.pose.y, yaw)
            self._turned_since_anchor = True
            return False
        if action == "stop":
            return False
        raise AnchorGraphError(f"unknown action {action!r} (known: {', '.join(ACTIONS)})")

    def step(self, action: str, scene_type: str | None = None, *, objects: tuple[str, ...] = (),
             description: str = "") -> StepResult:
        """Apply one planner action; ``scene_type`` when perception observed one this step.

        The caller asks :meth:`should_observe_place` to know when to run the
        scene model (every ``place_period_steps``); any observation given is used.
        """
        forward = self._move(action)
        self.step_count += 1
        new_anchor = None
        if forward:
            self._forward_since_anchor += 1
            if self._forward_since_anchor >= self.cfg.anchor_every_forward_steps or self._turned_since_anchor:
                new_anchor = self._new_anchor()
        new_place = None
        if scene_type is not None:
            new_place = self._observe_place(scene_type, objects, description)
            if new_place is not None:
                if new_anchor is None:
                    new_anchor = self._new_anchor()
                else:
                    # The anchor made this step is the new place's first anchor.
                    self.anchors[new_anchor].place_id = new_place
                    self.places[new_place].anchors.append(new_anchor)
        elif objects or description:
            self._enrich_current(objects, description)
        self._step_anchor.append(self.current_anchor)
        return StepResult(self.step_count, self.pose, new_anchor, new_place, tuple(self.avoid_hints()))

    @property
    def metres_per_unit(self) -> float:
        return self.cfg.step_length_m / self.cfg.forward_step_units

    def should_observe_place(self) -> bool:
        """True on the steps when the scene type should be observed (step 0, then every period)."""
        period = max(self.cfg.place_period_steps, 1)
        return self.step_count % period == 0

    # ------------------------------------------------------------------ places
    def _observe_place(self, scene_type: str, objects: tuple[str, ...], description: str) -> int | None:
        norm = normalise_scene_type(scene_type)
        if not norm:
            return None
        current_type = self.places[self.current_place].place_type if self.current_place is not None else None
        if norm == current_type:
            self._pending_type, self._pending_count = None, 0
            self._enrich_current(objects, description)
            return None
        if norm == self._pending_type:
            self._pending_count += 1
        else:
            self._pending_type, self._pending_raw, self._pending_count = norm, scene_type, 1
        if self._pending_count < self.cfg.place_dwell_observations:
            return None
        place_id = len(self.places)
        self.places[place_id] = Place(place_id, norm, self._pending_raw, self.step_count)
        self.current_place = place_id
        self._pending_type, self._pending_count = None, 0
        self._place_visits.append(norm)
        self._enrich_current(objects, description)
        return place_id

    def _enrich_current(self, objects: tuple[str, ...], description: str) -> None:
        if self.current_place is None:
            return
        place = self.places[self.current_place]
        for obj in objects:
            if obj not in place.objects:
                place.objects.append(obj)
        if description:
            place.description = description

    def place_type_of(self, anchor_id: int) -> str:
        place_id = self.anchors[anchor_id].place_id
        return self.places[place_id].place_type if place_id is not None else ""

    # ------------------------------------------------------------------ localisation hints
    def localisation_candidates(self, anchor_id: int | None = None) -> list[LocalisationCandidate]:
        """Other anchors within r of ``anchor_id`` (default: current) with the same place type.

        Hints only: dead reckoning drifts, so the graph is never merged on them.
        Anchors without a confirmed place are never candidates.
        """
        anchor_id = self.current_anchor if anchor_id is None else anchor_id
        me = self.anchors[anchor_id]
        my_type = self.place_type_of(anchor_id)
        if not my_type:
            return []
        out = []
        for other in self.anchors.values():
            if other.anchor_id == anchor_id or other.place_id is None:
                continue
            dist = me.pose.distance_to(other.pose)
            if dist <= self.cfg.localisation_radius and self.place_type_of(other.anchor_id) == my_type:
                out.append(LocalisationCandidate(other.anchor_id, dist, other.place_id, my_type))
        return sorted(out, key=lambda c: (c.distance, c.anchor_id))

    # ------------------------------------------------------------------ avoid hints and discovered context
    def is_stuck(self) -> bool:
        window = self.cfg.stuck_window_steps
        if window < 1 or len(self._step_anchor) < window:
            return False
        return len(set(self._step_anchor)) <= 1

    def is_abab(self) -> bool:
        v = self._place_visits[-4:]
        return len(v) == 4 and v[0] == v[2] and v[1] == v[3] and v[0] != v[1]

    def avoid_hints(self) -> list[str]:
        hints = []
        if self.is_stuck():
            hints.append("pattern:STUCK")
        if self.is_abab():
            hints.append("pattern:ABABA")
        return hints

    def record_discovered_context(self, goal_flag: bool, goal_scene_type: str, why: str) -> list[DCRecord]:
        """Push one planner output to the FIFO (avoid hint computed here); return it re-indexed."""
        hint = ",".join(self.avoid_hints())
        self.discovered.push(goal_flag, goal_scene_type, why, hint)
        return self.discovered.records()
