"""Goal descriptions in varied natural language, relative to landmarks.

The description is the agent's only knowledge of the goal, so it must not
follow one template: the landmark comes first or last, one or two landmarks
are used, distances are written in metres or kilometres with or without
"about", directions as words or abbreviations. Every description is checked
against the truth: read back with `understand.parse_relations` and resolved
with the true landmark positions, it must land within `MAX_ESTIMATE_ERROR`
of the goal (so the task is solvable from its words, though not exactly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onboard.map.city import Building, Poi, polygon_area
from onboard.map.compass import bearing_deg
from sim.benchmark.compass import index_of_bearing, spellings
from sim.benchmark.understand import estimate_goal, parse_relations

MAX_REFERENCE_M = 700.0  # landmarks further from the goal than this are not used
MIN_LANDMARK_AREA_M2 = 250.0  # kiosks and boat sheds are no landmarks to steer by
MAX_ESTIMATE_ERROR = 160.0  # metres between the words' implied position and the goal

KIND_WORDS = {
    "cafe": "café", "restaurant": "restaurant", "bar": "bar", "pub": "pub", "fast_food": "snack bar",
    "clothes": "clothes shop", "shoes": "shoe shop", "books": "bookshop", "bank": "bank", "pharmacy": "pharmacy",
    "hotel": "hotel", "artwork": "artwork", "memorial": "memorial", "museum": "museum", "jewelry": "jeweller",
    "hairdresser": "hairdresser", "supermarket": "supermarket", "convenience": "kiosk", "gallery": "gallery",
    "theatre": "theatre", "cinema": "cinema", "attraction": "attraction", "ice_cream": "ice-cream parlour",
}


@dataclass(frozen=True)
class Description:
    text: str
    landmarks: tuple[str, ...]
    style: str  # which construction was used: offset1, offset2, rays2, between


def _fmt_distance(d: float, rng: np.random.Generator) -> str:
    approx = rng.choice(["about ", "roughly ", "around ", "approximately ", "~", "", "some "])
    if d >= 450 and rng.random() < 0.5:
        km = round(d / 100.0) / 10.0
        unit = rng.choice(["km", " km", " kilometres"])
        return f"{approx}{km:g}{unit}".replace("~ ", "~")
    step = 10 if d < 200 else 50
    m = max(step, int(round(d / step) * step))
    unit = rng.choice([" m", "m", " metres", " meters"])
    return f"{approx}{m}{unit}"


def _dir(index: int, rng: np.random.Generator) -> str:
    return str(rng.choice(spellings(index)))


def _goal_phrase(goal: Poi, rng: np.random.Generator) -> str:
    kind = KIND_WORDS.get(goal.kind)
    if kind and rng.random() < 0.5:
        article = "an" if kind[0] in "aeiou" else "a"
        return str(rng.choice([f"the {kind} {goal.name}", f"{goal.name} ({article} {kind})"]))
    return goal.name


def _offset_sentence(g: str, dist: str, dirw: str, lm: str, rng: np.random.Generator) -> str:
    forms = [
        f"{g} is {dist} {dirw} of {lm}.",
        f"{g} lies {dist} to the {dirw} of {lm}.",
        f"From {lm}, head {dirw} for {dist} to reach {g}.",
        f"Starting at {lm}, go {dist} {dirw}; {g} is there.",
        f"Look for {g} {dist} {dirw} of {lm}.",
        f"{lm}: {g} is {dist} {dirw} from it.",
        f"Find {g}. It is {dist} {dirw} of {lm}.",
    ]
    return str(rng.choice(forms))


def reference_landmarks(goal_xy: np.ndarray, landmarks: list[Building]) -> list[Building]:
    """Landmarks a person would use for this goal: big enough, not too far, nearest first."""
    cands = [lm for lm in landmarks if polygon_area(lm.footprint) >= MIN_LANDMARK_AREA_M2]
    cands = [lm for lm in cands if 40.0 <= np.hypot(*(lm.centroid - goal_xy)) <= MAX_REFERENCE_M]
    return sorted(cands, key=lambda lm: np.hypot(*(lm.centroid - goal_xy)))


def _compose(goal: Poi, refs: list[Building], style: str, rng: np.random.Generator) -> tuple[str, tuple[str, ...]]:
    g = _goal_phrase(goal, rng)
    a = refs[0]
    va = goal.xy - a.centroid
    da, ia = float(np.hypot(*va)), index_of_bearing(bearing_deg(*va))
    if style == "offset1":
        return _offset_sentence(g, _fmt_distance(da, rng), _dir(ia, rng), a.name, rng), (a.name,)
    b = refs[1]
    vb = goal.xy - b.centroid
    db, ib = float(np.hypot(*vb)), index_of_bearing(bearing_deg(*vb))
    if style == "offset2":
        forms = [
            f"{g} is {_fmt_distance(da, rng)} {_dir(ia, rng)} of {a.name} and {_fmt_distance(db, rng)} {_dir(ib, rng)} of {b.name}.",
            f"From {a.name} it is {_fmt_distance(da, rng)} {_dir(ia, rng)}, from {b.name} {_fmt_distance(db, rng)} {_dir(ib, rng)}: that is where {g} is.",
            f"Find {g}: {_fmt_distance(da, rng)} {_dir(ia, rng)} of {a.name}; {_fmt_distance(db, rng)} {_dir(ib, rng)} of {b.name}.",
        ]
    elif style == "rays2":
        forms = [
            f"{g} is {_dir(ia, rng)} of {a.name} and {_dir(ib, rng)} of {b.name}.",
            f"Go {_dir(ia, rng)} of {a.name} and {_dir(ib, rng)} of {b.name} to find {g}.",
            f"Look {_dir(ia, rng)} of {a.name}, but {_dir(ib, rng)} of {b.name}; {g} is there.",
        ]
    else:  # between
        forms = [
            f"{g} is between {a.name} and {b.name}.",
            f"Halfway between {a.name} and {b.name} you will find {g}.",
            f"{g} lies roughly between {a.name} and {b.name}.",
        ]
    return str(rng.choice(forms)), (a.name, b.name)


def describe_goal(goal: Poi, landmarks: list[Building], rng: np.random.Generator, tries: int = 40,
                  prominence: dict[str, int] | None = None) -> Description:
    """A checked natural-language description of `goal`; raises ValueError if none fits.

    With `prominence` (nodes a landmark is seen from), references are drawn
    among the 6 most prominent landmarks within reach, as people name the
    buildings everyone sees; without it, among the 6 nearest.
    """
    refs_all = reference_landmarks(goal.xy, landmarks)
    if prominence:
        refs_all = sorted(refs_all, key=lambda lm: -prominence.get(lm.name, 0))
    if not refs_all:
        raise ValueError(f"no landmark within {MAX_REFERENCE_M:.0f} m of {goal.name!r}")
    names = [lm.name for lm in landmarks]
    positions = {lm.name: lm.centroid for lm in landmarks}
    styles = ["offset1", "offset2", "rays2", "between"]
    weights = np.array([0.5, 0.2, 0.2, 0.1])
    for _ in range(tries):
        style = str(rng.choice(styles, p=weights))
        pool = refs_all[:6]
        if style == "offset1":
            refs = [pool[int(rng.integers(len(pool)))]]
        else:
            if len(pool) < 2:
                continue
            i, j = rng.choice(len(pool), size=2, replace=False)
            refs = [pool[int(i)], pool[int(j)]]
            if style == "between":
                mid = (refs[0].centroid + refs[1].centroid) / 2.0
                span = np.hypot(*(refs[0].centroid - refs[1].centroid))
                if span < 120.0 or np.hypot(*(mid - goal.xy)) > 0.25 * span:
                    continue
        text, used = _compose(goal, refs, style, rng)
        if text.startswith("the "):  # our article, never the start of a name
            text = "The " + text[4:]
        if goal.name not in text:
            continue
        rel = parse_relations(text, names)
        est = estimate_goal(rel, positions)
        if est is None or len(rel) != (1 if style == "offset1" else (1 if style == "between" else 2)):
            continue
        if np.hypot(*(est - goal.xy)) <= MAX_ESTIMATE_ERROR:
            return Description(text=text, landmarks=used, style=style)
    raise ValueError(f"could not describe {goal.name!r} within {MAX_ESTIMATE_ERROR:.0f} m")
