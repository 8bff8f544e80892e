"""The supervisor's world feed client against the real observation server over ZeroMQ."""

import threading

import msgpack
import pytest
import zmq

from contract.payloads.base import PayloadError
from contract.world_feed import REPLIES, REQUESTS, FeedError, GazetteerReply, Observation, Sighting
from onboard.supervisor.world_link import WorldLink, WorldLinkError, parse_observation
from sim.world.observation_server import WorldObservationServer
from tests.supervisor.flightkit import world


def test_observe_gazetteer_and_snapping():
    w = world()
    with WorldObservationServer(w, noise="perfect") as server:
        link = WorldLink(server.endpoint, timeout_s=30.0)  # a loaded box renders slowly
        try:
            names, aliases = link.gazetteer()  # aliases: OSM's other names, each one landmark's
            assert set(names) == {lm.name for lm in w.landmarks}
            assert aliases and set(aliases.values()) <= set(names)
            assert aliases.get("Helsinki Cathedral") == "Helsingin tuomiokirkko"
            node = 7
            lat, lon = (float(v) for v in w.graph.latlon[node])
            obs = link.observe(lat, lon, 90.0, node=node, image=True)
            assert obs.node == node and obs.snap_m < 1.0
            assert {m.node for m in obs.moves} == {n.node for n in w.graph.neighbours(node)}
            assert obs.image_png and obs.image_png[:4] == b"\x89PNG"
            m = obs.moves[0]
            assert obs.move(m.node) == m
            with pytest.raises(KeyError):
                obs.move(-5)
            # a wrong node hint far from the reported position: the nearest waypoint is used
            far = max(range(w.graph.n_nodes), key=lambda n: abs(w.graph.xy[n][0] - w.graph.xy[node][0]))
            assert link.observe(lat, lon, 0.0, node=far).node == node
            agent_obs = obs.for_agent(3, 10)
            assert agent_obs.step == 3 and len(agent_obs.moves) == len(obs.moves)
        finally:
            link.close()
        # malformed requests are answered with an error and counted, the server lives on
        ctx = zmq.Context.instance()
        req = ctx.socket(zmq.REQ)
        req.setsockopt(zmq.LINGER, 0)
        req.connect(server.endpoint)
        for body in (b"\xc1garbage", msgpack.packb({"type": "observe", "v": 1, "lat": "x"}), msgpack.packb([1, 2]),
                     msgpack.packb({"type": "observe", "v": 2, "lat": lat, "lon": lon})):  # a version not read here
            req.send(body)
            assert req.poll(30000)
            assert isinstance(REPLIES.unpack(req.recv()), FeedError)
        req.close(0)
        assert server.counters.rejected == 4
        assert WorldLink(server.endpoint, timeout_s=30.0).observe(lat, lon, 0.0).node == node


def test_silent_server_is_a_clear_error_and_bad_replies_too():
    ctx = zmq.Context.instance()
    rep = ctx.socket(zmq.REP)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    link = WorldLink(f"tcp://127.0.0.1:{port}", timeout_s=0.3)
    try:
        with pytest.raises(WorldLinkError, match="did not answer"):
            link.observe(60.0, 24.0, 0.0)
    finally:
        link.close()
        rep.close(0)
    with pytest.raises(PayloadError, match=r"moves\[0\].bearing"):
        REPLIES.unpack(msgpack.packb({"type": "observation", "v": 1, "node": 1, "lat": 0, "lon": 0,
                                      "moves": [{"node": 2}]}))
    with pytest.raises(WorldLinkError, match="malformed"):
        parse_observation(GazetteerReply(("Kiasma",)))
    with pytest.raises(WorldLinkError, match="refused"):
        parse_observation(FeedError("nope"))


def _ask_raw(endpoint: str, request: object):
    req = zmq.Context.instance().socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(endpoint)
    try:
        req.send(msgpack.packb(request))
        assert req.poll(2000)
        return REPLIES.unpack(req.recv())
    finally:
        req.close(0)


def test_observe_from_a_look_up_altitude_and_malformed_altitudes():
    w = world()
    node = 409  # t020's start: its landmark (Stockmann) is hidden by the blocks at cruise, in sight from 40 m
    lat, lon = (float(v) for v in w.graph.latlon[node])
    with WorldObservationServer(w, noise="perfect") as server:
        link = WorldLink(server.endpoint, timeout_s=2.0)
        try:
            cruise = link.observe(lat, lon, 0.0, node=node)
            up = link.observe(lat, lon, 0.0, node=node, altitude_m=40.0)
        finally:
            link.close()
        assert cruise.altitude_m is None and cruise.pois  # the cruise view, as before the field existed
        assert up.altitude_m == 40.0 and up.pois == ()  # no name is readable from above
        assert {s.name for s in up.landmarks} == {w.landmarks[j].name for j in w.visible_from(node, 40.0)}
        assert "Stockmann" in {s.name for s in up.landmarks} - {s.name for s in cruise.landmarks}
        assert up.moves == cruise.moves and up.node == cruise.node
        agent_obs = up.for_agent(2, 5, cruise_alt_m=30.0, look_up_ceiling_m=118.0)
        assert agent_obs.altitude_m == 40.0 and agent_obs.look_up_ceiling_m == 118.0
        assert cruise.for_agent(2, 5, cruise_alt_m=30.0).altitude_m == 30.0

        # A bad altitude is a malformed request: an error reply naming it, counted; the server lives on.
        served = server.counters.requests
        base = {"type": "observe", "v": 1, "lat": lat, "lon": lon, "heading": 0.0, "node": node}
        for bad in ("40", float("nan"), float("inf"), -5.0, 0.0, 1e9, True, [40.0]):
            reply = _ask_raw(server.endpoint, {**base, "altitude": bad})
            assert isinstance(reply, FeedError) and "'altitude'" in reply.error, (bad, reply)
        assert server.counters.rejected == 8 and server.counters.requests == served
        assert _ask_raw(server.endpoint, {**base, "altitude": 60}).altitude_m == 60.0
        assert _ask_raw(server.endpoint, {**base, "altitude": None}).pois


def test_a_server_without_look_ups_is_an_error_not_a_view_from_above():
    """A world feed older than the altitude field answers at cruise; the link must not pass that off."""
    rep = zmq.Context.instance().socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    old_reply = Observation(1, 60.0, 24.0, pois=(Sighting("Kioski", 0.0, 10.0),))

    def serve_one() -> None:
        if rep.poll(5000):
            request = REQUESTS.unpack(rep.recv())
            assert request.altitude == 40.0
            rep.send(REPLIES.pack(old_reply))

    link = WorldLink(f"tcp://127.0.0.1:{port}", timeout_s=2.0)
    server = threading.Thread(target=serve_one, daemon=True)
    server.start()
    try:
        with pytest.raises(WorldLinkError, match="without look-ups"):
            link.observe(60.0, 24.0, 0.0, altitude_m=40.0)
    finally:
        server.join(5)
        link.close()
        rep.close(0)
    with pytest.raises(PayloadError, match="altitude_m"):
        REPLIES.unpack(msgpack.packb({"type": "observation", **old_reply.encode(), "altitude_m": float("nan")}))


def test_a_frame_at_a_gimbal_pitch_the_server_did_not_honour_is_refused():
    """A world feed older than the pitch field sends the mounting pitch's frame; the link must say so."""
    rep = zmq.Context.instance().socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    old_reply = Observation(1, 60.0, 24.0, image_png=b"\x89PNG")
    asked = []

    def serve(n: int) -> None:
        for k in range(n):
            if rep.poll(5000):
                asked.append(REQUESTS.unpack(rep.recv()).camera_pitch)
                rep.send(REPLIES.pack(Observation(1, 60.0, 24.0, image_png=b"\x89PNG", camera_pitch=-45.0) if k == 1
                                      else old_reply))

    link = WorldLink(f"tcp://127.0.0.1:{port}", timeout_s=2.0)
    server = threading.Thread(target=serve, args=(2,), daemon=True)
    server.start()
    try:
        with pytest.raises(WorldLinkError, match="without gimbal pitch"):
            link.frame(60.0, 24.0, 0.0, 25.0, pitch_deg=-45.0)
        assert link.frame(60.0, 24.0, 0.0, 25.0, pitch_deg=-45.0).image_png == b"\x89PNG"
    finally:
        server.join(5)
        link.close()
        rep.close(0)
    assert asked == [-45.0, -45.0]


def _answer_once(reply: dict | bytes) -> tuple[str, threading.Thread]:
    rep = zmq.Context.instance().socket(zmq.REP)
    port = rep.bind_to_random_port("tcp://127.0.0.1")

    def serve():
        try:
            if rep.poll(10000):
                rep.recv()
                rep.send(reply if isinstance(reply, bytes) else msgpack.packb(reply))
        finally:
            rep.close(0)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return f"tcp://127.0.0.1:{port}", t


def test_aliases_keep_only_pairs_naming_a_known_landmark_and_a_bad_table_is_an_error():
    endpoint, t = _answer_once(REPLIES.pack(GazetteerReply(("Kiasma",), {
        "Museum of Modern Art Kiasma": "Kiasma", "Nowhere": "Elsewhere", "": "Kiasma"})))
    link = WorldLink(endpoint, timeout_s=10.0)
    try:
        assert link.gazetteer() == (["Kiasma"], {"Museum of Modern Art Kiasma": "Kiasma"})
    finally:
        link.close()
        t.join()
    endpoint, t = _answer_once({"type": "gazetteer_reply", "v": 1, "names": ["Kiasma"]})  # a feed that sends none
    link = WorldLink(endpoint, timeout_s=10.0)
    try:
        assert link.gazetteer() == (["Kiasma"], {})
    finally:
        link.close()
        t.join()
    for bad in (["Kiasma"], {"Five": 5}):  # not a table, or an alias naming no landmark by a string
        endpoint, t = _answer_once({"type": "gazetteer_reply", "v": 1, "names": ["Kiasma"], "aliases": bad})
        link = WorldLink(endpoint, timeout_s=10.0)
        try:
            with pytest.raises(WorldLinkError, match="malformed reply.*aliases"):
                link.gazetteer()
        finally:
            link.close()
            t.join()
