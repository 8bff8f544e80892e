"""Where a city's names hang: shop signs on street-level fronts, building names high on facades.

The distance at which a drone can read "Café Ääni" is what the text-reading
benchmark measures, so it must come out of the pixels, and the pixels out of
signs of real sizes in real places: a shop front sign is lettered 0.3-0.8 m
high about 3-4 m above the pavement on the facade nearest the POI, a building
name 1-2 m high near the top of the facade that faces a street. Sizes and
heights vary by a hash of the name (the same in every run and every view).

Placement is done once per world. Each sign is a flat panel on one footprint
edge of one building (offset a few centimetres outwards), so the renderer can
draw it right after that wall and let the painter's order hide it behind
whatever stands in front. Signs on one facade do not overlap: a sign that
does not fit where its POI is slides along the facade, then tries a second
row, then the next-nearest facade; POIs that are not shop fronts (artworks,
bicycle docks) and POIs with no facade near them get no sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onboard.map.city import Building, Poi
from onboard.perception.text_range import outward_normals  # noqa: F401  (the renderer takes it from here too)
from sim.world.sign_texture import SignStyle, layout, style_for, unit_hash

POI_LETTER_M = (0.3, 0.8)  # cap height range of shop-front lettering
POI_MOUNT_M = (3.0, 4.0)  # height of a shop sign's centre above the ground
BUILDING_LETTER_M = (1.0, 2.0)  # cap height range of a building's name
MIN_SHRINK = 0.5  # a sign too wide for its facade may shrink its letters to this share of the range's minimum
FACADE_REACH_M = 15.0  # a POI farther than this from every facade has no shop front to hang a sign on
STREET_REACH_M = 60.0  # a facade "faces a street" when a corridor node this close lies in front of it
EDGE_MARGIN_M = 0.3  # kept free at both ends of a facade
GAP_M = 0.4  # between neighbouring signs on one facade
OFFSET_M = 0.05  # panels stand this far out from their wall
# POI kinds that are not shop fronts: no sign is hung for them.
NOT_SHOPFRONTS = frozenset({"artwork", "bicycle_rental", "parking", "atm", "vending_machine", "recycling", "bandstand",
                            "taxi", "marketplace", "attraction", "information", "bus_station", "ferry_terminal"})


@dataclass(frozen=True)
class Sign:
    """One panel with a name on one facade, in the world's ENU metres (z up)."""

    name: str
    kind: str  # "poi" (shop front) or "building" (a building's own name)
    category: str  # the POI's kind (cafe, clothes, ...) or the building's
    building_id: int
    edge: int  # the facade: footprint edge `edge` -> `edge + 1` of that building
    centre: np.ndarray  # (3,) panel centre
    right: np.ndarray  # (2,) unit vector along the facade, left to right as read from the street
    normal: np.ndarray  # (2,) unit outward facade normal: the sign faces this way
    width_m: float
    height_m: float
    letter_m: float  # cap height of the lettering
    style: SignStyle

    @property
    def corners(self) -> np.ndarray:
        """(4, 3) panel corners: top-left, top-right, bottom-right, bottom-left as read from the street."""
        r = np.array([*self.right, 0.0]) * self.width_m / 2
        u = np.array([0.0, 0.0, self.height_m / 2])
        c = self.centre
        return np.array([c - r + u, c + r + u, c + r - u, c - r - u])

    def panel_point(self, fx: float, fy: float) -> np.ndarray:
        """The world point at fraction (fx, fy) of the panel: (0, 0) top-left, (1, 1) bottom-right."""
        tl, tr, _, bl = self.corners
        return tl + (tr - tl) * fx + (bl - tl) * fy


@dataclass
class _Facade:
    building: Building
    index: int
    a: np.ndarray
    length: float
    direction: np.ndarray  # unit, a -> b
    normal: np.ndarray  # unit, outward
    taken: list  # (s0, s1, z0, z1) already occupied


def _facades(b: Building) -> list[_Facade]:
    fp = b.footprint
    normals = outward_normals(fp)
    out = []
    for i in range(len(fp)):
        e = fp[(i + 1) % len(fp)] - fp[i]
        length = float(np.hypot(*e))
        if length > 1e-6:
            out.append(_Facade(b, i, fp[i], length, e / length, normals[i], []))
    return out


def _fit(f: _Facade, s_want: float, width: float, z0: float, z1: float) -> float | None:
    """A free position along facade `f` for a sign `width` wide between heights z0..z1, nearest `s_want`."""
    lo, hi = EDGE_MARGIN_M + width / 2, f.length - EDGE_MARGIN_M - width / 2
    if lo > hi:
        return None
    same_row = [(s0, s1) for s0, s1, t0, t1 in f.taken if t0 < z1 and z0 < t1]
    options = [s_want] + [p for s0, s1 in same_row for p in (s0 - GAP_M - width / 2, s1 + GAP_M + width / 2)]
    for s in sorted((min(max(p, lo), hi) for p in options), key=lambda p: abs(p - s_want)):
        if all(s + width / 2 + GAP_M <= s0 or s1 <= s - width / 2 - GAP_M for s0, s1 in same_row):
            return s
    return None


def _hang(f: _Facade, name: str, kind: str, category: str, letter_range: tuple[float, float],
          s_want: float, z_centres: list[float]) -> Sign | None:
    """Hang `name` on facade `f` near `s_want` at the first of `z_centres` with room; None if there is none."""
    style = style_for(name)
    lay = layout(name, style.face)
    lo, hi = letter_range
    letter = lo + (hi - lo) * unit_hash(name, kind + "-letter")
    per_letter = lay.width / lay.cap_px  # panel width per metre of cap height
    room = f.length - 2 * EDGE_MARGIN_M
    letter = min(letter, room / per_letter)
    if letter < lo * MIN_SHRINK:
        return None
    width, height = per_letter * letter, lay.height / lay.cap_px * letter
    for zc in z_centres:
        zc = min(zc, f.building.height - 0.2 - height / 2)  # never above the eaves
        if zc - height / 2 < 0.3:
            continue
        s = _fit(f, s_want, width, zc - height / 2, zc + height / 2)
        if s is None:
            continue
        f.taken.append((s - width / 2, s + width / 2, zc - height / 2, zc + height / 2))
        xy = f.a + f.direction * s + f.normal * OFFSET_M
        right = np.array([-f.normal[1], f.normal[0]])
        return Sign(name, kind, category, f.building.id, f.index, np.array([*xy, zc]), right, f.normal.copy(),
                    width, height, letter, style)
    return None


def place_signs(buildings: list[Building], pois: list[Poi], street_xy: np.ndarray) -> list[Sign]:
    """Every sign of the city: named buildings' names first (they claim the top rows), then shop fronts."""
    facades = {b.id: _facades(b) for b in buildings}
    signs: list[Sign] = []
    for b in buildings:
        if not b.name or not facades[b.id]:
            continue
        fs = facades[b.id]

        def score(f: _Facade) -> float:
            mid = f.a + f.direction * f.length / 2
            rel = street_xy - mid
            near = np.hypot(*rel.T) <= STREET_REACH_M
            faces_street = bool(np.any(near & (rel @ f.normal > 0)))
            return f.length * (3.0 if faces_street else 1.0)

        zc = b.height - max(0.5, 0.06 * b.height)  # lowered by half the panel's height in _hang
        for f in sorted(fs, key=score, reverse=True)[:4]:
            sign = _hang(f, b.name, "building", b.kind, BUILDING_LETTER_M, f.length / 2,
                         [zc - _half_height(b.name, BUILDING_LETTER_M, "building")])
            if sign is not None:
                signs.append(sign)
                break
    all_facades = [f for fs in facades.values() for f in fs]
    if not all_facades:
        return signs
    length = np.array([f.length for f in all_facades])
    mid_x = np.array([f.a[0] + f.direction[0] * f.length / 2 for f in all_facades])
    order = np.argsort(mid_x)  # facades by the east of their middle: each POI looks only at a strip around it
    all_facades = [all_facades[k] for k in order]
    mid_x, length = mid_x[order], length[order]
    a = np.array([f.a for f in all_facades])
    direction = np.array([f.direction for f in all_facades])
    reach = FACADE_REACH_M + float(length.max()) / 2
    for p in pois:
        if p.kind in NOT_SHOPFRONTS or not p.name.strip():
            continue
        lo, hi = np.searchsorted(mid_x, [p.xy[0] - reach, p.xy[0] + reach])
        along = np.clip(np.einsum("ij,ij->i", p.xy - a[lo:hi], direction[lo:hi]), 0.0, length[lo:hi])
        dist = np.hypot(*(a[lo:hi] + direction[lo:hi] * along[:, None] - p.xy).T)  # to the foot on each facade
        near = np.flatnonzero(dist <= FACADE_REACH_M)
        mount = POI_MOUNT_M[0] + (POI_MOUNT_M[1] - POI_MOUNT_M[0]) * unit_hash(p.name, "mount")
        for k in near[np.argsort(dist[near], kind="stable")][:3]:
            sign = _hang(all_facades[lo + k], p.name, "poi", p.kind, POI_LETTER_M, float(along[k]),
                         [mount, mount + 1.4])
            if sign is not None:
                signs.append(sign)
                break
    return signs


def _half_height(name: str, letter_range: tuple[float, float], kind: str) -> float:
    """Half the panel height `_hang` will give `name` before any shrinking (to hang it from its top edge)."""
    lay = layout(name, style_for(name).face)
    lo, hi = letter_range
    return lay.height / lay.cap_px * (lo + (hi - lo) * unit_hash(name, kind + "-letter")) / 2
