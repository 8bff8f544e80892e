"""Field phrasings: how people who fly, search, deliver and walk say where a place is (dev side only).

Why: the 12 families in `phrasing.py` are the `test` split's; a reader whose rules
were designed on them still misses how operators actually write (issue #34):
bearings in degrees ("bearing 045 from Kiasma, range 400 m", "on the 270
radial"), feet, yards and miles, references back ("some 550 m west of it",
"from that building"), directions in legs ("walk 140 m north, then 140 m
east"), questions, corrections, a goal name followed by any verb, the
reference named last. These families are written from that practice, apart
from the reader, and are the DEV side: reading rules may be designed on them
(`aerie bench instructions --split field-dev`, `bench/tasks/helsinki_field_dev.json`);
the `test` split keeps the original families.

Unlike `phrasing.FAMILIES`, a field family gets the exact truth (distance and
`bearing_deg`, from `ordinary.true_offset`) and rounds it itself, because the
rounding depends on what it writes (feet to 50 or 100 ft, a bearing to 5 or
10 degrees, each leg of a walk to 10 or 50 m). It returns the text and the
label, which is exactly what the text says (the words they write with are
`field_words.py`):

- a written bearing in degrees: `bearing_deg` = that number, `direction` its 8-point sector;
- legs: ONE offset, the vector sum of the written legs (distance and exact bearing), direction its sector;
- compass words only: `bearing_deg` None, `direction` the word's;
- a distance in ft / yd / mi / NM: the metres the written figure means (1 ft = 0.3048 m,
  1 yd = 0.9144 m, 1 mi = 1609.344 m, 1 NM = 1852 m);
- a correction: the corrected value, never the retracted one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim.benchmark.compass import ABBREV
from sim.benchmark.field_words import (bearing_three, bearing_words, compass_relation, imperial, legs_of, legs_sum,
                                       legs_text, metres_short, metric, nautical, round_bearing, with_bearing)
from sim.benchmark.phrasing import Truth, _approx, _dir, _end, _goal, _offset, _pick, people_round

FieldFamily = Callable[[Truth, str, str, np.random.Generator], tuple[str, Truth]]


# --- the families -------------------------------------------------------------------------------

def atc_bearing(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """Pilot and ATC phrasing: "Café X: bearing 045 from Kiasma, range 400 m", "the 270 radial, 0.2 NM out"."""
    (r,) = _offset(truth, 1)
    b = round_bearing(r.bearing_deg, rng)
    nm = nautical(r.distance_m, rng) if rng.random() < 0.3 else None
    dist, m = nm if nm else metric(r.distance_m, rng)
    lm, g, gs = r.landmarks[0], _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    b3, bw = bearing_three(b, rng), bearing_words(b, rng)
    compact = dist.replace(" ", "").replace("nauticalmiles", "NM") if nm else f"{m}m"  # "045/0.3NM", "045/400m"
    text = _end(_pick(rng, [
        f"{gs}: bearing {b3} from {lm}, range {dist}",
        f"From {lm}, fly heading {b3} for {dist}; {g} is there",
        f"{gs} is on the {b3} radial from {lm}, {dist} out",
        f"Proceed to {g}, {dist} from {lm} on a bearing of {bw}",
        f"{gs} bears {b3} from {lm} at {dist}",
        f"Target {g}. Position {lm} {b3}/{compact}",
        f"Route {lm} direct, then heading {b3}, {dist} to {g}",
    ]))
    return text, (with_bearing(r, b, m),)


def sar_briefing(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """Search-and-rescue briefings: a datum, an objective, compass points or a bearing, km with a comma."""
    (r,) = _offset(truth, 1)
    dist, m = metric(r.distance_m, rng, comma_km=True)
    lm, g = r.landmarks[0], _goal(goal_name, goal_kind, rng)
    if rng.random() < 0.4:
        b = round_bearing(r.bearing_deg, rng)
        bw = bearing_words(b, rng)
        text = _pick(rng, [
            f"Datum: {lm}. Objective: {g}, {dist} from datum on bearing {bw}.",
            f"Team 2, your task is {g}. It lies {dist} from {lm}, bearing {bw}.",
            f"Search briefing. Reference point {lm}. Subject reported at {g}, bearing {bw} from the reference, {dist}.",
            f"LKP {g}: {dist}, bearing {bw} from {lm}. Proceed and confirm.",
        ])
        return text, (with_bearing(r, b, m),)
    w, ab = _dir(r.direction, rng), ABBREV[r.direction]
    text = _pick(rng, [
        f"Datum: {lm}. Objective: {g}, approx. {dist} {ab} of datum.",
        f"Search briefing. Reference point is {lm}. Subject last seen at {g}, roughly {dist} {w} of the reference point.",
        f"LKP {g}, reported {dist} {w} of {lm}. Proceed and confirm.",
        f"Sector task for the drone team: locate {g}, {dist} to the {w} of {lm}.",
        f"All units: casualty at {g}, approximately {dist} {ab} of {lm}.",
    ])
    return text, (compass_relation(r, m),)


def work_order(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """Delivery and inspection work orders: fields, ticket numbers, abbreviations."""
    (r,) = _offset(truth, 1)
    m = people_round(r.distance_m)
    lm, ab, w = r.landmarks[0], ABBREV[r.direction], _dir(r.direction, rng)
    num = int(rng.integers(100, 9999))
    if rng.random() < 0.25:
        b = round_bearing(r.bearing_deg, rng)
        text = _pick(rng, [
            f"Job #{num}\nSite: {goal_name}\nRef: {lm}\nDistance: {m} m\nBearing: {bearing_three(b, rng)}°",
            f"WO-{num} | Inspect: {goal_name} | From {lm}: {m} m @ {bearing_three(b, rng)}",
        ])
        return text, (with_bearing(r, b, m),)
    text = _pick(rng, [
        f"WO {num}: deliver to {goal_name}. Nearest landmark: {lm}. Location: {m} m {ab} of landmark.",
        f"Job #{num}\nSite: {goal_name}\nRef: {lm}\nDistance: {m} m\nDirection: {_pick(rng, [ab, w])}",
        f"Inspection request - {goal_name}, approx {m} m {w} of {lm}. Photograph the signage and the roof.",
        f"Drop-off: {goal_name} (approx. {m}m {ab} of {lm})",
        f"Pickup at {goal_name}, {m} m {w} from {lm}; customer waiting.",
        f"Ticket {num} - site {goal_name} / ref {lm} / {m} m {ab}",
    ])
    return text, (compass_relation(r, m),)


def walking_legs(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """Directions in legs: "From Kiasma walk 140 m north, then 140 m east to Café X" (the label is the sum)."""
    (r,) = _offset(truth, 1)
    legs = legs_of(r.distance_m, r.bearing_deg, rng)
    d, b = legs_sum(legs)
    lm, g, gs = r.landmarks[0], _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    verb = _pick(rng, ["walk", "go", "fly", "head"])
    route = legs_text(legs, rng, verb)
    route_cap = route[0].upper() + route[1:]
    text = _pick(rng, [
        f"From {lm} {route} to reach {g}.",
        f"Start at {lm}: {route}. {gs} is there.",
        f"To get to {g}, start at {lm}, {route}.",
        f"{gs}? From {lm}, {route}.",
        f"Begin at {lm}. {route_cap} and you're at {g}.",
    ])
    return text, (with_bearing(r, b, d),)


def question(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """A request as a question: "Can you check Café X? It should be ~300 m NE of Kiasma"."""
    (r,) = _offset(truth, 1)
    m = people_round(r.distance_m)
    d = _pick(rng, ["~", "about ", "roughly ", "", "maybe "]) + metres_short(m, rng)
    lm, w = r.landmarks[0], _pick(rng, [_dir(r.direction, rng), ABBREV[r.direction]])
    g = _goal(goal_name, goal_kind, rng)
    text = _pick(rng, [
        f"Can you check {g}? It should be {d} {w} of {lm}.",
        f"Could you fly over to {g}? It's {d} {w} of {lm}, I think.",
        f"Is {g} open today? It's the place {d} {w} of {lm}, have a look.",
        f"Where exactly is {g}? Somewhere {d} {w} of {lm}, can you find it?",
        f"Would you take a look at {g}, {d} {w} of {lm}?",
        f"Any chance you could find {g} for me? Should be {d} {w} from {lm}.",
        f"Can you see {g} from up there? About {d} {w} of {lm}?",
    ])
    return text, (compass_relation(r, m),)


def correction(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """A slip corrected in the same message: "400 m north of Kiasma, sorry, north-east"; the label is the correction."""
    (r,) = _offset(truth, 1)
    m = people_round(r.distance_m)
    lm, g, gs = r.landmarks[0], _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    right = _dir(r.direction, rng)
    wrong = _dir((r.direction + int(_pick(rng, [1, -1, 2, -2, 4]))) % 8, rng)
    wrong_m = m + int(_pick(rng, [-100, -50, 50, 100, 150])) if m > 160 else m + int(_pick(rng, [30, 50, 100]))
    what = _pick(rng, ["direction", "distance", "both", "bearing"])
    if what == "bearing":
        b = round_bearing(r.bearing_deg, rng)
        bad = (b + int(_pick(rng, [-20, -10, 10, 20, 90, 180]))) % 360
        text = _pick(rng, [
            f"{gs}, bearing {bearing_three(bad, rng)} from {lm}, correction, bearing {bearing_three(b, rng)}, {m} m.",
            f"From {lm} fly heading {bearing_three(bad, rng)}, no, {bearing_three(b, rng)}, for {m} m to {g}.",
        ])
        return text, (with_bearing(r, b, m),)
    if what == "direction":
        text = _pick(rng, [
            f"{gs} is {m} m {wrong} of {lm}, sorry, {right}.",
            f"{gs} is {m} m {wrong} of {lm} \u2014 sorry, {right}.",
            f"Go {m} m {wrong}, I mean {right}, of {lm} to find {g}.",
            f"{gs}: {m} m not {wrong} but {right} of {lm}.",
            f"From {lm} head {wrong}... correction, {right}, for {m} m. {gs} is there.",
        ])
    elif what == "distance":
        text = _pick(rng, [
            f"{gs} is {wrong_m} m {right} of {lm}. Correction: {m} m.",
            f"{gs} is about {wrong_m}, make that {m} m {right} of {lm}.",
            f"Head {right} from {lm} for {wrong_m} m, no wait, {m} m, and look for {g}.",
        ])
    else:
        text = _pick(rng, [
            f"{gs} is {wrong_m} m {wrong} of {lm}. Scratch that, it's {m} m {right} of {lm}.",
            f"{gs}: {wrong_m} m {wrong} of {lm}. Sorry, my mistake, {m} m {right} of {lm}.",
        ])
    return text, (compass_relation(r, m),)


def imperial_units(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """Feet, yards and miles (with fractions): "Café X is about 1,300 ft north of Kiasma"."""
    (r,) = _offset(truth, 1)
    dist, m = imperial(r.distance_m, rng)
    d = _pick(rng, ["about ", "roughly ", "around ", ""]) + dist
    lm, w, ab = r.landmarks[0], _dir(r.direction, rng), ABBREV[r.direction]
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    text = _end(_pick(rng, [
        f"{gs} is {d} {w} of {lm}",
        f"From {lm}, go {d} {w} to {g}",
        f"{gs}: {d} {ab} of {lm}",
        f"Head {w} from {lm}, {d}, and you'll find {g}",
        f"{gs} sits {d} to the {w} of {lm}",
    ]))
    return text, (compass_relation(r, m),)


def refer_back(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """The landmark named first and referred back to: "…, some 550 m west of it", "from that building", "from there"."""
    (r,) = _offset(truth, 1)
    m = people_round(r.distance_m)
    d = _approx(rng) + metres_short(m, rng)
    lm, w = r.landmarks[0], _dir(r.direction, rng)
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    text = _pick(rng, [
        f"Start at {lm}. The place I want is {g}, some {metres_short(m, rng)} {w} of it.",
        f"You know {lm}? {gs} is {d} {w} of it.",
        f"Take {lm} as your reference. From that building, {g} is {d} to the {w}.",
        f"Find {lm} first. From there, fly {d} {w} and you'll reach {g}.",
        f"{lm} is easy to spot. {gs} is {d} {w} from there.",
        f"Look for {lm}; {g} is {d} {w} of that landmark.",
        f"See {lm}? Go {d} {w} of it and you're at {g}.",
    ])
    return text, (compass_relation(r, m),)


_VERB_TAILS = [
    "should be right there", "ought to be on the corner", "will be on your left", "is what we need",
    "has a sign out front", "must be somewhere there", "needs a photo of its entrance", "might be behind a tree",
    "opens at nine", "called us this morning", "reported a leak on the roof",
]


def name_then_verb(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """The goal's name followed by any verb: "Go 400 m north of Kiasma, and Mumin Kaffe should be right there"."""
    (r,) = _offset(truth, 1)
    m = people_round(r.distance_m)
    d = _approx(rng) + metres_short(m, rng)
    lm, w = r.landmarks[0], _dir(r.direction, rng)
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    tail = _pick(rng, _VERB_TAILS)
    text = _pick(rng, [
        f"Go {d} {w} of {lm}, and {g} {tail}.",
        f"{d[0].upper() + d[1:]} {w} of {lm} \u2014 {g} {tail}.",
        f"Fly {w} from {lm} for {d}; {g} {tail}.",
        f"{gs} {tail}. It's {d} {w} of {lm}.",
        f"Head {d} {w} from {lm} and {g} {tail}.",
        f"{gs} needs a delivery; it is {d} {w} of {lm}.",
    ])
    return text, (compass_relation(r, m),)


def reference_last(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> tuple[str, Truth]:
    """The reference named last: "400 m north-east, that's where Café X is, measured from Kiasma"."""
    (r,) = _offset(truth, 1)
    m = people_round(r.distance_m)
    d = _approx(rng) + metres_short(m, rng)
    lm, w, ab = r.landmarks[0], _dir(r.direction, rng), ABBREV[r.direction]
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    d_cap = d[0].upper() + d[1:]
    text = _pick(rng, [
        f"{d_cap} {w}, that's where {g} is, measured from {lm}.",
        f"{gs}: {d} {w}, counting from {lm}.",
        f"Go {d} {w} to get to {g}, starting from {lm}.",
        f"{metres_short(m, rng)} {ab}, reference {lm}: {g}.",
        f"To reach {g}, fly {w} for {d}. Your starting point for that is {lm}.",
        f"{gs} is {d} to the {w}, if you take {lm} as the reference.",
    ])
    return text, (compass_relation(r, m),)


FIELD_FAMILIES: dict[str, FieldFamily] = {
    "atc_bearing": atc_bearing, "sar_briefing": sar_briefing, "work_order": work_order,
    "walking_legs": walking_legs, "question": question, "correction": correction, "imperial": imperial_units,
    "refer_back": refer_back, "name_then_verb": name_then_verb, "reference_last": reference_last,
}
FIELD_FAMILY_NAMES: tuple[str, ...] = tuple(FIELD_FAMILIES)
FIELD_SHAPE: dict[str, str] = {f: "offset1" for f in FIELD_FAMILY_NAMES}
