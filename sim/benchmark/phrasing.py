"""Phrasing families: one structured truth about a goal, written the many ways people write it.

Why: the public task file's descriptions come from a few templates in
`describe.py`, so an agent can do well by matching those templates instead of
reading. Each family here stresses one thing a reader has to get right (who
is the grammatical subject, numbers in words, units, case, two sentences,
form-like labels, abbreviations, rays without distances), each with several
internal variants drawn by the caller's rng.

The label is exactly what the text says: `phrase` first rounds the true
distances the way people round (`written_truth`), then the family writes those
rounded values and nothing else, so the `TruthRelation`s it returns are the
label (the onboard `Relation` format: kind, landmarks, direction 0..7 with
0 = north clockwise, distance in metres). A direction is always the goal
relative to the landmark, even where the text states the inverse (`subject`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from sim.benchmark.compass import ABBREV, word_spellings
from sim.benchmark.describe import KIND_WORDS

T = TypeVar("T")


@dataclass(frozen=True)
class TruthRelation:
    """The goal relative to landmarks, as the onboard parser's `Relation` states it.

    kind "offset": `distance_m` in `direction` from the landmark to the goal;
    "ray": only the direction; "between": the midpoint of two landmarks.
    """

    kind: str
    landmarks: tuple[str, ...]
    direction: int | None = None  # 0..7, 0 = north, clockwise; landmark -> goal
    distance_m: float | None = None
    # The bearing landmark -> goal in degrees (0 = north, clockwise) where the text states one
    # (in degrees, or as legs summed); `direction` is then always its nearest 8-point sector.
    bearing_deg: float | None = None

    def label(self) -> dict:
        """The label dict written to task files: {"kind", "landmarks", "direction", "distance", "bearing"}."""
        distance = None if self.distance_m is None else int(round(self.distance_m))
        bearing = None if self.bearing_deg is None else round(self.bearing_deg % 360.0, 1)
        return {"kind": self.kind, "landmarks": list(self.landmarks), "direction": self.direction,
                "distance": distance, "bearing": bearing}


@dataclass(frozen=True)
class Phrased:
    """A description and its label (the relations with the distances the text states)."""

    family: str
    text: str
    relations: tuple[TruthRelation, ...]


Truth = tuple[TruthRelation, ...]
Family = Callable[[Truth, str, str, np.random.Generator], str]


# --- small pieces shared by the families -------------------------------------------------------

def _pick(rng: np.random.Generator, options: Sequence[T]) -> T:
    return options[int(rng.integers(len(options)))]


def _round_to(d: float, step: int) -> int:
    return max(step, int(math.floor(d / step + 0.5)) * step)


def people_round(d: float) -> int:
    """Metres as people say them: to 10 m below 200 m, to 50 m from there on."""
    return _round_to(d, 10 if d < 200 else 50)


def words_round(d: float, rng: np.random.Generator) -> int:
    """A distance for number words: a quarter kilometre or 50 m step when within 5 %, else 10 m."""
    coarse = sorted({v for v in (_round_to(d, 250), _round_to(d, 50)) if abs(v - d) <= 0.05 * d})
    return _pick(rng, coarse) if coarse else _round_to(d, 10)


_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_words(n: int) -> str:
    """British English words for 0 <= n < 1,000,000 ("five hundred and fifty")."""
    if not 0 <= n < 1_000_000:
        raise ValueError(f"no words for {n}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        head, rest = f"{_ONES[n // 100]} hundred", n % 100
        return head if rest == 0 else f"{head} and {number_words(rest)}"
    head, rest = f"{number_words(n // 1000)} thousand", n % 1000
    if rest == 0:
        return head
    return f"{head} and {number_words(rest)}" if rest < 100 else f"{head} {number_words(rest)}"


_QUARTER_KM = {
    250: ["a quarter of a {km}", "a quarter {km}"],
    500: ["half a {km}", "a half {km}"],
    750: ["three quarters of a {km}"],
    1000: ["a {km}", "one {km}"],
    1250: ["one and a quarter {km}s", "a {km} and a quarter"],
    1500: ["a {km} and a half", "one and a half {km}s"],
}


def distance_in_words(m: int, rng: np.random.Generator) -> str:
    """`m` metres in words: "four hundred metres", "half a kilometre", "one point two kilometres"."""
    metre, km = _pick(rng, ["metre", "meter"]), _pick(rng, ["kilometre", "kilometer"])
    forms = [f"{number_words(m)} {metre}s"]
    forms += [f.format(km=km) for f in _QUARTER_KM.get(m, [])]
    if m >= 1000 and m % 100 == 0 and m % 1000 != 0:
        forms.append(f"{number_words(m // 1000)} point {_ONES[(m // 100) % 10]} {km}s")
    return _pick(rng, forms)


def _metres(m: float, rng: np.random.Generator) -> str:
    return _pick(rng, [f"{m:.0f} m", f"{m:.0f} metres", f"{m:.0f} meters", f"{m:.0f}m"])


def _approx(rng: np.random.Generator) -> str:
    return _pick(rng, ["about ", "around ", "roughly ", "", ""])


def _dir(index: int, rng: np.random.Generator) -> str:
    return _pick(rng, word_spellings(index))


def _goal(name: str, kind: str, rng: np.random.Generator, start: bool = False) -> str:
    """The goal's name verbatim, sometimes with what kind of place it is."""
    word = KIND_WORDS.get(kind)
    r = rng.random()
    if word and r < 0.2:
        return f"{'The' if start else 'the'} {word} {name}"
    if word and r < 0.35:
        return f"{name} ({'an' if word[0] in 'aeiou' else 'a'} {word})"
    return name


def _end(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _offset(truth: Truth, n: int = 1) -> list[TruthRelation]:
    rels = [r for r in truth if r.kind == "offset"]
    if len(rels) != n or len(truth) != n:
        raise ValueError(f"this family needs {n} offset relation(s), got {truth}")
    return rels


# --- the families -----------------------------------------------------------------------------

def object_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Goal first, landmark as the object: "Café X is about 400 m north of Postitalo."."""
    (r,) = _offset(truth)
    g, lm = _goal(goal_name, goal_kind, rng, start=True), r.landmarks[0]
    d, w = _approx(rng) + _metres(r.distance_m, rng), _dir(r.direction, rng)
    return _end(_pick(rng, [f"{g} is {d} {w} of {lm}", f"{g} lies {d} to the {w} of {lm}",
                            f"{g} is located {d} {w} of {lm}", f"{g} can be found {d} {w} of {lm}",
                            f"{g} sits {d} to the {w} of {lm}"]))


def subject_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """The landmark is the subject: "Postitalo is 400 m south of Café X" (the goal is north of it)."""
    (r,) = _offset(truth)
    g, lm = _goal(goal_name, goal_kind, rng), r.landmarks[0]
    d, w = _approx(rng) + _metres(r.distance_m, rng), _dir((r.direction + 4) % 8, rng)
    return _end(_pick(rng, [f"{lm} is {d} {w} of {g}", f"{lm} lies {d} to the {w} of {g}",
                            f"You'll find {lm} {d} {w} of {g}", f"{lm} stands {d} {w} of {g}"]))


def imperative_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """An instruction from the landmark: "From Postitalo, head north for 400 m to reach Café X."."""
    (r,) = _offset(truth)
    g, lm = _goal(goal_name, goal_kind, rng), r.landmarks[0]
    d, w = _approx(rng) + _metres(r.distance_m, rng), _dir(r.direction, rng)
    return _end(_pick(rng, [f"From {lm}, head {w} for {d} to reach {g}", f"Go {d} {w} from {lm} and look for {g}",
                            f"Fly {w} {d} from {lm}; {g} is there", f"Starting at {lm}, fly {d} {w} to {g}",
                            f"Head {w} from {lm} for {d} and you will reach {g}"]))


def number_words_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Distances in words: "Café X is about half a kilometre north-east of Postitalo."."""
    (r,) = _offset(truth)
    lm = r.landmarks[0]
    d = _pick(rng, ["about ", "roughly ", "some ", ""]) + distance_in_words(int(r.distance_m), rng)
    w = _dir(r.direction, rng)
    forms = [f"{_goal(goal_name, goal_kind, rng, start=True)} is {d} {w} of {lm}",
             f"From {lm}, go {d} {w} to find {_goal(goal_name, goal_kind, rng)}",
             f"{_goal(goal_name, goal_kind, rng, start=True)} lies {d} to the {w} of {lm}"]
    return _end(_pick(rng, forms))


def units_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Digits with every unit spelling: "400m", "0.4 km", "0,4 km", "~400 meters", "c. 400 m"."""
    (r,) = _offset(truth)
    m = int(r.distance_m)
    units = [f"{m}m", f"{m} m", f"{m} metres", f"{m} meters"]
    if m % 100 == 0:  # one decimal of a kilometre says exactly this
        km = f"{m / 1000:g}"
        units += [f"{km}km", f"{km} km", f"{km.replace('.', ',')} km", f"{km} kilometres"]
    d = _pick(rng, ["about ", "approx. ", "~", "roughly ", "c. ", ""]) + _pick(rng, units)
    g, lm, w = _goal(goal_name, goal_kind, rng, start=True), r.landmarks[0], _dir(r.direction, rng)
    return _end(_pick(rng, [f"{g} is {d} {w} of {lm}", f"{g}: {d} {w} of {lm}", f"{g} lies {d} to the {w} of {lm}"]))


_NO_DECOMPOSITION = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "ł": "l", "đ": "d", "ð": "d",
                                   "þ": "th", "ı": "i"})


def plain_lower(text: str) -> str:
    """Lower case without diacritics, as typed on a phone: "Pääesikunta" -> "paaesikunta"."""
    t = unicodedata.normalize("NFKD", text.lower()).translate(_NO_DECOMPOSITION)
    return "".join(c for c in t if not unicodedata.combining(c)).lower()


def lowercase_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """A sentence of another family all in lower case, names de-accented, directions as words."""
    inner = _pick(rng, [object_family, imperative_family, two_sentence_family])
    return plain_lower(inner(truth, goal_name, goal_kind, rng))


def two_relations_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Two landmark offsets: "Café X is 400 m north of A and 250 m west of B."."""
    a, b = _offset(truth, 2)
    la, lb = a.landmarks[0], b.landmarks[0]
    da, db = _approx(rng) + _metres(a.distance_m, rng), _approx(rng) + _metres(b.distance_m, rng)
    wa, wb = _dir(a.direction, rng), _dir(b.direction, rng)
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    return _end(_pick(rng, [f"{gs} is {da} {wa} of {la} and {db} {wb} of {lb}",
                            f"{gs} lies {da} to the {wa} of {la} and {db} to the {wb} of {lb}",
                            f"From {la} it is {da} {wa}, from {lb} {db} {wb}: that is where {g} is",
                            f"{gs}: {da} {wa} of {la}; {db} {wb} of {lb}"]))


def two_sentence_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Goal and relation in separate sentences: "Find Café X. It is about 400 m north of Postitalo."."""
    (r,) = _offset(truth)
    lm = r.landmarks[0]
    d, w = _approx(rng) + _metres(r.distance_m, rng), _dir(r.direction, rng)
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    return _pick(rng, [f"Find {g}. It is {d} {w} of {lm}.", f"Start at {lm}. {gs} is {d} to the {w}.",
                       f"{lm} is the reference. Go {d} {w} from there to {_end(g)}",
                       f"Your goal is {g}. From {lm}, it is {d} {w}."])


def label_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Form-like fields: "Goal: Café X\\nLandmark: Postitalo\\nOffset: 400 m N"."""
    (r,) = _offset(truth)
    lm, m = r.landmarks[0], f"{r.distance_m:.0f} m"
    w = _dir(r.direction, rng)
    return _pick(rng, [f"Target: {goal_name}. Reference: {lm}, then {m} heading {w}.",
                       f"Goal: {goal_name}\nLandmark: {lm}\nOffset: {m} {ABBREV[r.direction]}",
                       f"target={goal_name}; ref={lm}; {m} {w}"])


def between_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """The midpoint of two landmarks: "Halfway between A and B you will find Café X."."""
    if len(truth) != 1 or truth[0].kind != "between":
        raise ValueError(f"between needs one between relation, got {truth}")
    la, lb = truth[0].landmarks
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    return _end(_pick(rng, [f"{gs} is between {la} and {lb}", f"Halfway between {la} and {lb} you will find {g}",
                            f"{gs} lies roughly between {la} and {lb}", f"Midway between {la} and {lb} is {g}"]))


def abbrev_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Upper-case compass abbreviations, sometimes dotted: "Café X: 400 m NE of Postitalo", "S.W."."""
    (r,) = _offset(truth)
    ab = ABBREV[r.direction]
    if rng.random() < 0.35:
        ab = ".".join(ab) + "."
    lm, d = r.landmarks[0], _approx(rng) + _metres(r.distance_m, rng)
    g = _goal(goal_name, goal_kind, rng, start=True)
    return _end(_pick(rng, [f"{goal_name}: {d} {ab} of {lm}", f"{g} is {ab} of {lm} by {d}",
                            f"{g} \u2014 {d} {ab} from {lm}", f"{g}, {d} {ab} of {lm}"]))


def ray_family(truth: Truth, goal_name: str, goal_kind: str, rng: np.random.Generator) -> str:
    """Two directions without distances: "Café X is north of A and west of B."."""
    if len(truth) != 2 or any(r.kind != "ray" for r in truth):
        raise ValueError(f"ray needs two ray relations, got {truth}")
    a, b = truth
    la, lb, wa, wb = a.landmarks[0], b.landmarks[0], _dir(a.direction, rng), _dir(b.direction, rng)
    g, gs = _goal(goal_name, goal_kind, rng), _goal(goal_name, goal_kind, rng, start=True)
    return _end(_pick(rng, [f"{gs} is {wa} of {la} and {wb} of {lb}", f"Go {wa} of {la} and {wb} of {lb} to find {g}",
                            f"Look {wa} of {la} but {wb} of {lb}; {g} is there",
                            f"{gs} lies to the {wa} of {la} and to the {wb} of {lb}"]))


FAMILIES: dict[str, Family] = {
    "object": object_family, "subject": subject_family, "imperative": imperative_family,
    "number_words": number_words_family, "units": units_family, "lowercase": lowercase_family,
    "two_relations": two_relations_family, "two_sentence": two_sentence_family, "label": label_family,
    "between": between_family, "abbrev": abbrev_family, "ray": ray_family,
}
FAMILY_NAMES: tuple[str, ...] = tuple(FAMILIES)

# What truth each family writes: one offset, two offsets, one midpoint, or two rays.
SHAPES = ("offset1", "offset2", "between", "rays2")
FAMILY_SHAPE: dict[str, str] = {f: "offset1" for f in FAMILY_NAMES} | {
    "two_relations": "offset2", "between": "between", "ray": "rays2"}


def written_truth(family: str, truth: Truth, rng: np.random.Generator) -> Truth:
    """The truth with each distance replaced by the one the text will state.

    These families write compass words only, so no bearing in degrees is stated: it is dropped.
    """
    rounding = (lambda d: words_round(d, rng)) if family == "number_words" else people_round
    return tuple(replace(r, distance_m=float(rounding(r.distance_m)), bearing_deg=None)
                 if r.distance_m is not None else replace(r, bearing_deg=None) for r in truth)
