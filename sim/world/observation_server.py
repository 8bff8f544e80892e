"""The simulated world's sensor feed for the supervisor: what the drone would perceive where it is.

On a real drone the supervisor's observation comes from its own corridor map
(waypoints on offer) and landmark / sign recognition on camera frames. In
simulation a separate process plays that part, exactly as a simulator's camera
plugin does for a real autopilot stack: the supervisor asks over ZeroMQ
(a REQ client, msgpack) with the position the *autopilot* reports, and this server
answers from the Helsinki world with `OraclePerception` (the benchmark's
perception model, with the same noise presets) plus, on request, the rendered
oblique camera view as PNG. The supervisor never imports `sim/`.

The messages are :mod:`contract.world_feed`'s: a ``gazetteer`` request is answered
with the landmarks the drone can recognise and their other names, an ``observe``
request with an ``observation`` (the waypoint, its moves, the landmarks and POIs
in sight, on request the rendered frame), a malformed one with a ``feed_error``
(counted, never fatal).

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
junk of any shape is counted and answered with a ``feed_error``, and nothing a peer
sends ends the serving thread.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field

import numpy as np
import zmq

from contract.bounded_socket import bounded_socket
from common.geodesy import ned_from_geo
from contract.payloads.base import Payload
from contract.world_feed import (MAX_REQUEST_BYTES, REPLIES, REQUESTS, FeedError, GazetteerReply, GazetteerRequest,
                                 Move, Observation, ObserveRequest, Sighting)
from sim.world.perception import OraclePerception
from sim.world.world import World

log = logging.getLogger("aerie.sim.world_server")

SNAP_TOLERANCE_M = 25.0


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
        reply: Payload
        if len(parts) != 3 or parts[1] != b"":
            self.counters.rejected += 1
            enveloped = len(parts) >= 2 and parts[1] == b""
            reply = FeedError(f"expected one request frame, got {len(parts) - 2}" if enveloped
                              else "not a REQ request (no empty delimiter frame)")
        else:
            try:
                reply = self.handle(REQUESTS.unpack(parts[2]))
            except Exception as exc:  # malformed request: answer and count, never die
                self.counters.rejected += 1
                reply = FeedError(f"{type(exc).__name__}: {str(exc)[:300]}")
        try:
            sock.send_multipart([parts[0], b"", REPLIES.pack(reply)], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # the peer is gone or not reading; a REQ client that wants the answer asks again

    def handle(self, req: GazetteerRequest | ObserveRequest) -> GazetteerReply | Observation:
        """The reply to one checked request (:data:`contract.world_feed.REQUESTS` decodes them)."""
        if isinstance(req, GazetteerRequest):
            return GazetteerReply(tuple(lm.name for lm in self.world.landmarks), self.world.aliases())
        altitude, sightings, camera_alt, pitch = req.altitude, req.sightings, req.camera_alt, req.camera_pitch
        heading = req.heading % 360.0
        g = self.world.graph
        y, x = ned_from_geo(self.world.origin, req.lat, req.lon)
        node = req.node
        if not (node is not None and 0 <= node < g.n_nodes
                and math.hypot(g.xy[node][0] - x, g.xy[node][1] - y) <= SNAP_TOLERANCE_M):
            node = int(g.nearest_node(x, y))
        self.counters.requests += 1
        self.counters.nodes.append(node)
        moves = tuple(Move(int(n.node), float(n.bearing), float(n.distance), float(g.latlon[n.node][0]),
                           float(g.latlon[n.node][1])) for n in (g.neighbours(node) if self.offer_moves else ()))
        landmarks = () if not sightings else tuple(
            Sighting(s.name, float(s.bearing), float(s.distance)) for s in self.perception.landmarks_at(node, altitude))
        pois = () if altitude is not None or not sightings else tuple(
            Sighting(p.name, float(p.bearing), float(p.distance)) for p in self.perception.pois_at(node))
        self.counters.moves_offered += len(moves)
        image, echoed_pitch = None, None
        if req.image:
            eye = None
            if not sightings:  # a camera's frame: from where the vehicle says it is
                eye = np.array([x, y, self.world.cruise_alt if camera_alt is None else camera_alt])
                echoed_pitch = pitch
            image = self._render(node, heading, eye, pitch if eye is not None else None)
        return Observation(node, float(g.latlon[node][0]), float(g.latlon[node][1]),
                           snap_m=round(float(math.hypot(g.xy[node][0] - x, g.xy[node][1] - y)), 2), moves=moves,
                           landmarks=landmarks, pois=pois, image_png=image, altitude_m=altitude,
                           camera_pitch=echoed_pitch)

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
