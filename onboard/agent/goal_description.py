# Over 400 lines: one parser: every phrasing it reads works on the same masked text and the same record of words already taken, so its clauses cannot be read apart.
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

A description is read as what it is made of rather than as a template: a
quantity in any unit (metres, kilometres, feet, yards, miles, nautical miles;
digits with a decimal comma or point, thousands separators, fractions, number
words), a direction as a bearing in degrees (16 compass points in words or
letters, "045°", "bearing 045", "N45E": `compass_words`), kept as an angle; a
landmark, or a pointer back to one ("of it", "from there", "from that
building"); legs ("140 m north, then 140 m east") summed into one offset; a
correction ("400 m north of X, sorry, north-east") replacing what it corrects.
Where a name ends is `goal_name`'s question.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from onboard.vocab.compass_words import BEARING_TOKEN, bearing_of_word, mark_bearings, sector_of
from onboard.vocab.goal_name import goal_name_in, name_goes_on
from onboard.vocab.landmark_names import STARTERS, find_mentions
from onboard.vocab.spoken_numbers import UNIT_WORDS, digits_for_words, unit_metres
from onboard.vocab.text_fold import fold

# A direction as written: a bearing token (`compass_words`), 16 points in words, 8 in letters.
_DIRECTION = re.compile(
    r"\x02(?P<deg>\d+(?:\.\d+)?)\x03"
    r"|(?i:\b(?P<word16>(?:north|south)[\s-]?(?:north|south)[\s-]?(?:east|west)"
    r"|(?:east|west)[\s-]?(?:north|south)[\s-]?(?:east|west))\b)"
    r"|(?i:\b(?P<word>(?:north|south)(?:[\s-]?(?:east|west))?|east|west)\b)"
    r"|(?<![\w.'’/-])(?P<abbr16>NNE|ENE|ESE|SSE|SSW|WSW|WNW|NNW)(?![\w'’/-])"
    r"|(?<![\w.'’/-])(?P<abbr>NE|NW|SE|SW|N|E|S|W)(?![\w'’/-])"
    # two-letter abbreviations typed in lower case, where "of"/"from" shows they are directions ("350 m sw of")
    r"|(?<![\w.'’-])(?P<abbr2>ne|nw|se|sw)(?=\s+(?:of|from)\b)")
_DISTANCE = re.compile(
    rf"(?<![^\W\d_])(?P<num>\d+(?:[.,]\d+)?|(?<![\w.,])\.\d+)\s*(?P<unit>{UNIT_WORDS})(?!\w)", re.IGNORECASE)
# "1,650 ft", "2,500 m": a comma before exactly three digits groups thousands ("0,4 km" is a decimal comma).
_THOUSANDS = re.compile(r"(?<![\d.,])([1-9]\d{0,2})((?:,\d{3})+)(?![\d,])")
_UNICODE_FRACTIONS = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125}
_FRACTION = re.compile(rf"(?<![\d.,/])(?:(?P<whole>\d+)[ \t]+|(?P<whole2>\d+)?)(?P<num>\d+)/(?P<den>\d+)"
                       rf"(?=\s*(?:{UNIT_WORDS})(?!\w))", re.IGNORECASE)
_UNICODE_FRACTION = re.compile(r"(?P<whole>\d+)?[ \t]?(?P<f>[½¼¾⅓⅔⅛])")
# Words that join a further leg to the one before ("..., then 140 m east", "from there 200 m south").
_LEG = re.compile(r"(?i)^\W*(?:and\s+)?(?:then|after\s+that|next|continue|followed\s+by|turn|from\s+there|"
                  r"from\s+that\s+point|plus|and)\b")
# Words that take back what was just said ("sorry", "correction", "I mean", "make that").
_CORRECTION = re.compile(r"(?i)\b(?:sorry|correction|mistake|my\s+bad|typo|edit|i\s+mean|i\s+meant|make\s+(?:that|it)|scratch\s+that|"
                         r"no\s+wait|rather|amend(?:ed|ment)?|update[d]?|correct(?:ed)?\s+to|actually)\b")
# A pointer back to a landmark named before: "of it", "from there", "from that building", "of datum".
_BACK = re.compile(r"(?i)\b(?:of|from|off|past|beyond)\s+(?:it|there|that|this|datum|the\s+(?:datum|building|"
                   r"landmark|place|spot|reference|church|station|museum|tower|hotel))\b")
# A turn relative to the leg before ("then turn right and go 150 m"), in degrees clockwise.
_TURN = re.compile(r"(?i)\b(?:turn|go|bear|hang|take\s+a)\s+(?:a\s+)?(right|left|around|back|sharp\s+right|"
                   r"sharp\s+left|slight\s+right|slight\s+left)\b")
_TURN_DEGREES = {"right": 90.0, "left": -90.0, "around": 180.0, "back": 180.0, "sharp right": 135.0,
                 "sharp left": -135.0, "slight right": 45.0, "slight left": -45.0}
# "300 m not north but north-east of X": what is denied is no direction of the goal.
_NOT_BUT = re.compile(r"(?i)\bnot\s+((?:[\w-]+\s?){1,2}?)\s*,?\s+but\s+")
# A leg on in the same direction ("then keep going another 250 m").
_ON = re.compile(r"(?i)\b(?:keep\s+going|keep\s+on|carry\s+on|continue|another|further|straight\s+on|on\s+for)\b")
# "west, not east": what is denied after the direction.
_NOT_AFTER = re.compile(r"(?i),?\s*\bnot\s+((?:[\w-]+\s?){1,2}?)\s*(?=[.;!?]|$)")
# "(not SE as I wrote earlier)": an aside that denies a direction.
_NOT_ASIDE = re.compile(r"(?i)\s*\(\s*not\s+([^)]*)\)")
# "X is 300 m to its south": the landmark is the subject, "its" the goal.
_ITS = re.compile(r"(?i)\b(?:its|their)\s+$")
_BARE_NO = re.compile(r"(?i)^\W*no\W*$")
_BARE_NUMBER = re.compile(r"^\W*(\d{1,3}(?:\.\d+)?)\W*$")
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
_CLAUSE_BREAK = re.compile(r"[.;:!?]\s+|[;:?]|,(?!\d)\s*|\s+[—–-]+\s+|[—–]|\s+and\s+|\s+but\s+|\s+while\s+|"
                           r"\s+then\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"between\s+(\x00+)\s+and\s+(\x00+)", re.IGNORECASE)
_MASK = "\x00"
# What may follow a direction for the sentence to place the landmark relative to something else
# ("X is 400 m south of the café"): "of"/"from" and a word that is not a pointer back ("of it" is
# the goal only when the landmark opened the clause, which the caller checks).
_OF_SOMETHING = re.compile(r"\s*(?:to\s+the\s+\w+\s+)?(?:of|from)\s+(?!(?:here|there)\b)[^\x00\s]",
                           re.IGNORECASE)
_DOTTED_COMPASS = re.compile(r"(?<![\w.])([NS])\.\s?([EW])\.?(?!\w)|(?<![\w.])([NSEW])\.(?=\s+(?:of|from|by)\b)")
_ABBREVIATION_DOT = re.compile(r"(?<!\w)(approx|appr|ca|c|abt|approximately|est)\.(?=\s)", re.IGNORECASE)
_LAST_WORD = re.compile(r"([\w&'’-]+)[ \t]+$")
_STARTERS = STARTERS


@dataclass(frozen=True)
class Relation:
    """The goal relative to landmarks.

    kind "offset": `distance` m on `bearing_deg` from the landmark; "ray": somewhere on that
    bearing (distance unknown); "between": midpoint of two landmarks. `direction` is the nearest
    of the eight compass points, for what speaks in sectors; the geometry uses the bearing. Either
    may be given: the other follows.
    """

    kind: str
    landmarks: tuple[str, ...]
    direction: int | None = None  # 0..7, 0 = north, clockwise
    distance: float | None = None  # metres
    bearing_deg: float | None = None  # 0 = north, clockwise; landmark -> goal

    def __post_init__(self) -> None:
        if self.bearing_deg is None and self.direction is not None:
            object.__setattr__(self, "bearing_deg", 45.0 * self.direction)
        elif self.bearing_deg is not None:
            b = float(self.bearing_deg)
            if not math.isfinite(b):
                raise ValueError(f"relation bearing must be finite, got {self.bearing_deg!r}")
            object.__setattr__(self, "bearing_deg", b % 360.0)
            if self.direction is None:
                object.__setattr__(self, "direction", sector_of(b))

    def unit(self) -> np.ndarray:
        """East-north unit vector of the bearing."""
        r = math.radians(self.bearing_deg or 0.0)
        return np.array([math.sin(r), math.cos(r)])

    def offset(self) -> np.ndarray:
        return self.unit() * (self.distance or 0.0)


@dataclass(frozen=True)
class GoalDescription:
    """A parsed description: the text (for reading the goal's name) and its relations.

    `named`: every landmark the text names, related or not (what could not be placed is
    `named` less `landmarks`); `directions_read`: how many written directions the relations
    took (legs and corrections included), so a reader can tell one left unread.
    """

    text: str
    relations: tuple[Relation, ...]
    named: tuple[str, ...] = ()
    directions_read: int = 0
    withdrawn: tuple[str, ...] = ()  # landmarks a correction took back ("of Kiasma, sorry, of X")
    as_typed: tuple[str, ...] = ()  # the landmark mentions as the text has them ("the Cathedral", "kiasma")

    @property
    def landmarks(self) -> tuple[str, ...]:
        """Every landmark the relations name, in order, without repeats."""
        out: list[str] = []
        for r in self.relations:
            out += [n for n in r.landmarks if n not in out]
        return tuple(out)

    @property
    def unplaced(self) -> tuple[str, ...]:
        """Landmarks the text names that no relation uses."""
        return tuple(n for n in self.named if n not in self.landmarks and n not in self.withdrawn)

    @functools.cached_property
    def _masked_lines(self) -> str:
        # Lines stay apart: a label form's next line ("Goal: Chalupa" / "Landmark: ...") does not go on
        # with the name.
        text = "\n".join(" ".join(line.split()) for line in self.text.splitlines())
        chars = list(text)
        for m in find_mentions(text, list(dict.fromkeys(self.named + self.landmarks))):
            chars[m.start:m.end] = _MASK * (m.end - m.start)
        folded = fold(text)
        for typed in self.as_typed:
            for m in re.finditer(rf"(?<!\w){re.escape(fold(typed))}(?!\w)", folded):
                chars[m.start():m.end()] = _MASK * (m.end() - m.start())
        return "".join(chars)

    @property
    def goal_name(self) -> str | None:
        """The name the description asks for, as written; None when it names none (`goal_name`)."""
        return goal_name_in(self._masked_lines)

    def names_goal(self, name: str, also_read: tuple[str, ...] | list[str] = ()) -> bool:
        """Whether a readable POI `name` is the goal: the text names it in full, outside any landmark.

        A name that is only part of a longer name in the text ("Alepa" of "Alepa Rautatientori",
        "Kluuvi" of the landmark "Kauppakeskus Kluuvi") is not the goal: chains and street names
        would otherwise end the mission early. Longer is decided by what the words are
        (`goal_name.name_goes_on`) and by the other names read with this one (`also_read`): where a
        longer one matches the same place in the text, the longest wins.
        """
        if not name or name in self.landmarks or name in self.named:
            return False
        key = fold(name)
        if key not in fold(self.text):
            return False
        text = self._masked_lines
        folded = fold(text)
        longer = [fold(n) for n in also_read if n and len(fold(n)) > len(key) and key in fold(n)]
        spans = [(m.start(), m.end()) for lk in longer for m in re.finditer(rf"(?<!\w){re.escape(lk)}(?!\w)", folded)]
        # Names are matched as typed: case and diacritics aside ("cafe engel" names Café Engel).
        for m in re.finditer(rf"(?<!\w){re.escape(key)}(?!\w)", folded):
            if any(s <= m.start() and m.end() <= e for s, e in spans):
                continue
            line_end = text.find("\n", m.end())
            if name_goes_on(text[m.end():line_end if line_end >= 0 else len(text)]):
                continue
            prev = _LAST_WORD.search(text[:m.start()])
            if prev and prev.group(1)[0].isupper() and prev.group(1) not in _STARTERS \
                    and any(ch.islower() for ch in prev.group(1)) and not _DIRECTION.fullmatch(prev.group(1)):
                continue  # "TARGET": a label in capitals
            return True
        return False


def direction_token(m: re.Match) -> str:
    return m.group("word16") or m.group("word") or m.group("abbr16") or m.group("abbr") or m.group("abbr2") \
        or m.group()


def direction_bearing(m: re.Match) -> float:
    """Degrees of a direction the pattern found: a bearing token's own, a compass word's point."""
    if m.group("deg") is not None:
        return float(m.group("deg")) % 360.0
    return bearing_of_word(direction_token(m))


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
    """The text with what only changes its form undone: lines as clauses, dotted abbreviations, bearings
    in numbers as one token, thousands separators, fractions, number words."""
    text = re.sub(r"\s*[\r\n]+\s*", "; ", text.strip())
    text = _DOTTED_COMPASS.sub(lambda m: (m.group(1) or "") + (m.group(2) or "") + (m.group(3) or ""), text)
    text = _ABBREVIATION_DOT.sub(lambda m: m.group(1), text)
    text = _SWAPPED_DIRECTION.sub(lambda m: _same_case(_DIRECTION_SWAPS[m.group(1).lower()], m.group(1)), text)
    text = mark_bearings(text)
    text = _NOT_BUT.sub(lambda m: "" if _DIRECTION.fullmatch(m.group(1).strip()) else m.group(), text)
    text = _NOT_ASIDE.sub(lambda m: "" if _DIRECTION.match(m.group(1)) else m.group(), text)
    text = _NOT_AFTER.sub(lambda m: "" if _DIRECTION.fullmatch(m.group(1).strip()) else m.group(), text)
    text = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    text = _UNICODE_FRACTION.sub(lambda m: f" {float(m.group('whole') or 0) + _UNICODE_FRACTIONS[m.group('f')]:g}",
                                 text)
    text = _FRACTION.sub(lambda m: _fraction(m), text)
    return " ".join(digits_for_words(text).split())


def _fraction(m: re.Match) -> str:
    den = float(m.group("den"))
    if den == 0:
        return m.group()
    whole = float(m.group("whole") or m.group("whole2") or 0)
    return f"{whole + float(m.group('num')) / den:g} "


def _same_case(word: str, typed: str) -> str:
    return word.upper() if typed.isupper() else word.capitalize() if typed[0].isupper() else word


def _vector(bearing_deg: float, metres: float) -> np.ndarray:
    r = math.radians(bearing_deg)
    return np.array([math.sin(r), math.cos(r)]) * metres


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
    used: set[int] = set()  # clauses whose direction a relation took
    directions_read = 0
    related: set[str] = set()
    withdrawn: list[str] = []

    def free(t: int) -> bool:
        return 0 <= t < len(clauses) and t not in with_landmark and t not in used

    def free_but_used(t: int) -> bool:
        return 0 <= t < len(clauses) and t not in with_landmark

    def relate(name: str, j: int, k: int, end: int | None) -> None:
        nonlocal directions_read
        d = _DIRECTION.search(body(j))
        distance = read_distance(body(j)) or read_distance(body(k))
        taken = {j, k}
        for t in range(min(j, k) + 1, max(j, k)):  # "Landmark X, distance 400 m, bearing 015"
            if distance is None and free(t) and (distance := read_distance(body(t))) is not None:
                taken.add(t)
        # A distance in a clause of its own before the direction ("LKP X: 400 m, bearing 310 from Y") or
        # after it ("... south of X, 200 m", a form's "Distance: 250 m" line), up to the next landmark or
        # direction.
        t = min(j, k) - 1
        while distance is None and free(t) and t >= min(j, k) - 3 and not _DIRECTION.search(body(t)):
            distance = read_distance(body(t))
            if distance is not None:
                taken.add(t)
            t -= 1
        t = max(j, k) + 1
        while distance is None and free(t) and t <= max(j, k) + 3 and not _DIRECTION.search(body(t)):
            distance = read_distance(body(t))
            if distance is not None:
                taken.add(t)
            t += 1
        bearing = direction_bearing(d)
        # The landmark as the subject, the goal after "of": "X is 400 m south of the café".
        lo = clauses[j][0]
        if end is not None and j == k and end <= lo + d.start() and (
                _OF_SOMETHING.match(masked, lo + d.end()) or _ITS.search(masked, lo, lo + d.start())):
            bearing = (bearing + 180.0) % 360.0  # "Kiasma is 300 m to its south": the goal is north of it
        # "Go 300 m north, I mean south, of X": the direction before was said and taken back.
        if j < k and _CORRECTION.search(body(j)) and free(j - 1) and _DIRECTION.search(body(j - 1)):
            directions_read += 1
            if distance is None and (distance := read_distance(body(j - 1))) is not None:
                taken.add(j - 1)
            used.add(j - 1)
        used.update(taken)
        directions_read += 1
        # "300 m north and 200 m east of X": components before the landmark's own, joined by "and".
        t = min(j, k) - 1
        while distance is not None and j == k and free(t) and re.search(r"(?i)\band\s*$", body(t)) \
                and (nd := _DIRECTION.search(body(t))) is not None and (nm := read_distance(body(t))) is not None:
            e_, n_ = _vector(bearing, distance) + _vector(direction_bearing(nd), nm)
            distance, bearing = float(np.hypot(e_, n_)), math.degrees(math.atan2(e_, n_)) % 360.0
            directions_read += 1
            used.add(t)
            t -= 1
        bearing, distance, legs = _legs_and_corrections(body, free, free_but_used, used, max(j, k) + 1, bearing, distance,
                                                        direction_is_degrees=d.group("deg") is not None)
        directions_read += legs
        for old in [r for r in relations if name in r.landmarks and r.kind != "between"]:
            relations.remove(old)  # said again, corrected: the later word stands
        relations.append(Relation("offset" if distance else "ray", (name,), distance=distance, bearing_deg=bearing))
        related.add(name)

    for s, e, name in mentions:
        if s in consumed:
            continue
        k = clause_at(s)
        corrected = any(_CORRECTION.search(body(i)) for i in range(max(0, k - 2), k + 1))
        if name in related and not corrected:
            continue  # named again without taking back what was said of it
        if corrected and relations and name not in related and not _DIRECTION.search(body(k)) and \
                relations[-1].kind != "between":
            last = relations.pop()  # "400 m north of Kiasma, sorry, of Johan Sederholm": the landmark corrected
            relations.append(Relation(last.kind, (name,), distance=last.distance, bearing_deg=last.bearing_deg))
            withdrawn.extend(n for n in last.landmarks if n != name)
            related.add(name)
            continue
        # The landmark's own clause first; else the next two, not past another landmark (a label
        # form puts "Offset:" between), then the previous clause ("From X, head NE for 300 m ...").
        order = [k] + ([k + 1, k + 2] if k + 1 not in with_landmark else []) + [k - 1]
        for j in order:
            if not 0 <= j < len(clauses) or (j != k and j in with_landmark) or (j != k and j in used):
                continue
            if _DIRECTION.search(body(j)) is None:
                continue
            relate(name, j, k, e)
            break
    # A pointer back to a landmark named further before ("Kiasma is the reference. ... The place I want
    # is Fuku, some 550 m west of it."): the closest landmark before it that is not related yet.
    for j in range(len(clauses)):
        if j in used or j in with_landmark or not _DIRECTION.search(body(j)) or not _BACK.search(body(j)):
            continue
        before = [(s, name) for s, _, name in mentions if s < clauses[j][0] and name not in related
                  and s not in consumed]
        if before:
            relate(before[-1][1], j, j, None)
    # One landmark and no relation yet: a form or a sentence whose parts stand apart ("Ref: X ... Distance:
    # 350 m / Direction: SW", "About 250 m south-west, that's where Y is, measured from X"). The direction
    # is the first one written; the words around it say the rest.
    names = list(dict.fromkeys(name for s, _, name in mentions if s not in consumed))
    if len(names) == 1 and not relations:
        first = next((j for j in range(len(clauses)) if free(j) and _DIRECTION.search(body(j))), None)
        if first is not None:
            with_landmark.clear()  # the one landmark's own clauses may hold the rest of its relation
            relate(names[0], first, first, None)
    named = tuple(dict.fromkeys(name for _, _, name in mentions))
    return GoalDescription(original, tuple(relations), named, directions_read,
                           tuple(n for n in dict.fromkeys(withdrawn) if n not in {x for r in relations for x in r.landmarks}),
                           tuple(dict.fromkeys(text[s:e] for s, e, _ in mentions if text[s:e].strip())))


def _legs_and_corrections(body, free, free_but_used, used: set[int], t: int, bearing: float,
                          distance: float | None, *, direction_is_degrees: bool) -> tuple[float, float | None, int]:
    """Further legs summed into the relation, and corrections of what was just said, from clause `t` up to
    the next landmark; (bearing, distance, directions read beyond the first)."""
    vector = _vector(bearing, distance) if distance else None
    leg_bearing = bearing
    first = t
    read, legs, correcting, joined, turn = 0, 1, False, False, 0.0
    while free(t) or t in used and free_but_used(t):
        if t in used:
            t += 1  # a clause the relation already took (its distance)
            continue
        b = body(t)
        nd, nm = _DIRECTION.search(b), read_distance(b)
        if _CORRECTION.search(b) or _BARE_NO.match(b) or correcting:
            if nd is None and direction_is_degrees and (bare := _BARE_NUMBER.match(_CORRECTION.sub(" ", b))) and \
                    float(bare.group(1)) <= 360.0:
                nd_bearing: float | None = float(bare.group(1)) % 360.0  # "heading 040, no, 220"
            else:
                nd_bearing = direction_bearing(nd) if nd is not None else None
            if nd_bearing is None and nm is None:
                correcting = True  # "— sorry," then what it should have been
                t += 1
                continue
            if nd_bearing is not None:
                bearing, leg_bearing, read = nd_bearing, nd_bearing, read + 1
            distance = nm if nm is not None else distance
            vector = _vector(bearing, distance) if distance else None
            used.add(t)
            correcting = nm is None and distance is None  # the distance may follow in a clause of its own
            t += 1
            continue
        if nd is not None and abs((direction_bearing(nd) - bearing + 180.0) % 360.0 - 180.0) < 1.0 and legs == 1 \
                and (nm is None or distance is not None and abs(nm - distance) <= 0.01 * distance) \
                and not (_ON.search(b) or _LEG.search(b) or joined):
            read += 1  # said again, the same: "No - west. 320 m west."
            used.add(t)
            t += 1
            continue
        if nd is None and nm is not None and distance is None:
            distance, vector = nm, _vector(bearing, nm)  # "bearing 240, 300 m."
            used.add(t)
            t += 1
            continue
        rel = _TURN.search(b)
        if rel is not None and vector is not None:
            turn = _TURN_DEGREES[rel.group(1).lower()]
        if nd is None and nm is None and (_LEG.search(b) or rel is not None) and vector is not None:
            joined = True  # "..., turn right and walk 140 m": the leg's own words come next
            t += 1
            continue
        if nm is None or vector is None or not (_LEG.search(b) or joined or rel is not None or t == first
                                                or _ON.search(b)):
            break
        if nd is None and not turn and not _ON.search(b):
            break
        leg_bearing = direction_bearing(nd) if nd is not None else (leg_bearing + turn) % 360.0
        joined, turn = False, 0.0
        vector = vector + _vector(leg_bearing, nm)
        legs += 1
        read += nd is not None
        used.add(t)
        t += 1
    if vector is not None and legs > 1:
        distance = float(np.hypot(*vector))
        bearing = math.degrees(math.atan2(vector[0], vector[1])) % 360.0
    return bearing, distance, read
