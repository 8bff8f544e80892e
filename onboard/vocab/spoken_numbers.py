"""Distances written in words ("five hundred and fifty metres", "a quarter of a kilometre") as digits.

People type distances the way they say them. Turning the words into numbers
is arithmetic, so it is code, not a language model: `digits_for_words`
rewrites each spelled-out distance into "<metres> m", and the reader's
ordinary distance pattern takes it from there.
"""

from __future__ import annotations

import re

_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
         "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000}
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "quarters": 0.25, "third": 1 / 3, "thirds": 1 / 3}
_GLUE = {"a", "an", "and", "of", "point"}
_WORDS = sorted([*_ONES, *_TENS, *_SCALES, *_FRACTIONS, *_GLUE], key=len, reverse=True)
_TOKEN = "(?:" + "|".join(_WORDS) + ")"
# Every unit people give a distance in: metres and kilometres as typed ("mtr", "mts", "klick", a kilometre in
# soldiers' and pilots' slang), and the imperial units of pilots, couriers and visitors (feet, yards, statute
# and nautical miles). Longer spellings first, so "mi" is not read as "m" and "nautical miles" not as "miles".
UNIT_WORDS = (r"nautical[\s-]+miles?|nmi|NM|kilomet(?:re|er)s?|km|klicks?|clicks?|met(?:re|er)s?|mtrs?|mts|"
              r"feet|foot|ft|yards?|yds?|miles?|mi|m")
_UNIT_METRES = (("nautical", 1852.0), ("nmi", 1852.0), ("nm", 1852.0), ("k", 1000.0), ("c", 1000.0),
                ("f", 0.3048), ("y", 0.9144), ("mi", 1609.344), ("m", 1.0))
_UNIT = rf"(?P<unit>{UNIT_WORDS})"
_SPOKEN = re.compile(rf"(?<![\w.])(?P<phrase>{_TOKEN}(?:[\s-]+{_TOKEN})*)\s+{_UNIT}(?!\w)"
                     r"(?P<tail>\s+and\s+an?\s+(?P<tailfrac>half|quarter))?", re.IGNORECASE)


def words_value(tokens: list[str]) -> float | None:
    """The number a run of number words says, or None if it says none ("and a", "of")."""
    toks = [t.lower() for t in tokens]
    has_fraction = any(t in _FRACTIONS for t in toks)
    while toks and toks[-1] in ("a", "an", "of") and (has_fraction or len(toks) > 1):
        toks.pop()  # "half a [km]", "a quarter of a [km]"
    while toks and toks[0] in ("and", "of", "point"):
        toks.pop(0)
    if not toks or all(t in _GLUE - {"a", "an"} for t in toks):
        return None
    if "point" in toks:
        i = toks.index("point")
        whole = words_value(toks[:i]) if i else 0.0
        digits = [_ONES.get(t) for t in toks[i + 1:]]
        if whole is None or not digits or any(d is None or d > 9 for d in digits):
            return None
        return whole + float("0." + "".join(str(d) for d in digits))
    total, current, said, last = 0.0, 0.0, False, 0.0
    fraction = 0.0
    for t in toks:
        if t in _ONES:
            current += _ONES[t]
            last, said = _ONES[t], True
        elif t in _TENS:
            current += _TENS[t]
            last, said = _TENS[t], True
        elif t in ("a", "an"):
            current += 1
            last, said = 1, True
        elif t in _SCALES:
            scale = _SCALES[t]
            if scale == 1000:
                total += max(current, 1) * 1000
                current = 0
            else:
                current = max(current, 1) * 100 if current < 100 else current - current % 100 + (current % 100) * 100
            last, said = 0, True
        elif t in _FRACTIONS:
            # "three quarters": the count before the fraction word is its numerator, not a whole number.
            numerator = last if last else 1
            current -= last
            fraction += numerator * _FRACTIONS[t]
            last, said = 0, True
        # "and", "of": glue
    if not said:
        return None
    return total + current + fraction


def unit_metres(unit: str) -> float:
    """Metres in one `unit` as matched by `UNIT_WORDS`."""
    u = unit.lower()
    return next(m for prefix, m in _UNIT_METRES if u.startswith(prefix))


def digits_for_words(text: str) -> str:
    """`text` with each distance written in words replaced by "<metres> m" (other text unchanged)."""

    def sub(m: re.Match) -> str:
        value = words_value(re.split(r"[\s-]+", m.group("phrase")))
        if value is None or value <= 0:
            return m.group()
        if m.group("tail"):
            value += _FRACTIONS[m.group("tailfrac").lower()]
        metres = value * unit_metres(m.group("unit"))
        return f"{round(metres, 1):g} m"

    return _SPOKEN.sub(sub, text)
