"""Fault 36.5: a member's finding placing the goal's reference landmark 10,000 km away was adopted (the
target estimate read "9,896,362 m S" against a 2.5 km geofence).

Findings farther from home than the geofence's radius or the configured radio range are now refused
and counted. Real parts: a member's frames on a real ZeroMQ PUB on loopback, read by a real fleet
channel (a SUB on its own thread) that hands them to the vehicle's `FleetFindings`, asked as the
supervisor asks between two steps (its home, its fence's radius).
"""

from __future__ import annotations

import threading

import zmq

from contract.bounded_socket import bounded_socket
from contract.fleet_discovery import FleetDiscovery, LandmarkFinding, LookedFrom, SignRead
from contract.fleet_frame import pack
from common.geodesy import GeoPoint
from onboard.fleet.channel import FleetChannel
from onboard.fleet.findings import FleetFindings
from onboard.fleet.settings import FleetChannelConfig, FleetPeer

HOME = GeoPoint(60.1700, 24.9400)
FENCE_M = 2500.0
NEAR = LandmarkFinding("Postitalo", 60.1719, 24.9413, 12.0, 4)              # about 230 m from home
FAR = LandmarkFinding("Kansallismuseo", -29.6, 24.94, 12.0, 9000)          # about 10,000 km south
FRAMES = [FleetDiscovery(7, 1, "hostile", landmarks=(FAR, NEAR), signs=(SignRead("Kahvila", 60.175, 24.94),
                                                                        SignRead("Far cafe", 10.0, 24.94)),
                         looked_from=(LookedFrom(60.17, 24.94), LookedFrom(60.17, 27.0))),
          FleetDiscovery(7, 2, "hostile", landmarks=(LandmarkFinding("Kansallismuseo", 60.18, 24.95, 5.0, 3),))]


def _deliver(frames: list[FleetDiscovery], findings: FleetFindings) -> dict:
    """Send `frames` from a member's PUB to a real channel until its findings took them all."""
    ctx = zmq.Context()
    pub = bounded_socket(ctx, zmq.PUB, 1024)
    pub.bind("tcp://127.0.0.1:*")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    all_taken = threading.Event()

    def take(d: FleetDiscovery) -> None:
        findings.take(d)
        if d.seq == frames[-1].seq:
            all_taken.set()

    ch = FleetChannel(FleetChannelConfig(pub_endpoint="tcp://127.0.0.1:*", peers=(FleetPeer(endpoint, member_id=7),),
                                         curve=False), 1, lambda: None, lambda batch: (), take_findings=take)
    try:
        ch.start()
        while not all_taken.wait(0.05):   # a SUB joins late: frames are repeated until the last one is taken
            for f in frames:
                pub.send(pack(f))
    finally:
        ch.close()
        pub.close(0)
        ctx.term()
    return ch.counters()


def test_a_finding_beyond_the_fence_is_refused_and_counted() -> None:
    findings = FleetFindings(1, radio_range_m=FleetChannelConfig().findings_max_range_m)
    assert findings.for_agent(HOME, fence_m=FENCE_M) is None   # the flight loop has said where home is
    counters = _deliver(FRAMES[:1], findings)
    assert counters["findings_accepted"] >= 1
    seen = findings.for_agent(HOME, fence_m=FENCE_M)
    assert [m.name for m in seen.landmarks] == ["Postitalo"]
    assert [n for n, _ in seen.signs] == ["Kahvila"] and len(seen.looked_from) == 1
    assert all(abs(c) <= FENCE_M for m in seen.landmarks for c in m.xy)
    c = findings.counts()
    assert c["refused_out_of_reach"] >= 3 and c["refused_out_of_reach"] % 3 == 0   # far landmark, sign, place
    assert c["landmarks"] == 1

    # the same landmark placed in reach by a later frame is adopted there
    _deliver(FRAMES, findings)
    near = {m.name: m.xy for m in findings.for_agent(HOME, fence_m=FENCE_M).landmarks}
    assert set(near) == {"Postitalo", "Kansallismuseo"} and max(map(abs, near["Kansallismuseo"])) < FENCE_M


def test_findings_taken_before_the_home_was_known_are_judged_when_it_is() -> None:
    findings = FleetFindings(1)
    _deliver(FRAMES[:1], findings)
    assert findings.counts()["landmarks"] == 2          # no home yet: kept, not judged
    seen = findings.for_agent(HOME, fence_m=FENCE_M)
    assert [m.name for m in seen.landmarks] == ["Postitalo"]
    assert findings.counts()["refused_out_of_reach"] == 3
    # a radio range shorter than the fence is the bound
    short = FleetFindings(1, radio_range_m=100.0)
    _deliver(FRAMES[:1], short)
    assert short.for_agent(HOME, fence_m=FENCE_M) is not None
    assert [m.name for m in short.for_agent(HOME, fence_m=FENCE_M).landmarks] == []
