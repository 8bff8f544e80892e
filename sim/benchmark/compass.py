"""Compass words as people write them: 8 directions, several spellings each."""

from __future__ import annotations

import re

# index 0 = north, clockwise in 45 degree steps
WORDS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")
ABBREV = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_VARIANTS = {
    0: ["north"], 1: ["north-east", "northeast", "north east"], 2: ["east"], 3: ["south-east", "southeast", "south east"],
    4: ["south"], 5: ["south-west", "southwest", "south west"], 6: ["west"], 7: ["north-west", "northwest", "north west"],
}

# Longest alternatives first so "north-east" is not read as "north". Words are
# case-insensitive, abbreviations must be upper case standalone tokens.
_WORD_RE = "|".join(sorted({v.replace(" ", r"[\s-]?").replace("-", r"[\s-]?") for vs in _VARIANTS.values() for v in vs},
                           key=len, reverse=True))
DIRECTION_RE = re.compile(rf"(?i:\b(?P<word>{_WORD_RE})\b)|(?<![\w.])(?P<abbr>NE|NW|SE|SW|N|E|S|W)(?![\w])")


def spellings(index: int) -> list[str]:
    """Every way the generator may write direction `index` (words and abbreviation)."""
    return [*_VARIANTS[index], ABBREV[index]]


def word_spellings(index: int) -> list[str]:
    """The ways direction `index` is written in words (no abbreviation)."""
    return list(_VARIANTS[index])


def direction_index(token: str) -> int:
    """Index 0..7 of a matched direction token (any spelling)."""
    t = token.strip()
    if t in ABBREV:
        return ABBREV.index(t)
    norm = re.sub(r"[\s-]+", "", t.lower())
    for i, w in enumerate(WORDS):
        if w.replace("-", "") == norm:
            return i
    raise ValueError(f"not a compass direction: {token!r}")


def index_of_bearing(bearing: float) -> int:
    return int(((bearing % 360.0) + 22.5) // 45.0) % 8
