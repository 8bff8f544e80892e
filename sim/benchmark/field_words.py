"""What the field phrasings write with: bearings, metric and imperial distances, walks in legs.

The words of `field_phrasing.py`'s families, each returning what it writes and
the value the text states (so a label is exactly what the text says): a bearing
rounded as people round one, a distance in metres, kilometres with a decimal
comma, feet, yards, miles or nautical miles, and a walk told in two or three legs
along compass words that add up to the offset.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np

from sim.benchmark.compass import index_of_bearing
from sim.benchmark.phrasing import TruthRelation, _dir, _pick, _round_to, people_round

FT, YD, MI, NM = 0.3048, 0.9144, 1609.344, 1852.0  # metres


def round_bearing(b: float, rng: np.random.Generator) -> int:
    """A bearing as people say one: to 10 degrees, or to 5; 0..355."""
    step = int(_pick(rng, [5, 10, 10]))
    return int(math.floor((b % 360.0) / step + 0.5)) * step % 360


def bearing_three(b: int, rng: np.random.Generator) -> str:
    """Three digits as pilots say it; north is "360" as often as "000"."""
    return "360" if b == 0 and rng.random() < 0.5 else f"{b:03d}"


def bearing_words(b: int, rng: np.random.Generator) -> str:
    """"045", "045°", "45°", "45 degrees"."""
    return _pick(rng, [bearing_three(b, rng), f"{bearing_three(b, rng)}°", f"{b}°", f"{b} degrees"])


def with_bearing(r: TruthRelation, b: float, distance_m: float) -> TruthRelation:
    return replace(r, direction=index_of_bearing(b), bearing_deg=float(b), distance_m=float(distance_m))


def compass_relation(r: TruthRelation, distance_m: float) -> TruthRelation:
    """The label of a compass-word relation: its sector, the written distance, no bearing."""
    return replace(r, distance_m=float(distance_m), bearing_deg=None)


def _thousands(n: int, rng: np.random.Generator) -> str:
    return f"{n:,}" if n >= 1000 and rng.random() < 0.6 else str(n)


def _km_comma(m: int, rng: np.random.Generator) -> str | None:
    """Kilometres with a decimal comma, as written in Finland: "0,45 km"; None when it would not be exact."""
    if m % 10:
        return None
    km = f"{m / 1000:g}".replace(".", ",")
    return km + _pick(rng, [" km", "km", " kilometres"])


def metric(d: float, rng: np.random.Generator, comma_km: bool = False) -> tuple[str, int]:
    """A distance in metres (sometimes kilometres with a decimal comma) and the metres it states."""
    m = people_round(d)
    if comma_km and rng.random() < 0.4 and (km := _km_comma(m, rng)):
        return km, m
    return _pick(rng, [f"{m} m", f"{m} metres", f"{m}m", f"{m} meters"]), m


def nautical(d: float, rng: np.random.Generator) -> tuple[str, float] | None:
    """Tenths of a nautical mile when they say the distance within 8 %, else None."""
    tenths = round(d / NM * 10)
    if tenths < 1 or abs(tenths * NM / 10 - d) > 0.08 * d:
        return None
    return f"{tenths / 10:g}" + _pick(rng, [" NM", " nm", "NM", " nautical miles"]), tenths * NM / 10


_MILE_FRACTIONS = {
    Fraction(1, 8): ["an eighth of a mile", "1/8 mile", "1/8 mi"],
    Fraction(1, 4): ["a quarter mile", "a quarter of a mile", "1/4 mile", "¼ mile", "0.25 mi"],
    Fraction(1, 3): ["a third of a mile", "1/3 mile"],
    Fraction(1, 2): ["half a mile", "a half mile", "1/2 mile", "½ mi", "0.5 miles"],
    Fraction(3, 4): ["three quarters of a mile", "3/4 mile", "¾ mile", "0.75 mi"],
}


def imperial(d: float, rng: np.random.Generator) -> tuple[str, float]:
    """The distance in feet, yards or miles as people round them, and the metres the figure means.

    Feet to 50 below 1,000 ft, else to 100; yards to 10 below 200, else to 50; miles as a
    fraction or in tenths, only where that is within 8 % of the truth.
    """
    miles = [(f, forms) for f, forms in _MILE_FRACTIONS.items() if abs(float(f) * MI - d) <= 0.08 * d]
    tenths = round(d / MI * 10)
    if tenths >= 1 and abs(tenths * MI / 10 - d) <= 0.08 * d:
        miles.append((Fraction(tenths, 10), [f"{tenths / 10:g} mi", f"{tenths / 10:g} miles", f"{tenths / 10:g} mile"]))
    unit = _pick(rng, ["ft", "ft", "yd"] + (["mi", "mi"] if miles else []))
    if unit == "mi":
        f, forms = _pick(rng, miles)
        return _pick(rng, forms), float(f) * MI
    if unit == "ft":
        ft = d / FT
        n = _round_to(ft, 50 if ft < 1000 else 100)
        return _thousands(n, rng) + _pick(rng, [" ft", " feet", "ft"]), n * FT
    yd = d / YD
    n = _round_to(yd, 10 if yd < 200 else 50)
    return f"{n}" + _pick(rng, [" yards", " yd", " yds", "yd"]), n * YD


# --- legs ---------------------------------------------------------------------------------------

_UNIT = {k: np.array([math.sin(math.radians(45.0 * k)), math.cos(math.radians(45.0 * k))]) for k in range(8)}
MIN_LEG_M = 40  # a leg shorter than this is not worth saying


def _leg_round(m: float) -> int:
    return people_round(m) if m >= 5 else 0


def legs_of(d: float, b: float, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Two or three legs (metres as written, compass index) along compass words that add up to about (d, b).

    Along the north-south and east-west axes, or along the two compass words either side of the
    bearing; where one leg would be shorter than `MIN_LEG_M` the walk goes straight and is told
    in two pieces ("200 m north, then another 150 m"). Sometimes a cardinal walk is told in three.
    """
    v = d * np.array([math.sin(math.radians(b)), math.cos(math.radians(b))])
    options = []
    ns, ew = (0 if v[1] >= 0 else 4), (2 if v[0] >= 0 else 6)
    axes = [(_leg_round(abs(v[1])), ns), (_leg_round(abs(v[0])), ew)]
    if min(m for m, _ in axes) >= MIN_LEG_M:
        options.append(axes)
    k = int((b % 360.0) // 45.0) % 8
    a, c = np.linalg.solve(np.column_stack([_UNIT[k], _UNIT[(k + 1) % 8]]), v)
    bracket = [(_leg_round(a), k), (_leg_round(c), (k + 1) % 8)]
    if min(m for m, _ in bracket) >= MIN_LEG_M:
        options.append(bracket)
    if not options:
        k = index_of_bearing(b)
        first = _leg_round(0.55 * d)
        return [(first, k), (_leg_round(d - first), k)]
    legs = _pick(rng, options)
    if rng.random() < 0.5:
        legs = legs[::-1]
    first_m, first_k = legs[0]
    if first_k % 2 == 0 and first_m >= 120 and rng.random() < 0.3:  # out, across, and out again
        part = _leg_round(first_m * 0.5)
        legs = [(part, first_k), legs[1], (_leg_round(first_m - part), first_k)]
    return legs


def legs_sum(legs: list[tuple[int, int]]) -> tuple[float, float]:
    """(distance m, bearing deg) of the written legs added up."""
    v = sum((m * _UNIT[k] for m, k in legs), np.zeros(2))
    return float(np.hypot(*v)), math.degrees(math.atan2(v[0], v[1])) % 360.0


def metres_short(m: int, rng: np.random.Generator) -> str:
    return _pick(rng, [f"{m} m", f"{m} metres", f"{m}m", f"{m} meters"])


def _turn(prev: int, nxt: int) -> str | None:
    return {2: "right", 6: "left"}.get((nxt - prev) % 8)


def legs_text(legs: list[tuple[int, int]], rng: np.random.Generator, verb: str) -> str:
    parts = [f"{verb} {metres_short(legs[0][0], rng)} {_dir(legs[0][1], rng)}"]
    for (m, k), (_, pk) in zip(legs[1:], legs[:-1]):
        joiner = _pick(rng, ["then", "then", "and then", "after that"])
        turn = _turn(pk, k)
        if k == pk:
            parts.append(f"{joiner} keep going {_dir(k, rng)} for another {metres_short(m, rng)}")
        elif turn and rng.random() < 0.4:
            parts.append(f"{joiner} turn {turn} and go {metres_short(m, rng)}")
        else:
            parts.append(f"{joiner} {metres_short(m, rng)} {_dir(k, rng)}")
    return ", ".join(parts)
