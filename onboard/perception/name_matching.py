"""Which known name a sign says, with the instruction reader's tolerance.

Names are compared as the agent's instruction reader compares them
(`onboard.vocab.landmark_names`): folded (case and diacritics aside, since a
recogniser often drops the dots of "Ä"), and a typo of `tolerance(name)` slips
in names long enough to bear one, only where the read is closer to one name
than to any other. The two readers must agree: a name the operator typed and a
sign that spells it must meet whatever the operator's case or accents.

Spaces and punctuation inside a name are not letters a reader can misread but
gaps it may not see: tight lettering comes out as "RavintolalaivaMSMaria" and a
slash or an apostrophe is dropped as often as kept. A read that spells a name
letter for letter once both lose everything but letters and digits is that
name, exactly (two real names that differ only in their gaps are one business).

A near read must begin with the name's first letter (a recogniser misreads
inside a word far more than it invents one's start), where I, l and 1 are
one letter, and O and 0 another: they are the same strokes in many sign
fonts ("littala" for Iittala). Names that are one business once folded and
compacted ("Robert's coffee", "Robert's Coffee") are one candidate, not two
equally near ones.

An exact read and a near read are kept apart. A read one slip from a known name
may be a misread letter, or a different shop ("Alepa Kalio"); it is reported
as close to that name, with its confidence lowered, and never locks the goal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Protocol

from onboard.vocab.landmark_names import tolerance
from onboard.vocab.text_fold import edit_distance, fold
from onboard.perception.types import TextSighting

# Confidence kept per slip of a near read.
SLIP_FACTOR = 0.5
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")
_GAPS = re.compile(r"[\W_]+")
# First letters a recogniser confuses (folded: lower case): the same strokes in many sign fonts.
_SAME_START = str.maketrans({"l": "i", "1": "i", "0": "o"})


@dataclass(frozen=True)
class NameMatch:
    name: str
    slips: int
    confidence: float


class NamesGoal(Protocol):
    def names_goal(self, name: str) -> bool: ...


def clean(text: str) -> str:
    """The read with runs of spaces made one and punctuation at the ends dropped ('"KIASMA".' -> 'KIASMA')."""
    return _EDGE.sub("", " ".join(text.split()))


def _key(text: str) -> str:
    return " ".join(fold(text).split())


def letters_of(text: str) -> str:
    """A name as letters and digits only, folded: one key however a read spells its case, accents and gaps."""
    return _GAPS.sub("", _key(text))


def match_name(text: str, confidence: float, names: Iterable[str]) -> NameMatch | None:
    """The known name `text` spells (slips 0), or the one name it is closest to within tolerance, or None."""
    read = _key(clean(text))
    if not read:
        return None
    keyed = {n: _key(n) for n in names if n.strip()}
    for name, k in keyed.items():
        if k == read:
            return NameMatch(name, 0, confidence)
    letters = letters_of(read)
    if len(letters) < 3:
        return None
    compact = {n: letters_of(k) for n, k in keyed.items()}
    for name, k in compact.items():
        if k == letters:
            return NameMatch(name, 0, confidence)
    start = letters[0].translate(_SAME_START)
    near, keys = [], set()
    for name, k in compact.items():
        if k in keys or not tolerance(name) or not k or k[0].translate(_SAME_START) != start:
            continue  # one business under two spellings of its gaps or case counts once
        keys.add(k)
        d = edit_distance(letters, k, tolerance(name))
        if d <= tolerance(name):
            near.append((d, name))
    near.sort()
    if near and (len(near) == 1 or near[0][0] < near[1][0]):  # as close to two names: neither
        slips, name = near[0]
        return NameMatch(name, slips, confidence * SLIP_FACTOR ** slips)
    return None


def goal_sightings(sightings: Iterable[TextSighting], goal: NamesGoal, min_confidence: float) -> list[TextSighting]:
    """The sightings that lock the goal: an exact read the goal description names, confident enough."""
    return [s for s in sightings if s.slips == 0 and s.confidence >= min_confidence and goal.names_goal(s.name)]
