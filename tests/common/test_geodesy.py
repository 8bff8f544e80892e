"""The shared projection against PX4's own numbers, and its defining properties.

PX4 reports the same EKF state twice: GLOBAL_POSITION_INT (lat/lon) and
LOCAL_POSITION_NED (x north, y east from the EKF origin, GPS_GLOBAL_ORIGIN).
Both copy the timestamp of the estimator update they come from into
time_boot_ms, so messages with equal time_boot_ms are the same sample: an exact
pairing, no interpolation. Projecting PX4's lat/lon around PX4's origin must
give PX4's x/y.

What limits the agreement is the wire format, not the projection: lat/lon
travel as integers of 1e-7 degree (1.11 cm north, 0.75 cm east at Zurich).
PX4 truncates GLOBAL_POSITION_INT (``msg.lat = gpos.lat * 1e7``, an implicit
cast, src/modules/mavlink/streams/GLOBAL_POSITION_INT.hpp), so the true
position lies in [n, n + 1) x 1e-7 and we take the middle of that cell; it
rounds GPS_GLOBAL_ORIGIN (``round(ref_lat * 1e7)``, GPS_GLOBAL_ORIGIN.hpp), so
its true origin is within half a cell of the reported one: an offset we cannot
know, the same for every sample. The test therefore measures that constant
offset, requires it to lie inside the origin's rounding cell, and then requires
every sample to agree with PX4 to 1 cm. A different radius or projection is
not a constant offset (it grows with distance from the origin), so it fails;
the test shows that with the bridge's former sphere of 6,378,137 m.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path
from statistics import fmean

import numpy as np
import pytest

from common.geodesy import EARTH_RADIUS_M, GeoPoint, geo_from_ned, ned_from_geo

TRACE = Path(os.environ.get("AERIE_PX4_TRACE_DIR") or Path(__file__).resolve().parents[3] / "shared" / "px4-trace") \
    / "px4_sih_session.jsonl.gz"
needs_trace = pytest.mark.skipif(not TRACE.exists(), reason=f"PX4 trace not found at {TRACE} (../shared is absent)")

E7 = 1e-7
CENTIMETRE = 0.01


class Px4Positions:
    """PX4's EKF origin and its (lat, lon) / (x, y) reports of the same samples."""

    def __init__(self, path: Path) -> None:
        wanted = ('"GPS_GLOBAL_ORIGIN"', '"GLOBAL_POSITION_INT"', '"LOCAL_POSITION_NED"')
        self.origins: list[dict] = []
        global_by_ms: dict[int, dict] = {}
        local_by_ms: dict[int, dict] = {}
        with gzip.open(path, "rt") as f:
            for line in f:
                if not any(w in line for w in wanted):
                    continue
                rec = json.loads(line)
                if rec.get("dir") != "px4->gcs":
                    continue
                fields = rec["fields"]
                if rec["name"] == "GPS_GLOBAL_ORIGIN":
                    self.origins.append(fields)
                elif rec["name"] == "GLOBAL_POSITION_INT":
                    global_by_ms.setdefault(fields["time_boot_ms"], fields)
                elif rec["name"] == "LOCAL_POSITION_NED":
                    local_by_ms.setdefault(fields["time_boot_ms"], fields)
        self.pairs = [(global_by_ms[ms], local_by_ms[ms]) for ms in sorted(set(global_by_ms) & set(local_by_ms))]

    @property
    def origin(self) -> GeoPoint:
        o = self.origins[0]
        return GeoPoint(o["latitude"] * E7, o["longitude"] * E7, o["altitude"] / 1000.0)


@pytest.fixture(scope="module")
def px4() -> Px4Positions:
    return Px4Positions(TRACE)


def agreement(px4: Px4Positions, project) -> tuple[tuple[float, float], float]:
    """(constant offset north/east, worst horizontal disagreement once it is removed), metres."""
    residuals = []
    for g, loc in px4.pairs:
        # the middle of the truncation cell PX4's integer lat/lon stands for
        north, east = project(px4.origin, (g["lat"] + 0.5) * E7, (g["lon"] + 0.5) * E7)
        residuals.append((north - loc["x"], east - loc["y"]))
    offset = (fmean(r[0] for r in residuals), fmean(r[1] for r in residuals))
    worst = max(math.hypot(r[0] - offset[0], r[1] - offset[1]) for r in residuals)
    return offset, worst


@needs_trace
def test_px4_local_position_from_its_global_position_to_a_centimetre(px4):
    assert len(px4.origins) == 1, "the EKF origin moved during the recording; pair per origin"
    assert len(px4.pairs) > 1000
    assert max(math.hypot(loc["x"], loc["y"]) for _, loc in px4.pairs) > 50.0  # flight, not only the pad

    offset, worst = agreement(px4, ned_from_geo)
    # the origin's rounding: at most half a 1e-7 degree cell each way (+1 mm for the
    # mean of the per-sample truncation noise, which averages out over thousands)
    cell_north = math.radians(E7) * EARTH_RADIUS_M
    cell_east = cell_north * math.cos(math.radians(px4.origin.lat))
    assert abs(offset[0]) <= cell_north / 2 + 0.001 and abs(offset[1]) <= cell_east / 2 + 0.001, offset
    assert worst <= CENTIMETRE, f"{worst * 100:.2f} cm"


@needs_trace
def test_a_different_earth_does_not_pass_the_same_check(px4):
    """The check can fail: the bridge's former projection (equirectangular, 6,378,137 m) is off by centimetres."""

    def former_bridge(origin: GeoPoint, lat: float, lon: float) -> tuple[float, float]:
        r = 6_378_137.0
        return math.radians(lat - origin.lat) * r, math.radians(lon - origin.lon) * r * math.cos(math.radians(origin.lat))

    _, worst = agreement(px4, former_bridge)
    assert worst > 3 * CENTIMETRE


# -- properties that hold without the trace ------------------------------------------------

ORIGINS = [GeoPoint(47.397743, 8.5455941, 489.3), GeoPoint(60.17, 24.94), GeoPoint(-33.86, 151.21),
           GeoPoint(0.0, -179.9), GeoPoint(78.2, 15.6)]
OFFSETS = [(0.0, 0.0), (500.0, 0.0), (0.0, -500.0), (353.6, 353.6), (-2000.0, 1500.0), (12_000.0, -7_000.0)]


def great_circle(origin: GeoPoint, lat: float, lon: float) -> tuple[float, float]:
    """(distance m, initial bearing rad) on PX4's sphere: haversine and the forward-azimuth formula."""
    p1, p2, dl = math.radians(origin.lat), math.radians(lat), math.radians(lon - origin.lon)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    distance = 2 * EARTH_RADIUS_M * math.asin(math.sqrt(h))
    bearing = math.atan2(math.sin(dl) * math.cos(p2), math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl))
    return distance, bearing


@pytest.mark.parametrize("origin", ORIGINS, ids=lambda o: f"{o.lat},{o.lon}")
@pytest.mark.parametrize("north, east", OFFSETS)
def test_round_trip_is_exact_to_a_micrometre(origin, north, east):
    lat, lon = geo_from_ned(origin, north, east)
    n, e = ned_from_geo(origin, lat, lon)
    assert n == pytest.approx(north, abs=1e-6) and e == pytest.approx(east, abs=1e-6)


@pytest.mark.parametrize("origin", ORIGINS, ids=lambda o: f"{o.lat},{o.lon}")
@pytest.mark.parametrize("north, east", OFFSETS[1:])
def test_azimuthal_equidistant_distance_and_bearing_from_the_origin_are_great_circle(origin, north, east):
    """The projection's definition, checked with formulas that share no code with it."""
    lat, lon = geo_from_ned(origin, north, east)
    distance, bearing = great_circle(origin, lat, lon)
    assert math.hypot(north, east) == pytest.approx(distance, abs=1e-6)
    assert math.atan2(east, north) == pytest.approx(bearing, abs=1e-9)


def test_known_values():
    o = GeoPoint(47.0, 8.0)
    assert ned_from_geo(o, 48.0, 8.0) == pytest.approx((6_371_000.0 * math.pi / 180.0, 0.0), abs=1e-6)  # 111,194.93 m
    assert geo_from_ned(o, 0.0, 0.0) == (47.0, 8.0)
    # a point on the origin's parallel lies a little north of the east axis: the parallel curves poleward
    north, east = ned_from_geo(GeoPoint(60.0, 25.0), 60.0, 25.002)
    assert east == pytest.approx(111.1949 * 2 * 0.5, abs=2e-3) and north == pytest.approx(111.19**2 * math.sqrt(3) / (2 * EARTH_RADIUS_M), abs=1e-5)


def test_arrays_give_what_scalars_give():
    o = ORIGINS[1]
    lats, lons = np.array([60.16, 60.17, 60.18]), np.array([24.93, 24.94, 24.96])
    north, east = ned_from_geo(o, lats, lons)
    assert isinstance(north, np.ndarray) and north.shape == (3,)
    for i in range(3):
        assert (north[i], east[i]) == pytest.approx(ned_from_geo(o, float(lats[i]), float(lons[i])), abs=1e-9)
    lat, lon = geo_from_ned(o, north, east)
    assert np.allclose(lat, lats, atol=1e-12) and np.allclose(lon, lons, atol=1e-12)
    assert isinstance(ned_from_geo(o, 60.16, 24.93)[0], float)


@pytest.mark.parametrize("lat, lon", [(math.nan, 8.0), (47.0, math.nan), (91.0, 8.0), (47.0, -180.5), (8.5, 247.4)])
def test_an_origin_off_the_globe_is_refused(lat, lon):
    with pytest.raises(ValueError, match="latitude|longitude"):
        GeoPoint(lat, lon)
