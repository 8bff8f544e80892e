"""The supervisor's world feed client against the real observation server over ZeroMQ."""

import msgpack
import pytest
import zmq

from onboard.supervisor.world_link import WorldLink, WorldLinkError, parse_observation
from sim.world.observation_server import WorldObservationServer
from tests.supervisor.flightkit import world


def test_observe_gazetteer_and_snapping():
    w = world()
    with WorldObservationServer(w, noise="perfect") as server:
        link = WorldLink(server.endpoint, timeout_s=2.0)
        try:
            names = link.gazetteer()
            assert set(names) == {lm.name for lm in w.landmarks}
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
        for body in (b"\xc1garbage", msgpack.packb({"op": "observe", "lat": "x"}), msgpack.packb([1, 2])):
            req.send(body)
            assert req.poll(2000)
            assert msgpack.unpackb(req.recv(), raw=False)["ok"] is False
        req.close(0)
        assert server.counters.rejected == 3
        assert WorldLink(server.endpoint).observe(lat, lon, 0.0).node == node


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
    with pytest.raises(WorldLinkError, match="malformed"):
        parse_observation({"ok": True, "node": 1, "lat": 0, "lon": 0, "moves": [{"node": 2}]})
    with pytest.raises(WorldLinkError, match="refused"):
        parse_observation({"ok": False, "error": "nope"})
