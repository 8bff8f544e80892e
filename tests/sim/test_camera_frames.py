"""The world feed as a camera only: a frame from the reported position, no sightings with it."""

from __future__ import annotations

import cv2
import msgpack
import numpy as np
import pytest

from contract.world_feed import REQUESTS
from onboard.supervisor.settings import SupervisorConfig
from sim.world.observation_server import WorldObservationServer
from tests.sim._world_fixture import helsinki


@pytest.fixture(scope="module")
def server():
    return WorldObservationServer(helsinki(), noise="perfect")


def _at(world, node, east_off=0.0):
    from common.geodesy import geo_from_ned

    x, y = world.graph.xy[node]
    return geo_from_ned(world.origin, float(y), float(x + east_off))


def ask(server, req: dict):
    """Serve a request as it comes off the wire: through the contract's checking decoder."""
    return server.handle(REQUESTS.unpack(msgpack.packb({"type": "observe", "v": 1, **req})))


def _decode(png):
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None
    return img


def test_a_frame_only_request_carries_no_sightings_and_a_camera_frame(server):
    w = server.world
    node = next(n for n in range(w.graph.n_nodes) if w.visible[n])  # a waypoint with landmarks in sight
    lat, lon = (float(v) for v in w.graph.latlon[node])
    full = ask(server, {"lat": lat, "lon": lon, "heading": 0.0, "node": node, "image": False})
    assert full.landmarks
    reply = ask(server, {"lat": lat, "lon": lon, "heading": 90.0, "node": node, "image": True,
                           "sightings": False, "camera_alt": 30.0})
    assert reply.landmarks == () and reply.pois == ()
    sup = SupervisorConfig()  # the vehicle's camera: the supervisor refuses a frame of another size
    assert _decode(reply.image_png).shape == (sup.camera_height, sup.camera_width, 3)


def test_the_frame_is_taken_where_the_vehicle_reports_it_is(server):
    """Off its waypoint by 15 m the vehicle sees another picture than from the waypoint itself."""
    w = server.world
    node = next(n for n in range(w.graph.n_nodes) if w.visible[n])
    req = {"heading": 45.0, "node": node, "image": True, "sightings": False, "camera_alt": 30.0}
    on = ask(server, {**req, "lat": float(w.graph.latlon[node][0]), "lon": float(w.graph.latlon[node][1])})
    lat, lon = _at(w, node, 15.0)
    off = ask(server, {**req, "lat": lat, "lon": lon})
    assert off.node == on.node == node  # the same waypoint, snapped
    diff = np.abs(_decode(on.image_png).astype(int) - _decode(off.image_png).astype(int)).mean()
    assert diff > 5.0, diff


def test_a_bad_sightings_flag_or_camera_altitude_is_a_malformed_request(server):
    w = server.world
    lat, lon = (float(v) for v in w.graph.latlon[0])
    for bad in ({"sightings": "no"}, {"camera_alt": -3.0}, {"camera_alt": float("nan")}, {"heading": float("inf")},
                {"camera_pitch": float("nan")}, {"camera_pitch": -91.0}, {"camera_pitch": "down"}, {"camera_pitch": True}):
        with pytest.raises(ValueError):
            ask(server, {"lat": lat, "lon": lon, "heading": 0.0, "image": True, **bad})


def test_the_gimbal_pitch_goes_with_the_frame_and_is_echoed(server):
    """A frame asked at -45 degrees is another picture than at the mounting pitch, and says which it is."""
    w = server.world
    node = next(n for n in range(w.graph.n_nodes) if w.visible[n])
    lat, lon = (float(v) for v in w.graph.latlon[node])
    req = {"lat": lat, "lon": lon, "heading": 45.0, "node": node, "image": True,
           "sightings": False, "camera_alt": 25.0}
    level, down = ask(server, req), ask(server, {**req, "camera_pitch": -45.0})
    assert level.camera_pitch is None and down.camera_pitch == -45.0
    a, b = _decode(level.image_png).astype(int), _decode(down.image_png).astype(int)
    assert np.abs(a - b).mean() > 5.0
    # the top row is sky at the mounting pitch (above the roofs there), not looking 45 degrees down
    from sim.world.render import SKY_TOP

    sky = lambda img: np.abs(img[0].mean(axis=0) - np.array(SKY_TOP)).max() < 12  # noqa: E731
    assert sky(a) and not sky(b)
