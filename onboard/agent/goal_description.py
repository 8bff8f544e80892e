"""Read the goal description ("about 300 m north-east of Kiasma") into relations to landmarks.

The description is the agent's only knowledge of the goal. The arithmetic
that turns it into a position is code, not a language model (PReP's lesson:
small models are poor at trigonometry). What is read here is the *shape* of
the goal: which named landmarks it is relative to, in which compass direction,
how far. Landmark names come from a gazetteer the agent is given (it knows the
city's landmarks by name, not where they are); where the landmarks are is
learned in flight from sightings (see `working_memory`).

Phrasings covered: distances in m / metres / meters / km / kilometres (with or
without "about", "~", "approx.", ...) or in words ("five hundred and fifty
metres", "a quarter of a kilometre": `spoken_numbers`), the 8 compass
directions as words (north-east, northeast, north east) or upper-case
abbreviations (NE, N.E.), the landmark before or after its direction ("From X,
head E for 200 m", "200 m E of X", "X: ... 200 m E from it"), the landmark as
the subject ("X is 400 m north of the café": the goal is *south* of X), label
forms on several lines ("Target: ... Reference: X, then 250 m heading south"),
two landmarks, and "between X and Y". Landmark names are matched ignoring case
and diacritics, with a typo tolerated (`landmark_names`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from onboard.agent.landmark_names import STARTERS, find_mentions
from onboard.agent.spoken_numbers import UNIT_WORDS, digits_for_words, unit_metres
from onboard.agent.text_fold import fold

# Compass index 0 = north, clockwise in 45 degree steps.
_WORDS = ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")
_ABBREVIATIONS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_DIRECTION = re.compile(
    r"(?i:\b(?P<word>(?:north|south)(?:[\s-]?(?:east|west))?|east|west)\b)"
    r"|(?<![\w.'’/-])(?P<abbr>NE|NW|SE|SW|N|E|S|W)(?![\w'’/-])"
    # two-letter abbreviations typed in lower case, where "of"/"from" shows they are directions ("350 m sw of")
    r"|(?<![\w.'’-])(?P<abbr2>ne|nw|se|sw)(?=\s+(?:of|from)\b)")
_DISTANCE = re.compile(
    rf"(?P<num>\d+(?:[.,]\d+)?|(?<![\w.,])\.\d+)\s*(?P<unit>{UNIT_WORDS})(?!\w)", re.IGNORECASE)
# A bearing in degrees ("on a bearing of 315°", "heading 90 degrees") names the nearest of the 8 directions.
_DEGREES = re.compile(r"(?<![\w.])(?P<deg>\d{1,3}(?:\.\d+)?)\s*(?:°|º|deg(?:rees?)?\b)", re.IGNORECASE)
# One swap of neighbouring letters in a direction word ("wset", "souht-west"), the commonest slip of typing;
# variants that are words themselves ("eats", "wets") are left alone.
_DIRECTION_SWAPS = {
    w[:i] + w[i + 1] + w[i] + w[i + 2:]: w
    for w in ("north", "south", "east", "west") for i in range(len(w) - 1)
    if w[:i] + w[i + 1] + w[i] + w[i + 2:] not in ("eats", "wets")}
_SWAPPED_DIRECTION = re.compile(r"(?i)(?<![a-z])(" + "|".join(sorted(_DIRECTION_SWAPS)) + r")(?![a-z]{2})")
_HALF_KM = re.compile(r"half\s+a\s+(?:kilomet|km)", re.IGNORECASE)
# Clause boundaries: sentence ends, semicolons, colons, commas, and the conjunctions
# that join two landmark relations ("... of X and 200 m N of Y", "..., but ...").
_CLAUSE_BREAK = re.compile(r"[.;:]\s+|[;:]|,(?!\d)\s*|\s+and\s+|\s+but\s+|\s+while\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"between\s+(\x00+)\s+and\s+(\x00+)", re.IGNORECASE)
_MASK = "\x00"
# What may follow a direction for the sentence to place the landmark relative to something else
# ("X is 400 m south of the café"): "of"/"from" and a word that is not a pointer back ("of it" is
# the goal only when the landmark opened the clause, which the caller checks).
_OF_SOMETHING = re.compile(r"\s*(?:to\s+the\s+\w+\s+)?(?:of|from)\s+(?!(?:here|there)\b)[^\x00\s]",
                           re.IGNORECASE)
_DOTTED_COMPASS = re.compile(r"(?<![\w.])([NS])\.\s?([EW])\.?(?!\w)|(?<![\w.])([NSEW])\.(?=\s+(?:of|from|by)\b)")
_ABBREVIATION_DOT = re.compile(r"(?<!\w)(approx|appr|ca|c|abt|approximately|est)\.(?=\s)", re.IGNORECASE)
# A name goes on when the next word is capitalised ("Alepa" + " Rautatientori"), or is a
# word that is not ordinary English ("Eteläesplanadi" + " kaupunkipyöräasema").
_NAME_GOES_ON = re.compile(r"[ \t]+(?:&[ \t]*)?(?:[A-ZÄÖÅÜ]|(?!(?:is|lies|are|and|but|to|of|from|in|at|for|there|it|"
                           r"which|that|the|a|an|near|by|sits|stands|can|you|will|with|on|about|around|roughly|"
                           r"approximately|some|just|go|head|walk|fly|look|find|lies|is|then|heading|reference|target|goal|"
                           r"landmark|offset|ref|start|starting|you'll|you|lies|sits|located)\b)[a-zäöåü]+\b)")
_LAST_WORD = re.compile(r"([\w&'’-]+)[ \t]+$")
_STARTERS = STARTERS


@dataclass(frozen=True)
class Relation:
    """The goal relative to landmarks.

    kind "offset": `distance` m in `direction` from the landmark; "ray": somewhere
    in `direction` from it (distance unknown); "between": midpoint of two landmarks.
    """

    kind: str
    landmarks: tuple[str, ...]
    direction: int | None = None  # 0..7, 0 = north, clockwise
    distance: float | None = None  # metres

    def unit(self) -> np.ndarray:
        """East-north unit vector of the direction."""
        r = math.radians(45.0 * (self.direction or 0))
        return np.array([math.sin(r), math.cos(r)])

    def offset(self) -> np.ndarray:
        return self.unit() * (self.distance or 0.0)


@dataclass(frozen=True)
class GoalDescription:
    """A parsed description: the text (for reading the goal's name) and its relations."""

    text: str
    relations: tuple[Relation, ...]

    @property
    def landmarks(self) -> tuple[str, ...]:
        """Every landmark the relations name, in order, without repeats."""
        out: list[str] = []
        for r in self.relations:
            out += [n for n in r.landmarks if n not in out]
        return tuple(out)

    def names_goal(self, name: str) -> bool:
        """Whether a readable POI `name` is the goal: the text names it in full, outside any landmark.

        A name that is only part of a longer name in the text ("Alepa" of "Alepa
        Rautatientori", "Kluuvi" of the landmark "Kauppakeskus Kluuvi") is not
        the goal: chains and street names would otherwise end the mission early.
        """
        if not name or name in self.landmarks:
            return False
        # Lines stay apart: a label form's next line ("Goal: Chalupa" / "Landmark: ...") does not go on
        # with the name.
        text = "\n".join(" ".join(line.split()) for line in self.text.splitlines())
        key = fold(name)
        if key not in fold(text):
            return False
        chars = list(text)
        for m in find_mentions(text, list(self.landmarks)):  # mask the landmark mentions
            chars[m.start:m.end] = _MASK * (m.end - m.start)
        text = "".join(chars)
        # Names are matched as typed: case and diacritics aside ("cafe engel" names Café Engel).
        for m in re.finditer(rf"(?<!\w){re.escape(key)}(?!\w)", fold(text)):
            after = text[m.end():]
            before = text[:m.start()]
            if _NAME_GOES_ON.match(after):
                continue
            prev = _LAST_WORD.search(before)
            if prev and prev.group(1)[0].isupper() and prev.group(1) not in _STARTERS \
                    and any(ch.islower() for ch in prev.group(1)):  # "TARGET": a label in capitals
                continue
            return True
        return False


def direction_index(token: str) -> int:
    """0..7 for any spelling of a compass direction ("north-east", "northeast", "NE", "sw")."""
    token = token.strip()
    if token.upper() in _ABBREVIATIONS and len(token) <= 2:
        return _ABBREVIATIONS.index(token.upper())
    return _WORDS.index(re.sub(r"[\s-]+", "", token.lower()))


def direction_token(m: re.Match) -> str:
    return m.group("word") or m.group("abbr") or m.group("abbr2")


def distances_in(text: str) -> list[float]:
    """Every distance written in `text`, in metres, in order."""
    return [float(m.group("num").replace(",", ".")) * unit_metres(m.group("unit")) for m in _DISTANCE.finditer(text)]


def read_distance(text: str) -> float | None:
    """The first distance written in `text`, in metres."""
    found = distances_in(text)
    if not found:
        return 500.0 if _HALF_KM.search(text) else None
    return found[0]


def _prepare(text: str) -> str:
    """The text with what only changes its form undone: lines as clauses, dotted abbreviations, number words."""
    text = re.sub(r"\s*[\r\n]+\s*", "; ", text.strip())
    text = _DOTTED_COMPASS.sub(lambda m: (m.group(1) or "") + (m.group(2) or "") + (m.group(3) or ""), text)
    text = _ABBREVIATION_DOT.sub(lambda m: m.group(1), text)
    text = _SWAPPED_DIRECTION.sub(lambda m: _same_case(_DIRECTION_SWAPS[m.group(1).lower()], m.group(1)), text)
    text = _DEGREES.sub(lambda m: _ABBREVIATIONS[int((float(m.group("deg")) % 360.0 + 22.5) // 45.0) % 8]
                        if float(m.group("deg")) <= 360.0 else m.group(), text)
    return " ".join(digits_for_words(text).split())


def _same_case(word: str, typed: str) -> str:
    return word.upper() if typed.isupper() else word.capitalize() if typed[0].isupper() else word


def parse_goal_description(text: str, gazetteer: list[str], aliases: Mapping[str, str] | None = None) -> GoalDescription:
    """Relations of the goal to the landmarks the text names (empty when it names none); `aliases`: other
    names of the gazetteer's landmarks (alias -> name, `landmark_names.find_mentions`)."""
    original = text
    text = _prepare(text)
    mentions = [(m.start, m.end, m.name) for m in find_mentions(text, gazetteer, aliases)]
    # Mask the names so that "W" in "WTC" or a comma in a name is not read as structure.
    chars = list(text)
    for s, e, _ in mentions:
        chars[s:e] = _MASK * (e - s)
    masked = "".join(chars)
    relations: list[Relation] = []
    consumed: set[int] = set()
    for m in _BETWEEN.finditer(masked):
        a = next(x for x in mentions if x[0] == m.start(1))
        b = next(x for x in mentions if x[0] == m.start(2))
        relations.append(Relation("between", (a[2], b[2])))
        consumed |= {a[0], b[0]}
    cuts = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(masked)] + [len(masked)]
    clauses = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1) if cuts[i + 1] > cuts[i]]

    def clause_at(pos: int) -> int:
        return next(i for i, (lo, hi) in enumerate(clauses) if lo <= pos < hi)

    def body(i: int) -> str:
        return masked[clauses[i][0]:clauses[i][1]].replace(_MASK, " ")

    with_landmark = {clause_at(s) for s, _, _ in mentions}
    for s, e, name in mentions:
        if s in consumed:
            continue
        k = clause_at(s)
        # The landmark's own clause first; else the next two, not past another landmark (a label
        # form puts "Offset:" between), then the previous clause ("From X, head NE for 300 m ...").
        order = [k] + ([k + 1, k + 2] if k + 1 not in with_landmark else []) + [k - 1]
        for j in order:
            if not 0 <= j < len(clauses) or (j != k and j in with_landmark):
                continue
            d = _DIRECTION.search(body(j))
            if d is None:
                continue
            distance = read_distance(body(j)) or read_distance(body(k))
            # A distance in a clause of its own after the relation ("... south of X, 200 m", a form's
            # "Distance: 250 m" line), up to the next landmark or direction.
            t = max(j, k) + 1
            while distance is None and t < len(clauses) and t <= max(j, k) + 3 and t not in with_landmark \
                    and not _DIRECTION.search(body(t)):
                distance = read_distance(body(t))
                t += 1
            direction = direction_index(direction_token(d))
            # The landmark as the subject, the goal after "of": "X is 400 m south of the café".
            lo = clauses[j][0]
            if j == k and e <= lo + d.start() and _OF_SOMETHING.match(masked, lo + d.end()):
                direction = (direction + 4) % 8
            relations.append(Relation("offset" if distance else "ray", (name,), direction, distance))
            break
    return GoalDescription(original, tuple(relations))
