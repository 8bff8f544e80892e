"""``agent_step``: one agent decision (a FrameLog): what it saw, what it chose and why, where it thinks it is.

Coordinates are the agent's own frame: metres east (``x``) and north (``y``) of
the take-off point. Everything after ``distance_estimate_m`` is optional: the
dashboard draws it and the post-flight analyser learns from it (``goal_fix``:
where the goal's name was read; ``target_estimate``; the fused ``landmarks``),
but a step without it is still a step. ``search_region`` (added within version 1,
as ``plan_version`` was: an older reader ignores it) is the part of the
described region the search has not looked at yet, as a convex outline of at
most `REGION_MOST_VERTICES` vertices and the area those unseen points cover
(the outline of a ring-shaped rest would overstate it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader


@dataclass(frozen=True)
class Pose:
    x: float
    y: float
    z: float = 0.0
    yaw: float = 0.0     # degrees, bearing of the move

    def body(self) -> dict[str, float]:
        return {"x": self.x, "y": self.y, "z": self.z, "yaw": self.yaw}

    @classmethod
    def read(cls, r: Reader) -> "Pose":
        return cls(r.number("x"), r.number("y"), r.number("z", 0.0), r.number("yaw", 0.0, lo=-360.0, hi=360.0))


@dataclass(frozen=True)
class Movement:
    """The move as commanded: ``kind`` move | look_up | come_down | look_low | arrive, the waypoint and its bearing
    (a look or a come-down has neither)."""

    kind: str
    node: int | None = None
    bearing: float | None = None

    def body(self) -> dict[str, Any]:
        return {"kind": self.kind, "node": self.node, "bearing": self.bearing}

    @classmethod
    def read(cls, r: Reader) -> "Movement":
        return cls(r.text("kind"), r.opt_integer("node"), r.opt_number("bearing", lo=-360.0, hi=360.0))


@dataclass(frozen=True)
class Anchor:
    anchor_id: int
    x: float
    y: float
    place_id: int | None = None
    neighbours: tuple[int, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"anchor_id": self.anchor_id, "x": self.x, "y": self.y, "place_id": self.place_id,
                "neighbours": list(self.neighbours)}

    @classmethod
    def read(cls, r: Reader) -> "Anchor":
        return cls(r.integer("anchor_id"), r.number("x"), r.number("y"), r.opt_integer("place_id"),
                   r.ints("neighbours", ()))


@dataclass(frozen=True)
class Place:
    place_id: int
    place_type: str
    anchors: tuple[int, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"place_id": self.place_id, "place_type": self.place_type, "anchors": list(self.anchors)}

    @classmethod
    def read(cls, r: Reader) -> "Place":
        return cls(r.integer("place_id"), r.text("place_type"), r.ints("anchors", ()))


@dataclass(frozen=True)
class AnchorGraph:
    anchors: tuple[Anchor, ...] = ()
    places: tuple[Place, ...] = ()

    def body(self) -> dict[str, Any]:
        return {"anchors": [a.body() for a in self.anchors], "places": [p.body() for p in self.places]}

    @classmethod
    def read(cls, r: Reader) -> "AnchorGraph":
        return cls(r.each("anchors", Anchor.read, ()), r.each("places", Place.read, ()))


# How far from take-off an outline's vertex may lie (metres): far beyond any flight, short of absurd.
REGION_BOUND_M = 100_000.0
# Vertices an outline may have: enough for a smooth arc, few enough to send every step.
REGION_MOST_VERTICES = 32


@dataclass(frozen=True)
class SearchRegion:
    """Where the search still has to look: a convex outline (counter-clockwise) and the unseen area in m²."""

    outline: tuple[tuple[float, float], ...]
    unseen_m2: float

    def body(self) -> dict[str, Any]:
        return {"outline": [[x, y] for x, y in self.outline], "unseen_m2": self.unseen_m2}

    @classmethod
    def read(cls, r: Reader) -> "SearchRegion":
        return cls(r.xy_ring("outline", fewest=3, most=REGION_MOST_VERTICES, bound=REGION_BOUND_M),
                   r.number("unseen_m2", lo=0.0, hi=(2 * REGION_BOUND_M) ** 2))


@dataclass(frozen=True)
class AgentStep(Payload):
    MSG_TYPE: ClassVar[str] = "agent_step"
    SCHEMA_VERSION: ClassVar[int] = 1

    step: int
    current_state: str
    action: str
    reason: str
    pose: Pose
    distance_estimate_m: float | None
    goal: str = ""                       # the current sub-goal (or the instruction)
    task_instruction: str = ""
    strategy: str = ""                   # navigate | search | locate
    plan_source: str = ""                # which plan the step flew
    movement: Movement | None = None
    effect: str = ""                     # of the previous move: SUCCESS | FAILURE | INEFFECTIVE
    target_estimate: tuple[float, float] | None = None
    goal_fix: tuple[float, float] | None = None
    landmarks: dict[str, tuple[float, float]] | None = None
    anchor_graph: AnchorGraph | None = None
    plan_version: int | None = None      # the plan the step followed (0: the first geometric plan; llm backend +1 per re-plan)
    retrieval_mode: str = ""             # this step's retrieval: skip | single | hierarchical | flat | none ("": none made)
    search_region: SearchRegion | None = None  # the described region not looked at yet (None: none can be said)

    def body(self) -> dict[str, Any]:
        def pair(v: tuple[float, float] | None) -> list[float] | None:
            return None if v is None else [v[0], v[1]]

        return {"step": self.step, "current_state": self.current_state,
                "decision": {"action": self.action, "reason": self.reason}, "pose": self.pose.body(),
                "distance_estimate_m": self.distance_estimate_m, "goal": self.goal,
                "task_instruction": self.task_instruction, "strategy": self.strategy,
                "plan_source": self.plan_source, "movement": None if self.movement is None else self.movement.body(),
                "effect": self.effect, "target_estimate": pair(self.target_estimate),
                "goal_fix": pair(self.goal_fix),
                "landmarks": None if self.landmarks is None else {k: pair(v) for k, v in self.landmarks.items()},
                "anchor_graph": None if self.anchor_graph is None else self.anchor_graph.body(),
                "plan_version": self.plan_version, "retrieval_mode": self.retrieval_mode,
                "search_region": None if self.search_region is None else self.search_region.body()}

    @classmethod
    def _from(cls, r: Reader) -> "AgentStep":
        decision = r.nested("decision", lambda d: (d.text("action"), d.text("reason")))
        if decision is None:
            raise r.fail("decision", "missing", "missing_field")
        pose = r.nested("pose", Pose.read)
        if pose is None:
            raise r.fail("pose", "missing", "missing_field")
        if "distance_estimate_m" not in r.data:
            raise r.fail("distance_estimate_m", "missing (null when unknown)", "missing_field")
        return cls(step=r.integer("step", lo=0), current_state=r.text("current_state"), action=decision[0],
                   reason=decision[1], pose=pose, distance_estimate_m=r.opt_number("distance_estimate_m", lo=0.0),
                   goal=r.text("goal", ""), task_instruction=r.text("task_instruction", ""),
                   strategy=r.text("strategy", ""), plan_source=r.text("plan_source", ""),
                   movement=r.nested("movement", Movement.read), effect=r.text("effect", ""),
                   target_estimate=r.xy("target_estimate"), goal_fix=r.xy("goal_fix"),
                   landmarks=r.xy_map("landmarks"), anchor_graph=r.nested("anchor_graph", AnchorGraph.read),
                   plan_version=r.opt_integer("plan_version", lo=0), retrieval_mode=r.text("retrieval_mode", ""),
                   search_region=r.nested("search_region", SearchRegion.read))
