"""Read a goal description back into geometry: what a model-free agent can know.

The benchmark's baselines need a goal estimate without a language model; this
parser handles every phrasing the task generator uses and the usual variants
people write (units m/metres/km, "about"/"~", 8 compass words or their
abbreviations, the landmark first or last, two landmarks, "between X and Y").
Landmark names come from a gazetteer (the agent knows the city's landmarks by
name, as PReP's fine-tuned perception did).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from sim.benchmark.compass import DIRECTION_RE, direction_index

DISTANCE_RE = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)?)\s*(?P<unit>km|kilomet(?:re|er)s?|m|met(?:re|er)s?)(?![\w])", re.IGNORECASE)
_SPLIT_RE = re.compile(r"[.;]\s+|;\s*|,\s*(?:and\s+)?|\s+and\s+|\s+while\s+|\s+but\s+")
DEFAULT_RAY_M = 150.0  # a direction without a distance: assume it is this far


@dataclass(frozen=True)
class Relation:
    """The goal relative to landmarks: an offset vector, a direction ray, or a midpoint."""

    kind: str  # "offset", "ray", "between"
    landmarks: tuple[str, ...]
    direction: int | None = None  # 0..7 compass index
    distance: float | None = None  # metres

    def vector(self) -> np.ndarray:
        """Unit (or scaled) east-north vector of the direction."""
        r = math.radians(45.0 * (self.direction or 0))
        return np.array([math.sin(r), math.cos(r)]) * (self.distance if self.distance else 1.0)


def _find_names(text: str, names: list[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping mentions of gazetteer names, longest names first."""
    spans: list[tuple[int, int, str]] = []
    for name in sorted(set(names), key=len, reverse=True):
        for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            if all(m.end() <= s or m.start() >= e for s, e, _ in spans):
                spans.append((m.start(), m.end(), name))
    return sorted(spans)


def parse_distance(text: str) -> float | None:
    m = DISTANCE_RE.search(text)
    if not m:
        if re.search(r"half a (?:kilomet|km)", text, re.IGNORECASE):
            return 500.0
        return None
    value = float(m.group("num").replace(",", "."))
    return value * 1000.0 if m.group("unit").lower().startswith("k") else value


def parse_relations(description: str, landmark_names: list[str]) -> list[Relation]:
    """All landmark relations stated in `description`."""
    text = " ".join(description.split())
    mentions = _find_names(text, landmark_names)
    masked = list(text)
    for s, e, _ in mentions:  # names must not be read as directions or distances ("WTC", "G18")
        masked[s:e] = "\x00" * (e - s)
    masked_text = "".join(masked)
    relations: list[Relation] = []
    used: set[int] = set()
    for m in re.finditer(r"between\s+(\x00+)\s+and\s+(\x00+)", masked_text, re.IGNORECASE):
        a = next(x for x in mentions if x[0] == m.start(1))
        b = next(x for x in mentions if x[0] == m.start(2))
        relations.append(Relation("between", (a[2], b[2])))
        used.update({a[0], b[0]})
    # Clause boundaries: each clause holds at most one landmark relation; when the
    # landmark's own clause has no direction ("From Kiasma, head NE ..."), the
    # next clause, then the previous one, is read if it names no other landmark.
    bounds = [0] + [m.end() for m in _SPLIT_RE.finditer(masked_text)] + [len(masked_text) + 1]
    clauses = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]

    def clause_of(pos: int) -> int:
        return next(i for i, (lo, hi) in enumerate(clauses) if lo <= pos < hi)

    holders = {clause_of(s) for s, _, _ in mentions}
    for s, e, name in mentions:
        if s in used:
            continue
        k = clause_of(s)
        for j in (k, k + 1, k - 1):
            if not 0 <= j < len(clauses) or (j != k and j in holders):
                continue
            clause = masked_text[clauses[j][0]:clauses[j][1]].replace("\x00", " ")
            d = DIRECTION_RE.search(clause)
            if d:
                direction = direction_index(d.group("word") or d.group("abbr"))
                dist = parse_distance(clause) or (parse_distance(masked_text[clauses[k][0]:clauses[k][1]]) if j != k else None)
                relations.append(Relation("offset" if dist else "ray", (name,), direction, dist))
                break
    return relations


def estimate_goal(relations: list[Relation], positions: dict[str, np.ndarray]) -> np.ndarray | None:
    """Goal position from relations, given positions of (some of) their landmarks.

    Offsets give points, "between" gives a midpoint, and two or more rays meet
    where their lines pass closest (least squares). Points are averaged.
    Returns None when no usable landmark position is known.
    """
    points: list[np.ndarray] = []
    rays: list[tuple[np.ndarray, np.ndarray]] = []
    for r in relations:
        if not all(n in positions for n in r.landmarks):
            continue
        if r.kind == "between":
            points.append((positions[r.landmarks[0]] + positions[r.landmarks[1]]) / 2.0)
        elif r.kind == "offset":
            points.append(positions[r.landmarks[0]] + r.vector())
        else:
            rays.append((positions[r.landmarks[0]], r.vector()))
    if len(rays) >= 2:
        a = np.zeros((2, 2))
        b = np.zeros(2)
        for p, v in rays:
            n = np.eye(2) - np.outer(v, v)  # projector onto the line's normal
            a += n
            b += n @ p
        if abs(np.linalg.det(a)) > 1e-6:
            points.append(np.linalg.solve(a, b))
        else:
            points.extend(p + v * DEFAULT_RAY_M for p, v in rays)
    elif len(rays) == 1:
        p, v = rays[0]
        points.append(p + v * DEFAULT_RAY_M)
    if not points:
        return None
    return np.mean(points, axis=0)
