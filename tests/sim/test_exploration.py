"""Two-agent exploration: frontier choice, the discovery link over real ZeroMQ sockets, hostile frames."""

from __future__ import annotations

import math

import msgpack
import pytest
import zmq

from sim.exploration.discovery_share import DiscoveryShare
from sim.exploration.discovery_wire import decode, encode
from sim.exploration.exploration_view import Discovery, ExplorationView, Fix, SeenPoi, VisitedWaypoint, exits_from
from sim.exploration.frontier_explorer import ExplorerSettings, FrontierExplorer
from tests.agent.toy_city import ToyCity

NO_JITTER = ExplorerSettings(jitter_m=0.0)


def fix(city: ToyCity, node: int) -> Fix:
    return Fix(node, *city.xy(node))


def visit(city: ToyCity, node: int) -> VisitedWaypoint:
    f = fix(city, node)
    return VisitedWaypoint(f, exits_from(f, city.moves(node)))


def fly(city: ToyCity, agent: FrontierExplorer, start: int, steps: int) -> list[int]:
    node, trail = start, [start]
    for step in range(steps):
        a = agent.act(city.observe(node, step, steps - step), fix(city, node))
        assert a.node in {m.node for m in city.moves(node)}
        node = a.node
        trail.append(node)
    return trail


@pytest.fixture
def share_pair():
    a = DiscoveryShare(ExplorationView("v0"), team="t").start()
    b = DiscoveryShare(ExplorationView("v1"), team="t").start()
    try:
        a.connect(b.endpoint)
        b.connect(a.endpoint)
        assert a.wait_for_subscribers(1) and b.wait_for_subscribers(1)
        yield a, b
    finally:
        a.close()
        b.close()


# --- frontier choice ------------------------------------------------------------------
def test_moves_towards_ground_nobody_has_visited():
    city = ToyCity(size=9)
    agent = FrontierExplorer("v0", NO_JITTER)
    centre = city.node(4, 4)
    for n in (city.node(4, 5), city.node(4, 6), city.node(3, 5), city.node(5, 5)):  # the east side is known
        agent.view.record_visit(visit(city, n))
    a = agent.act(city.observe(centre, 0, 40), fix(city, centre))
    assert a.node != city.node(4, 5)
    x_here, _ = city.xy(centre)
    x_next, _ = city.xy(a.node)
    assert x_next <= x_here, "went back towards the visited east side"


def test_leaves_a_visited_pocket_by_routing_to_the_frontier():
    city = ToyCity(size=9)
    agent = FrontierExplorer("v0", NO_JITTER)
    trail = fly(city, agent, city.node(4, 4), 70)
    assert len(set(trail)) >= 60, f"only {len(set(trail))} of 71 steps reached new waypoints"
    stuck = sum(1 for i in range(4, len(trail)) if trail[i] == trail[i - 2] == trail[i - 4])
    assert stuck == 0, "oscillated between two waypoints"


def test_never_takes_a_frontier_the_peer_has_claimed():
    city = ToyCity(size=9)
    agent = FrontierExplorer("v1", NO_JITTER)
    here = city.node(4, 4)
    first = FrontierExplorer("probe", NO_JITTER).act(city.observe(here, 0, 40), fix(city, here)).node
    agent.view.merge(Discovery("v0", 0, fix(city, here), claim=fix(city, first)))
    a = agent.act(city.observe(here, 0, 40), fix(city, here))
    assert a.node != first and agent.claim.waypoint != first


def test_crossed_claims_go_to_the_lower_vehicle_id():
    city = ToyCity(size=9)
    here = city.node(0, 0)
    target = city.node(0, 1)
    views = {vid: ExplorationView(vid) for vid in ("v0", "v1")}
    for vid, other in (("v0", "v1"), ("v1", "v0")):
        views[vid].merge(Discovery(other, 3, fix(city, here), claim=fix(city, target)))
    assert views["v1"].claims_against(target)
    assert not views["v0"].claims_against(target)


# --- the wire ---------------------------------------------------------------------------
def test_discovery_round_trips_through_msgpack():
    city = ToyCity()
    d = Discovery("v0", 7, fix(city, 10), (visit(city, 10), visit(city, 11)),
                  (SeenPoi("Cafe Aalto", 300.5, 299.0),), fix(city, 12), full=True)
    seq, back = decode(encode(d, team="t", seq=5), team="t")
    assert seq == 5 and back == d


# --- sharing over real sockets ------------------------------------------------------------
def test_the_peer_view_is_merged_over_zeromq(share_pair):
    a, b = share_pair
    city = ToyCity(size=9)
    agent = FrontierExplorer("v0", NO_JITTER, view=a.view)
    node = city.node(4, 4)
    for step in range(6):
        act = agent.act(city.observe(node, step, 20), fix(city, node))
        a.publish(step, fix(city, node), agent.claim)
        node = act.node
    assert b.wait_for("v0", 5, timeout_s=5.0)
    assert b.view.streets.flown == a.view.streets.flown
    assert all(b.view.visited_by[w] == {"v0"} for w in b.view.streets.flown)
    assert b.view.peers["v0"].claim == agent.claim
    assert b.counters.merged == 6 and b.counters.gaps == 0 and b.counters.refused_total == 0


def test_a_full_snapshot_repairs_a_lost_delta(share_pair):
    a, b = share_pair
    city = ToyCity()
    a.full_every = 3  # seq 1 and 4 are full snapshots
    a.view.record_visit(visit(city, 0))
    a.publish(0, fix(city, 0), None)
    a.view.record_visit(visit(city, 1))
    a.view.news(1, fix(city, 1), None)  # this delta never makes it onto the link
    a.view.record_visit(visit(city, 2))
    a.publish(2, fix(city, 2), None)
    assert b.wait_for("v0", 2, timeout_s=5.0)
    assert b.view.visited(0) and b.view.visited(2) and not b.view.visited(1)
    a.publish(3, fix(city, 2), None)
    a.publish(4, fix(city, 2), None)
    assert b.wait_for("v0", 4, timeout_s=5.0)
    assert b.view.visited(1)


def test_garbage_and_foreign_frames_are_counted_and_ignored(share_pair):
    _, b = share_pair
    city = ToyCity()
    ctx = zmq.Context()
    rogue = ctx.socket(zmq.XPUB)
    rogue.linger = 0
    try:
        port = rogue.bind_to_random_port("tcp://127.0.0.1")
        b.connect(f"tcp://127.0.0.1:{port}")
        assert rogue.poll(5000) and rogue.recv()[:1] == b"\x01"
        good = Discovery("v0", 0, fix(city, 3), (visit(city, 3),))
        doc = msgpack.unpackb(encode(good, team="t", seq=1), raw=False)
        bad_payload = dict(doc, pose={"waypoint": "three", "east": 0.0, "north": 0.0})
        nan_pose = dict(doc, pose={"waypoint": 3, "east": math.nan, "north": 0.0})
        frames = [b"\xc1 not msgpack", msgpack.packb([1, 2, 3]), msgpack.packb(dict(doc, v=2)),
                  msgpack.packb(dict(doc, type="state")), msgpack.packb(bad_payload), msgpack.packb(nan_pose),
                  encode(good, team="other-team", seq=1), encode(Discovery("v1", 0, fix(city, 3)), team="t", seq=1),
                  encode(good, team="t", seq=2)]
        for f in frames:
            rogue.send(f)
        assert b.wait_for("v0", 0, timeout_s=5.0)
        b.drain()
    finally:
        rogue.close(0)
        ctx.term()
    assert b.counters.merged == 1 and b.view.visited(3)
    assert b.counters.refused == {"malformed": 1, "unknown_type": 2, "wrong_version": 1, "bad_payload": 2,
                                  "foreign": 1, "own_echo": 1}


def test_two_sharing_explorers_never_hold_the_same_claim(share_pair):
    a, b = share_pair
    city = ToyCity(size=9)
    agents = [FrontierExplorer("v0", view=a.view, seed=1), FrontierExplorer("v1", view=b.view, seed=2)]
    shares, nodes = [a, b], [city.node(4, 4)] * 2
    for step in range(30):
        for i, (agent, share) in enumerate(zip(agents, shares)):
            peer = 1 - i
            due = step if peer < i else step - 1
            if due >= 0:
                assert share.wait_for(f"v{peer}", due, timeout_s=5.0)
            act = agent.act(city.observe(nodes[i], step, 30 - step), fix(city, nodes[i]))
            other = agents[peer].claim
            assert agent.claim is None or other is None or agent.claim.waypoint != other.waypoint
            share.publish(step, fix(city, nodes[i]), agent.claim)
            nodes[i] = act.node
    both = [w for w, who in a.view.visited_by.items() if who == {"v0", "v1"}]
    assert len(a.view.streets.flown) >= 50, "together they covered little of the 81-waypoint city"
    assert len(both) <= 3, f"{len(both)} waypoints flown by both"
