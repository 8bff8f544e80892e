"""The simulated world's sensor feed for the supervisor: what the drone would perceive where it is.

On a real drone the supervisor's observation comes from its own corridor map
(waypoints on offer) and landmark / sign recognition on camera frames. In
simulation a separate process plays that part, exactly as a simulator's camera
plugin does for a real autopilot stack: the supervisor asks over ZeroMQ
(a REQ client, msgpack) with the position the *autopilot* reports, and this server
answers from the Helsinki world with `OraclePerception` (the benchmark's
perception model, with the same noise presets) plus, on request, the rendered
oblique camera view as PNG. The supervisor never imports `sim/`.

Request  ``{"op": "gazetteer"}`` -> ``{"ok": true, "names": [...], "aliases": {alias: name}}`` (landmarks the
drone can recognise, and their other names), or
         ``{"op": "observe", "lat", "lon", "heading", "node": int | None, "image": bool, "altitude": float | None}``
Reply    ``{"ok": true, "node", "lat", "lon", "snap_m", "moves": [{node, bearing, length, lat, lon}],
            "landmarks": [{name, bearing, distance}], "pois": [...], "image_png": bytes | None,
            "altitude_m": float | None}``
or       ``{"ok": false, "error": "..."}`` for a malformed request (counted, never fatal).

``altitude`` (optional, metres above ground) is where the camera is during a
look-up over the roofs: the landmarks are those in line of sight from that
height (`OraclePerception.landmarks_at(node, altitude)`, the benchmark's rule)
and ``pois`` is empty, since names are not readable from up there. Absent or
None, the sightings are the world's cruise view, as before the field existed.
The reply echoes it as ``altitude_m`` (None for the cruise view), so a client
that asked for an altitude can tell a server that predates the field (no
``altitude_m`` in its reply) from one that honoured it. An altitude that is not
a finite number within `ALTITUDE_RANGE_M` is a malformed request.

``"sightings": false`` asks for a camera frame only (camera perception): no
landmarks or POIs in the reply, and the frame rendered from the reported
position itself (not its waypoint) at ``camera_alt`` metres (default the
cruise altitude) along ``heading``, so the picture is what a camera there would
take, an off-waypoint drone and all. ``camera_pitch`` (degrees, -90..90,
optional) is the gimbal's pitch for that frame (default: the camera's
mounting pitch); the reply echoes it, so a client that asked can tell a server
that predates the field.

``node`` is the waypoint the supervisor flew to; it is used when the reported
position is within `SNAP_TOLERANCE_M` of it, otherwise the nearest waypoint
is, so a drone that did not get where it was sent observes where it is.

The socket is a ROUTER speaking the REQ envelope (``[identity, b"", body]``), as
memory sync's is (``onboard.telemetry.memory_sync``), not a REP: a REP socket's
state machine breaks on one multipart message (EFSM) and its thread died of it,
leaving every later observe to time out. A ROUTER sees each message as it came:
junk of any shape is counted and answered ``{ok: false}``, and nothing a peer
sends ends the serving thread.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field

import msgpack
import numpy as np
import zmq

from contract.bounded_socket import bounded_socket
from contract.geodesy import ned_from_geo
from sim.world.perception import OraclePerception
from sim.world.world import World

log = logging.getLogger("aerie.sim.world_server")

SNAP_TOLERANCE_M = 25.0


# Largest request read (observe/gazetteer requests are small maps).
MAX_REQUEST_BYTES = 65536
# Camera altitudes an observe request may ask for (m above ground): above the world's view range
# (500 m) nothing more comes into sight, and no vehicle of Aerie's flies near it.
ALTITUDE_RANGE_M = (1.0, 500.0)
# Headings (degrees) a request may carry: any turn a client may have summed without wrapping it.
HEADING_LIMIT_DEG = 36_000.0


@dataclass
class ServerCounters:
    requests: int = 0
    rejected: int = 0
    images: int = 0
    moves_offered: int = 0  # moves sent in replies (0 for a sensor-only feed)
    nodes: list[int] = field(default_factory=list)


class WorldObservationServer:
    """ROUTER socket on a thread; `start()` binds and returns self, `endpoint` is where to connect."""

    def __init__(self, world: World, *, endpoint: str = "tcp://127.0.0.1:*", noise: str = "prep",
                 seed: int = 0, context: zmq.Context | None = None, offer_moves: bool = True) -> None:
        self.world = world
        # False: a sensor only (what the camera sees), as for a vehicle that flies its own onboard map.
        self.offer_moves = offer_moves
        self.noise, self.seed = noise, seed
        self.perception = OraclePerception(world, noise, seed)
        self.counters = ServerCounters()
        self._bind = endpoint
        self._ctx = context or zmq.Context.instance()
        self._sock: zmq.Socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._renderer = None
        self._renderer_built: threading.Thread | None = None
        self.endpoint = ""

    def reset_perception(self) -> None:
        """Start the perception noise over from the seed: a second flight sees the world as the first did."""
        self.perception = OraclePerception(self.world, self.noise, self.seed)

    def start(self) -> "WorldObservationServer":
        self._sock = bounded_socket(self._ctx, zmq.ROUTER, MAX_REQUEST_BYTES)
        self._sock.sndhwm = 100   # replies to a peer that does not read are dropped, not queued forever
        self._sock.bind(self._bind)
        self.endpoint = self._sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self._thread = threading.Thread(target=self._run, name="world-observation-server", daemon=True)
        self._thread.start()
        # The renderer places every sign of the city and loads fonts (about a second on a busy machine): done
        # beside the serving loop from the start, so the first image request does not outlast a client timeout.
        self._renderer_built = threading.Thread(target=self._build_renderer, name="world-renderer", daemon=True)
        self._renderer_built.start()
        return self

    def _build_renderer(self) -> None:
        from sim.world.render import ViewRenderer

        self._renderer = ViewRenderer(self.world)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "WorldObservationServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        sock = self._sock
        try:
            while not self._stop.is_set():
                try:
                    if not sock.poll(100):
                        continue
                    parts = sock.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    continue
                try:
                    self._serve(sock, parts)
                except Exception:  # noqa: BLE001 - nothing a peer sends ends the feed
                    self.counters.rejected += 1
                    log.exception("world feed: request not served")
        finally:
            sock.close(0)

    def _serve(self, sock: zmq.Socket, parts: list[bytes]) -> None:
        """Answer one message from the ROUTER: a REQ request gets its reply, anything else an error."""
        if len(parts) != 3 or parts[1] != b"":
            self.counters.rejected += 1
            enveloped = len(parts) >= 2 and parts[1] == b""
            reply: dict = {"ok": False, "error": f"expected one request frame, got {len(parts) - 2}" if enveloped
                           else "not a REQ request (no empty delimiter frame)"}
        else:
            try:
                reply = self.handle(decode_request(parts[2]))
            except Exception as exc:  # malformed request: answer and count, never die
                self.counters.rejected += 1
                reply = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        try:
            sock.send_multipart([parts[0], b"", msgpack.packb(reply, use_bin_type=True)], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # the peer is gone or not reading; a REQ client that wants the answer asks again

    def handle(self, req: object) -> dict:
        """The reply to one decoded request; a malformed one raises :class:`RequestError`."""
        req = check_request(req)
        if req["op"] == "gazetteer":
            return {"ok": True, "names": [lm.name for lm in self.world.landmarks],
                    "aliases": self.world.aliases()}
        lat, lon, heading = req["lat"], req["lon"], req["heading"]
        altitude, sightings, camera_alt, pitch = req["altitude"], req["sightings"], req["camera_alt"], req["camera_pitch"]
        g = self.world.graph
        y, x = ned_from_geo(self.world.origin, lat, lon)
        node = req["node"]
        if not (node is not None and 0 <= node < g.n_nodes
                and math.hypot(g.xy[node][0] - x, g.xy[node][1] - y) <= SNAP_TOLERANCE_M):
            node = int(g.nearest_node(x, y))
        self.counters.requests += 1
        self.counters.nodes.append(node)
        reply = {
            "ok": True, "node": node, "lat": float(g.latlon[node][0]), "lon": float(g.latlon[node][1]),
            "snap_m": round(float(math.hypot(g.xy[node][0] - x, g.xy[node][1] - y)), 2),
            "moves": [{"node": int(n.node), "bearing": float(n.bearing), "length": float(n.distance),
                       "lat": float(g.latlon[n.node][0]), "lon": float(g.latlon[n.node][1])}
                      for n in (g.neighbours(node) if self.offer_moves else ())],
            "landmarks": [] if not sightings else [
                {"name": s.name, "bearing": float(s.bearing), "distance": float(s.distance)}
                for s in self.perception.landmarks_at(node, altitude)],
            "pois": [] if altitude is not None or not sightings else [
                {"name": p.name, "bearing": float(p.bearing), "distance": float(p.distance)}
                for p in self.perception.pois_at(node)],
            "image_png": None,
            "altitude_m": altitude,
            "camera_pitch": None,
        }
        self.counters.moves_offered += len(reply["moves"])
        if req["image"]:
            eye = None
            if not sightings:  # a camera's frame: from where the vehicle says it is
                eye = np.array([x, y, self.world.cruise_alt if camera_alt is None else camera_alt])
                reply["camera_pitch"] = pitch
            reply["image_png"] = self._render(node, heading, eye, pitch if eye is not None else None)
        return reply

    def _render(self, node: int, heading: float, eye: np.ndarray | None = None, pitch: float | None = None) -> bytes:
        """The oblique view from the cruise altitude (also after a look-up: the vehicle is back down by then).

        With `eye` (east, north, up m): the frame from exactly there, without any debug overlay, at the
        gimbal's `pitch` (None: the camera's own).
        """
        import cv2

        if self._renderer_built is not None:
            self._renderer_built.join()
        if self._renderer is None:  # served without start() (handle() called directly), or the build failed
            self._build_renderer()
        img = self._renderer.oblique(node, heading) if eye is None else self._renderer.render_at(eye, heading, pitch)[0]
        ok, png = cv2.imencode(".png", np.ascontiguousarray(img))
        if not ok:
            raise RuntimeError("PNG encoding failed")
        self.counters.images += 1
        return png.tobytes()


class RequestError(ValueError):
    """A request to the feed is malformed (not msgpack, not a map, a field of the wrong kind or range)."""


def decode_request(raw: bytes) -> dict:
    """One request as it came off the socket, decoded and checked (:func:`check_request`); RequestError if not."""
    try:
        req = msgpack.unpackb(raw, raw=False, strict_map_key=True, max_bin_len=MAX_REQUEST_BYTES,
                              max_str_len=MAX_REQUEST_BYTES, max_array_len=MAX_REQUEST_BYTES,
                              max_map_len=MAX_REQUEST_BYTES, max_ext_len=MAX_REQUEST_BYTES)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many types for hostile input
        raise RequestError(f"not msgpack ({type(exc).__name__})") from exc
    return check_request(req)


def check_request(req: object) -> dict:
    """The request's fields, each checked and in its range (a NaN fails), with the defaults filled in."""
    if isinstance(req, dict) and req.get("op") == "gazetteer":
        return {"op": "gazetteer"}
    if not isinstance(req, dict) or req.get("op") != "observe":
        raise RequestError("expected {'op': 'observe' | 'gazetteer', ...}")
    lat, lon = _number(req, "lat", -90.0, 90.0), _number(req, "lon", -180.0, 180.0)
    heading = 0.0 if req.get("heading") is None else _number(req, "heading", -HEADING_LIMIT_DEG, HEADING_LIMIT_DEG)
    node = req.get("node")
    if node is not None and (isinstance(node, bool) or not isinstance(node, int)):
        raise RequestError(f"node must be a waypoint number or null, not {type(node).__name__}")
    sightings, image = req.get("sightings", True), req.get("image")
    if not isinstance(sightings, bool):
        raise RequestError("sightings must be true or false")
    if image is not None and not isinstance(image, bool):
        raise RequestError("image must be true, false or null")
    return {"op": "observe", "lat": lat, "lon": lon, "heading": heading % 360.0, "node": node, "image": bool(image),
            "sightings": sightings, "altitude": camera_altitude(req.get("altitude")),
            "camera_alt": camera_altitude(req.get("camera_alt")), "camera_pitch": gimbal_pitch(req.get("camera_pitch"))}


def _number(req: dict, key: str, lo: float, hi: float) -> float:
    value = req.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:  # NaN fails
        raise RequestError(f"{key} must be a number within {lo:g}..{hi:g}, not {str(value)[:40]}")
    return float(value)


def gimbal_pitch(value: object) -> float | None:
    """An observe request's ``camera_pitch``: None (the camera's own) or a number within -90..90 degrees."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -90.0 <= value <= 90.0:  # NaN fails
        raise RequestError(f"camera_pitch must be a number of degrees within -90..90 or null, not {str(value)[:40]}")
    return float(value)


def camera_altitude(value: object) -> float | None:
    """An observe request's ``altitude``: None (the cruise view), or a finite number within `ALTITUDE_RANGE_M`.

    Anything else raises RequestError, which the serving loop answers as a malformed request.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(f"altitude must be a number of metres or null, not {type(value).__name__}")
    lo, hi = ALTITUDE_RANGE_M
    if not lo <= value <= hi:  # NaN fails too
        raise RequestError(f"altitude {value!r} m is not within {lo:g}..{hi:g} m")
    return float(value)
