"""The scene graph locate queries (000 §3.2, §4.3): which of the goal-named signs read is the goal.

A chain's name ("Alepa", "R-kioski") is read at several places; the description
says which one ("the cafe 100 m north of the Tower"). Reading the name alone
(the last sign read wins) takes whichever one the route passes first. Here each
sign read becomes a node at the position it was read at (signs within
`merge_m` are one node), the other names read are nodes too, and the described
landmarks come from the working memory. Edges are computed on demand: a node is
`near` another within `near_m`, and every node has a direction (8-point compass)
and a distance from each landmark.

`query` is the seed's subgraph query: the instruction's relations (offset,
ray, between) against each goal candidate's edges to the landmarks they name;
the candidate with the smallest misfit (metres) is the goal when it beats the
runner-up by `margin_m`. A candidate the instruction's direction contradicts
(it lies on the other side of a relation's landmark: more than 90 degrees off
the stated direction, further than `near_m` from it) is never the goal, even
alone: "the cafe north of X" is not the one south of X that the route passes
first. Where the graph cannot tell (no relation's landmarks
placed, or a near tie) `choose` asks the planner model if one is loaded (the
seed's fallback), else keeps the geometric choice: the candidate nearest the
drone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from onboard.agent.geometry import bearing_of, norm, offset
from onboard.agent.goal_description import GoalDescription, Relation
from onboard.map.compass import compass8


@dataclass
class Node:
    name: str
    xy: np.ndarray
    reads: int = 1
    goal: bool = False  # named like the goal: a candidate


@dataclass
class SceneGraph:
    merge_m: float = 25.0
    near_m: float = 60.0
    margin_m: float = 30.0
    nodes: list[Node] = field(default_factory=list)
    model_choice: dict[int, int] = field(default_factory=dict)  # candidates seen -> the model's pick (asked once)

    def add(self, name: str, position: np.ndarray, bearing: float, distance: float, goal: bool) -> Node:
        """A sign read from `position`: a new node, or one more read of the node it falls on (running mean)."""
        xy = np.asarray(position, dtype=float) + offset(bearing, distance)
        for n in self.nodes:
            if n.name == name and norm(n.xy - xy) <= self.merge_m:
                n.xy = (n.xy * n.reads + xy) / (n.reads + 1)
                n.reads += 1
                return n
        node = Node(name, xy, goal=goal)
        self.nodes.append(node)
        return node

    def candidates(self) -> list[Node]:
        return [n for n in self.nodes if n.goal]

    def edges(self, node: Node, landmarks: Mapping[str, np.ndarray]) -> list[tuple[str, str, float]]:
        """(relation, other, metres): direction from each landmark ("N of"), and `near` other names read."""
        out = [(f"{compass8(bearing_of(node.xy - p))} of", lm, round(norm(node.xy - p), 1))
               for lm, p in landmarks.items()]
        out += [("near", o.name, round(norm(node.xy - o.xy), 1)) for o in self.nodes
                if o is not node and not o.goal and norm(node.xy - o.xy) <= self.near_m]
        return out

    @staticmethod
    def misfit(xy: np.ndarray, r: Relation, landmarks: Mapping[str, np.ndarray]) -> float | None:
        """Metres between `xy` and where relation `r` puts the goal; None when its landmarks are not placed."""
        if not all(n in landmarks for n in r.landmarks):
            return None
        a = landmarks[r.landmarks[0]]
        if r.kind == "between":
            return norm(xy - (a + landmarks[r.landmarks[1]]) / 2.0)
        if r.kind == "offset":
            return norm(xy - (a + r.offset()))
        v, u = xy - a, r.unit()  # ray: distance from the half-line
        along = float(v @ u)
        return norm(v) if along < 0 else norm(v - along * u)

    def contradicts(self, xy: np.ndarray, goal: GoalDescription, landmarks: Mapping[str, np.ndarray]) -> bool:
        """A relation with a direction puts the goal on the other side of its landmark from `xy`."""
        for r in goal.relations:
            if r.kind == "between" or r.direction is None or r.landmarks[0] not in landmarks:
                continue
            v = xy - landmarks[r.landmarks[0]]
            if norm(v) > self.near_m and float(v @ r.unit()) < 0.0:
                return True
        return False

    def query(self, goal: GoalDescription, landmarks: Mapping[str, np.ndarray]) -> tuple[Node | None, list[float]]:
        """The candidate the relations fit best, if the graph can tell; and every candidate's misfit."""
        cands = [c for c in self.candidates() if not self.contradicts(c.xy, goal, landmarks)]
        scores = []
        for c in cands:
            fits = [m for r in goal.relations if (m := self.misfit(c.xy, r, landmarks)) is not None]
            scores.append(sum(fits) if fits else float("inf"))
        if not cands or not np.isfinite(min(scores)):
            return None, scores
        order = np.argsort(scores)
        if len(cands) > 1 and scores[order[1]] - scores[order[0]] < self.margin_m:
            return None, scores
        return cands[int(order[0])], scores

    def choose(self, goal: GoalDescription, landmarks: Mapping[str, np.ndarray], position: np.ndarray,
               model: Any = None) -> tuple[Node | None, str]:
        """The goal node and how it was chosen ("graph", "model", "nearest"); None with no candidate
        ("" ) or when the relations contradict every one ("contradicted")."""
        if not self.candidates():
            return None, ""
        cands = [c for c in self.candidates() if not self.contradicts(c.xy, goal, landmarks)]
        if not cands:
            return None, "contradicted"
        if len(cands) == 1:
            return cands[0], "graph"
        best, _ = self.query(goal, landmarks)
        if best is not None:
            return best, "graph"
        if model is not None:
            pick = self._ask(model, goal, landmarks, cands)
            if pick is not None:
                return cands[pick], "model"
        return min(cands, key=lambda c: norm(c.xy - position)), "nearest"

    def _ask(self, model: Any, goal: GoalDescription, landmarks: Mapping[str, np.ndarray],
             cands: list[Node]) -> int | None:
        """The planner model's pick among the candidates from their subgraphs (asked once per candidate count)."""
        if len(cands) in self.model_choice:
            return self.model_choice[len(cands)]
        lines = [f"{i}: " + "; ".join(f"{rel} {other} ({m:.0f} m)" for rel, other, m in self.edges(c, landmarks))
                 for i, c in enumerate(cands)]
        schema = {"type": "object", "properties": {"candidate": {"type": "integer", "minimum": 0,
                                                                 "maximum": len(cands) - 1}},
                  "required": ["candidate"]}
        messages = [{"role": "system", "content": "Pick the place the task describes. Answer JSON."},
                    {"role": "user", "content": f"Task: {goal.text}\nCandidates:\n" + "\n".join(lines)}]
        try:
            pick = int(json.loads(model.generate_json(messages, schema))["candidate"])
        except Exception:  # noqa: BLE001 - any failure of the model leaves the geometric choice
            pick = -1
        self.model_choice[len(cands)] = pick if 0 <= pick < len(cands) else None
        return self.model_choice[len(cands)]
