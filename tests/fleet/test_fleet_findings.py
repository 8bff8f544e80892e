"""Findings shared over the fleet channel: the wire refuses what it cannot trust, positions land in the
receiver's own frame, and two real channels hand each other's findings over while reports keep flowing.
"""

from __future__ import annotations

import math
import threading

import msgpack
import numpy as np
import pytest

from contract.fleet_discovery import MAX_ITEMS, FleetDiscovery, LandmarkFinding, LookedFrom, SignRead
from contract.fleet_frame import pack, unpack
from common.geodesy import GeoPoint, ned_from_geo
from contract.payloads.base import PayloadError
from firmware_bridge.fleet_picture import TrafficReport
from onboard.vocab.observation import SharedFindings, SharedLandmark
from onboard.fleet.channel import FleetChannel
from onboard.fleet.findings import MAX_KEPT, FleetFindings
from onboard.fleet.settings import FleetChannelConfig, FleetPeer
from tests.fleet.test_fleet_channel import HANG_GUARD_S, Inbox, free_port

HOME_A = GeoPoint(60.1700, 24.9400)
HOME_B = GeoPoint(60.1650, 24.9300)  # about 0.8 km south-west of A


def discovery(**over) -> dict:
    d = {"type": "fleet_discovery", **FleetDiscovery(
        3, 5, "f1", landmarks=(LandmarkFinding("Postitalo", 60.1719, 24.9413, 12.0, 4),),
        signs=(SignRead("Kahvila Kulma", 60.1702, 24.9410),), looked_from=(LookedFrom(60.1701, 24.9402),)).encode()}
    d.update(over)
    return d


@pytest.mark.parametrize("doc, reason", [
    (discovery(landmarks=[{"name": "X", "lat": math.nan, "lon": 24.9, "spread_m": 1.0, "fixes": 1}]), "out_of_range"),
    (discovery(landmarks=[{"name": "X", "lat": 60.1, "lon": 24.9, "spread_m": -1.0, "fixes": 1}]), "out_of_range"),
    (discovery(landmarks=[{"name": "X", "lat": 60.1, "lon": 24.9, "spread_m": 1.0, "fixes": 0}]), "out_of_range"),
    (discovery(signs=[{"name": "", "lat": 60.1, "lon": 24.9}]), "bad_field"),
    (discovery(signs=[{"name": "n" * 81, "lat": 60.1, "lon": 24.9}]), "out_of_range"),
    (discovery(looked_from=[{"lat": 60.1, "lon": 24.9}] * (MAX_ITEMS + 1)), "out_of_range"),
    (discovery(looked_from=[{"lat": 60.1, "lon": math.inf}]), "out_of_range"),
    (discovery(looked_from={"lat": 60.1}), "bad_field"),
    (discovery(member_id=True), "bad_field"),
    (discovery(v=2), "wrong_version"),
    (discovery(type="fleet_gossip"), "unknown_type"),
    ({k: v for k, v in discovery().items() if k != "flight_id"}, "missing_field"),
])
def test_the_wire_refuses_findings_it_cannot_trust(doc, reason):
    with pytest.raises(PayloadError) as e:
        unpack(msgpack.packb(doc), max_bytes=16384)
    assert e.value.reason == reason


def test_findings_round_trip_and_a_full_frame_fits_the_default_bound():
    one = unpack(msgpack.packb(discovery()), max_bytes=16384)
    assert isinstance(one, FleetDiscovery) and unpack(pack(one), max_bytes=16384) == one
    with pytest.raises(PayloadError):  # more than a frame may carry: never sent
        pack(FleetDiscovery(1, 1, "f", looked_from=(LookedFrom(60.0, 24.0),) * (MAX_ITEMS + 1)))
    name = "N" * 80
    full = FleetDiscovery(200, 2**40, "f" * 80,
                          landmarks=tuple(LandmarkFinding(name, 60.123456789, 24.123456789, 4999.5, 9999)
                                          for _ in range(MAX_ITEMS)),
                          signs=tuple(SignRead(name, -89.123456789, -179.123456789) for _ in range(MAX_ITEMS)),
                          looked_from=tuple(LookedFrom(60.123456789, 24.123456789) for _ in range(MAX_ITEMS)))
    assert len(pack(full)) <= FleetChannelConfig().max_message_bytes


def test_a_landmark_found_by_one_vehicle_lands_where_it_is_in_the_others_frame():
    a, b = FleetFindings(1), FleetFindings(2)
    # A fixed Postitalo 200 m east and 300 m north of its home, read a sign, looked from two places.
    a.publish(SharedFindings((SharedLandmark("Postitalo", (200.0, 300.0), 8.0, 5),),
                             (("Kahvila Kulma", (40.0, -10.0)),), ((0.0, 0.0), (50.0, 0.0))), HOME_A, "flight-a")
    frame = a.outgoing()
    assert frame is not None and frame.member_id == 1
    b.take(unpack(pack(frame), max_bytes=16384))
    seen = b.for_agent(HOME_B)
    home_a_in_b = np.array(ned_from_geo(HOME_B, HOME_A.lat, HOME_A.lon))[::-1]  # (east, north)
    (mark,) = seen.landmarks
    assert mark.name == "Postitalo" and mark.fixes == 5 and mark.spread_m == 8.0
    assert np.allclose(mark.xy, home_a_in_b + (200.0, 300.0), atol=0.5)
    assert seen.signs[0][0] == "Kahvila Kulma" and np.allclose(seen.signs[0][1], home_a_in_b + (40.0, -10.0), atol=0.5)
    assert np.allclose(seen.looked_from, [home_a_in_b, home_a_in_b + (50.0, 0.0)], atol=0.5)
    assert b.for_agent(HOME_B) is seen  # nothing new: the same answer, not a new conversion
    assert b.counts() == {"frames_taken": 1, "members": 1, "expired": 0, "landmarks": 1, "signs": 1, "looked_from": 2}


def test_frames_are_kept_as_a_union_the_better_placed_landmark_wins_and_each_member_is_bounded():
    b = FleetFindings(2)
    b.take(FleetDiscovery(1, 1, "f", landmarks=(LandmarkFinding("Tuomiokirkko", 60.1700, 24.9500, 30.0, 2),),
                          looked_from=(LookedFrom(60.1700, 24.9400),)))
    b.take(FleetDiscovery(1, 2, "f", looked_from=(LookedFrom(60.1710, 24.9400),)))  # a later, smaller snapshot
    b.take(FleetDiscovery(3, 1, "g", landmarks=(LandmarkFinding("Tuomiokirkko", 60.1701, 24.9501, 9.0, 7),)))
    seen = b.for_agent(HOME_A)
    assert len(seen.looked_from) == 2  # the first frame's look is not forgotten
    (mark,) = seen.landmarks
    assert mark.fixes == 7 and mark.spread_m == 9.0  # member 3's, placed by more sightings
    for k in range(MAX_KEPT + 50):  # a member that invents places costs bounded memory
        b.take(FleetDiscovery(4, k + 1, "h", looked_from=(LookedFrom(60.0 + k * 1e-3, 24.9),)))
    assert b.counts()["looked_from"] == 2 + MAX_KEPT


def test_nothing_found_is_nothing_sent():
    a = FleetFindings(1)
    a.publish(SharedFindings(), HOME_A, "f")
    assert a.outgoing() is None and a.for_agent(HOME_A) is None


def test_two_channels_hand_each_other_findings_beside_their_reports(tmp_path):
    ep_a, ep_b = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"

    def cfg(pub: str, peer: str, member: int, share: bool = True) -> FleetChannelConfig:
        return FleetChannelConfig(pub_endpoint=pub, peers=(FleetPeer(peer, member_id=member),), curve=False,
                                  report_rate_hz=20.0, findings_rate_hz=10.0, share_findings=share)

    found_a, found_b = FleetFindings(1), FleetFindings(2)
    found_a.publish(SharedFindings((SharedLandmark("Postitalo", (200.0, 300.0), 8.0, 5),)), HOME_A, "fa")
    got = threading.Event()
    taken: list[FleetDiscovery] = []

    def take_b(d: FleetDiscovery) -> None:
        found_b.take(d)
        taken.append(d)
        got.set()

    reports_b = Inbox(lambda rs: len(rs) >= 3)
    here = TrafficReport(1, 60.17, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0)
    a = FleetChannel(cfg(ep_a, ep_b, 2), 1, lambda: here, Inbox(), own_findings=found_a.outgoing,
                     take_findings=lambda d: None)
    b = FleetChannel(cfg(ep_b, ep_a, 1), 2, lambda: None, reports_b, own_findings=found_b.outgoing,
                     take_findings=take_b)
    try:
        a.start(), b.start()
        assert got.wait(HANG_GUARD_S) and reports_b.done.wait(HANG_GUARD_S)
    finally:
        a.close(), b.close()
    assert taken[0].member_id == 1 and taken[0].seq >= 1
    assert [m.name for m in found_b.for_agent(HOME_A).landmarks] == ["Postitalo"]
    assert b.counters()["findings_accepted"] >= 1 and a.counters()["findings_sent"] >= 1
    assert "findings_sent" not in b.counters()  # b found nothing: it said nothing


def test_with_share_findings_off_a_member_neither_asks_for_nor_sends_findings():
    ep_a, ep_b = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    asked: list[int] = []
    here = TrafficReport(1, 60.17, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0)
    found_a = FleetFindings(1)
    found_a.publish(SharedFindings((SharedLandmark("Postitalo", (200.0, 300.0), 8.0, 5),)), HOME_A, "fa")

    def own() -> FleetDiscovery | None:
        asked.append(1)
        return found_a.outgoing()

    reports_b = Inbox(lambda rs: len(rs) >= 5)
    taken: list[FleetDiscovery] = []
    a = FleetChannel(FleetChannelConfig(pub_endpoint=ep_a, peers=(FleetPeer(ep_b),), curve=False, report_rate_hz=20.0,
                                        findings_rate_hz=10.0, share_findings=False), 1, lambda: here, Inbox(),
                     own_findings=own, take_findings=taken.append)
    b = FleetChannel(FleetChannelConfig(pub_endpoint=ep_b, peers=(FleetPeer(ep_a),), curve=False, report_rate_hz=20.0),
                     2, lambda: None, reports_b, take_findings=taken.append)
    try:
        a.start(), b.start()
        assert reports_b.done.wait(HANG_GUARD_S)  # five reports got through: findings would have by now
    finally:
        a.close(), b.close()
    assert asked == [] and taken == [] and "findings_accepted" not in b.counters()
