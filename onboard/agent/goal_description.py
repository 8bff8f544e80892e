"""Read the goal description ("about 300 m north-east of Kiasma") into relations to landmarks.

The description is the agent's only knowledge of the goal. The arithmetic
that turns it into a position is code, not a language model (PReP's lesson:
small models are poor at trigonometry). What is read here is the *shape* of
the goal: which named landmarks it is relative to, in which compass direction,
how far. Landmark names come from a gazetteer the agent is given (it knows the
city's landmarks by name, not where they are); where the landmarks are is
learned in flight from sightings (see `working_memory`).

Phrasings covered: distances in m / metres / meters / km / kilometres (with or
without "about", "~", ...; "half a kilometre"), the 8 compass directions as
words (north-east, northeast, north east) or upper-case abbreviations (NE),
the landmark before or after its direction ("From X, head E for 200 m",
"200 m E of X", "X: ... 200 m E from it"), two landmarks, and "between X and Y".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

# Compass index 0 = north, clockwise in 45 degree steps.
_WORDS = ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")
_ABBREVIATIONS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_DIRECTION = re.compile(
    r"(?i:\b(?P<word>(?:north|south)(?:[\s-]?(?:east|west))?|east|west)\b)"
    r"|(?<![\w.'’-])(?P<abbr>NE|NW|SE|SW|N|E|S|W)(?![\w'’-])")
_DISTANCE = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)?)\s*(?P<unit>kilomet(?:re|er)s?|km|met(?:re|er)s?|m)(?!\w)", re.IGNORECASE)
_HALF_KM = re.compile(r"half\s+a\s+(?:kilomet|km)", re.IGNORECASE)
# Clause boundaries: sentence ends, semicolons, colons, commas, and the conjunctions
# that join two landmark relations ("... of X and 200 m N of Y", "..., but ...").
_CLAUSE_BREAK = re.compile(r"[.;:]\s+|[;:]|,\s*|\s+and\s+|\s+but\s+|\s+while\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"between\s+(\x00+)\s+and\s+(\x00+)", re.IGNORECASE)
_MASK = "\x00"
# A name goes on when the next word is capitalised ("Alepa" + " Rautatientori"), or is a
# word that is not ordinary English ("Eteläesplanadi" + " kaupunkipyöräasema").
_NAME_GOES_ON = re.compile(r"\s+(?:&\s*)?(?:[A-ZÄÖÅÜ]|(?!(?:is|lies|are|and|but|to|of|from|in|at|for|there|it|"
                           r"which|that|the|a|an|near|by|sits|stands|can|you|will|with|on|about|around|roughly|"
                           r"approximately|some|just|go|head|walk|fly|look|find|lies|is)\b)[a-zäöåü]+\b)")
_LAST_WORD = re.compile(r"([\w&'’-]+)\s+$")
_STARTERS = {"From", "Find", "Look", "Go", "Starting", "Halfway", "The", "Reach", "Near", "At", "In", "To", "Head",
             "Then", "There", "You", "It", "A", "An"}


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
        if not name or name in self.landmarks or name not in self.text:
            return False
        text = self.text
        for lm in sorted(self.landmarks, key=len, reverse=True):  # mask the landmark mentions
            text = re.sub(rf"(?<!\w){re.escape(lm)}(?!\w)", lambda m: _MASK * len(m.group()), text,
                          flags=re.IGNORECASE)
        text = " ".join(text.split())
        for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):  # names are copied verbatim
            after = text[m.end():]
            before = text[:m.start()]
            if _NAME_GOES_ON.match(after):
                continue
            prev = _LAST_WORD.search(before)
            if prev and prev.group(1)[0].isupper() and prev.group(1) not in _STARTERS:
                continue
            return True
        return False


def direction_index(token: str) -> int:
    """0..7 for any spelling of a compass direction ("north-east", "northeast", "NE")."""
    token = token.strip()
    if token in _ABBREVIATIONS:
        return _ABBREVIATIONS.index(token)
    return _WORDS.index(re.sub(r"[\s-]+", "", token.lower()))


def read_distance(text: str) -> float | None:
    """The first distance written in `text`, in metres."""
    m = _DISTANCE.search(text)
    if m is None:
        return 500.0 if _HALF_KM.search(text) else None
    value = float(m.group("num").replace(",", "."))
    return value * 1000.0 if m.group("unit").lower().startswith("k") else value


def _mentions(text: str, gazetteer: list[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, name) of landmark names in `text`, longest name wins."""
    found: list[tuple[int, int, str]] = []
    lower = text.lower()
    for name in sorted(set(gazetteer), key=len, reverse=True):
        for m in re.finditer(rf"(?<!\w){re.escape(name.lower())}(?!\w)", lower):
            if all(m.end() <= s or m.start() >= e for s, e, _ in found):
                found.append((m.start(), m.end(), name))
    return sorted(found)


def parse_goal_description(text: str, gazetteer: list[str]) -> GoalDescription:
    """Relations of the goal to the landmarks the text names (empty when it names none)."""
    text = " ".join(text.split())
    mentions = _mentions(text, gazetteer)
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
    for s, _, name in mentions:
        if s in consumed:
            continue
        k = clause_at(s)
        # The landmark's own clause first; else the next, then the previous clause,
        # if no other landmark claims it ("From X, head NE for 300 m ...").
        for j in (k, k + 1, k - 1):
            if not 0 <= j < len(clauses) or (j != k and j in with_landmark):
                continue
            d = _DIRECTION.search(body(j))
            if d is None:
                continue
            distance = read_distance(body(j)) or read_distance(body(k))
            direction = direction_index(d.group("word") or d.group("abbr"))
            relations.append(Relation("offset" if distance else "ray", (name,), direction, distance))
            break
    return GoalDescription(text, tuple(relations))
