"""Directions as people write them, read into a bearing in degrees (0 = north, clockwise).

An operator writes "north-east", "NE", "NNE", "east-north-east"; a pilot
"heading 045", "bearing 045 from X", "the 270 radial", "045°"; a surveyor
"N45E". All of them are one quantity, an angle, and the reader keeps it as one:
rounding "030°" to the nearest of eight sectors would put a goal 500 m away
130 m off before the search begins. The arithmetic is code, not a model.

`mark_bearings` rewrites every bearing written in numbers into one token
(`BEARING_TOKEN`) that the direction pattern reads, so the rest of the reader
sees a bearing in degrees as it sees a compass word: one direction, in place.
"""

from __future__ import annotations

import re

POINTS_16 = ("north", "north-north-east", "north-east", "east-north-east", "east", "east-south-east",
             "south-east", "south-south-east", "south", "south-south-west", "south-west", "west-south-west",
             "west", "west-north-west", "north-west", "north-north-west")
ABBREVIATIONS_16 = ("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW",
                    "NNW")
# A bearing written in numbers, rewritten in place as "\x02<degrees>\x03": control characters no name or
# number contains, which survive every later step of the reader (number words, clause cuts, masking).
BEARING_TOKEN = re.compile(r"\x02(?P<deg>\d+(?:\.\d+)?)\x03")
_BEARING_WORD = r"(?:bearing|bears|heading|course|track|radial|azimuth|brg|hdg|crs|az)"
_DEG = r"(?:\s*(?:°|º|˚|deg(?:rees?)?\b|degs\b))"
_TRUE = r"(?:\s*(?:true|magnetic|mag|T|M)\b)?"
_NUM = r"\d{1,3}(?:\.\d+)?"
_BEARING = re.compile(
    # "bearing 045", "on a heading of 120°", "course: 270", "hdg 090 true"
    rf"(?i:\b{_BEARING_WORD}s?\b[ \t]*(?:of[ \t]+|is[ \t]+|at[ \t]+|=[ \t]*|:[ \t]*)?)(?P<a>{_NUM}){_DEG}?{_TRUE}"
    # "045°", "45 degrees", "120 deg true"
    rf"|(?<![\w.,])(?P<b>{_NUM}){_DEG}{_TRUE}"
    # "the 270 radial"
    rf"|(?<![\w.,])(?P<c>\d{{3}})[ \t]+(?i:radial)\b"
    # a position as bearing/range ("010/450m", "165/0.2NM") and a work order's "@ 310"
    rf"|(?<![\w.,/])(?P<d>\d{{3}})/(?=[ \t]*\d)"
    rf"|@[ \t]*(?P<e>{_NUM}){_DEG}?(?![\w.])"
    # a surveyor's quadrant bearing: "N45E", "S 30° W"
    rf"|(?<![\w.])(?P<q1>[NS])[ \t]?(?P<q>\d{{1,2}}(?:\.\d+)?)[ \t]*(?:°|º)?[ \t]?(?P<q2>[EW])(?![\w])")


_DIGIT_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "tree": "3", "four": "4", "five": "5", "fife": "5",
                "six": "6", "seven": "7", "eight": "8", "nine": "9", "niner": "9"}
_DIGIT = "(?:" + "|".join(_DIGIT_WORDS) + ")"
# A pilot's bearing digit by digit: "heading two seven zero" is 270.
_SPOKEN_BEARING = re.compile(rf"(?i)(\b{_BEARING_WORD}s?\b[ \t]*(?:of[ \t]+|is[ \t]+|:[ \t]*)?)"
                             rf"({_DIGIT}(?:[ \t-]+{_DIGIT}){{2}})\b")


def mark_bearings(text: str) -> str:
    """`text` with each bearing written in numbers replaced by its token (angles over 360 are left alone)."""
    text = _SPOKEN_BEARING.sub(
        lambda m: m.group(1) + "".join(_DIGIT_WORDS[w.lower()] for w in re.split(r"[ \t-]+", m.group(2))), text)

    def sub(m: re.Match) -> str:
        if m.group("q") is not None:
            a = float(m.group("q"))
            if a > 90.0:
                return m.group()
            north, east = m.group("q1") == "N", m.group("q2") == "E"
            deg = (a if east else 360.0 - a) if north else (180.0 - a if east else 180.0 + a)
        else:
            deg = float(m.group("a") or m.group("b") or m.group("c") or m.group("d") or m.group("e"))
            if deg > 360.0:
                return m.group()
        # The word "bearing"/"heading" goes with the number: the token is the whole direction.
        return f"\x02{deg % 360.0:g}\x03" + (" " if m.group("d") is not None else "")

    return _BEARING.sub(sub, text)


def bearing_of_word(word: str) -> float:
    """Degrees for a compass word or abbreviation of the 16 points, in any spelling ("northeast", "N.E", "sw")."""
    w = word.strip()
    if w.upper() in ABBREVIATIONS_16 and len(w) <= 3:
        return 22.5 * ABBREVIATIONS_16.index(w.upper())
    key = re.sub(r"[\s-]+", "", w.lower())
    for i, p in enumerate(POINTS_16):
        if p.replace("-", "") == key:
            return 22.5 * i
    raise ValueError(f"not a compass direction: {word!r}")


def sector_of(bearing_deg: float) -> int:
    """The nearest of the eight compass points (0 = north, clockwise) to a bearing."""
    return int((bearing_deg % 360.0 + 22.5) // 45.0) % 8


def compass_label(bearing_deg: float) -> str:
    """How the vehicle says a bearing back: "N (000°)", "NNE (022°)", "(037°)" off the 16 points."""
    b = bearing_deg % 360.0
    i = int((b + 11.25) // 22.5) % 16
    name = ABBREVIATIONS_16[i] + " " if abs(((b - 22.5 * i) + 180.0) % 360.0 - 180.0) < 0.05 else ""
    return f"{name}({round(b) % 360:03d}°)"
