"""The supervisor's side of the simulated world's sensor feed (`sim/world/observation_server.py`).

A REQ socket in the lazy-pirate pattern: a request that gets no answer within
the timeout closes the socket and is retried once on a fresh one, and then
fails with `WorldLinkError` naming the endpoint, so a dead simulator shows up
as a clear error, never as a hang. Requests and replies are the typed messages
of :mod:`contract.world_feed`, each checked field by field on decode; a
malformed reply is an error too, not a crash further down.

An observe request may name the camera's altitude (a look-up over the roofs):
the server then answers with the landmarks in sight from that height and no
readable names, and echoes the altitude; a reply that does not echo it comes
from a server that cannot look from above, and is an error, never sightings
from cruise passed off as sightings from above.
"""

from __future__ import annotations

import zmq

from contract.bounded_socket import bounded_socket
from contract.payloads.base import Payload, PayloadError
from contract.world_feed import (MAX_REPLY_BYTES, REPLIES, REQUESTS, FeedError, GazetteerReply, GazetteerRequest,
                                 Observation, ObserveRequest)
from onboard.vocab.observation import LandmarkSighting, PoiSighting
from onboard.mission.observed import MoveOption, WorldObservation


class WorldLinkError(RuntimeError):
    """The observation server did not answer, or answered nonsense."""


def parse_observation(reply: Payload) -> WorldObservation:
    """The supervisor's view of a decoded reply; a refusal or a reply of another kind is a WorldLinkError."""
    if isinstance(reply, FeedError):
        raise WorldLinkError(f"observation server refused the request: {reply.error}")
    if not isinstance(reply, Observation):
        raise WorldLinkError(f"malformed observation reply: a {reply.MSG_TYPE!r} message")
    return WorldObservation(
        node=reply.node, lat=reply.lat, lon=reply.lon, snap_m=reply.snap_m,
        moves=tuple(MoveOption(m.node, m.bearing, m.length, m.lat, m.lon) for m in reply.moves),
        landmarks=tuple(LandmarkSighting(s.name, s.bearing, s.distance) for s in reply.landmarks),
        pois=tuple(PoiSighting(p.name, p.bearing, p.distance) for p in reply.pois),
        image_png=reply.image_png or None, altitude_m=reply.altitude_m)


class WorldLink:
    def __init__(self, endpoint: str, timeout_s: float = 5.0, *, context: zmq.Context | None = None) -> None:
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self._ctx = context or zmq.Context.instance()
        self._sock: zmq.Socket | None = None

    def _socket(self) -> zmq.Socket:
        if self._sock is None:
            self._sock = bounded_socket(self._ctx, zmq.REQ, MAX_REPLY_BYTES)
            self._sock.connect(self.endpoint)
        return self._sock

    def _ask(self, request: GazetteerRequest | ObserveRequest) -> Payload:
        body = REQUESTS.pack(request)
        for _attempt in range(2):
            sock = self._socket()
            sock.send(body)
            if sock.poll(int(self.timeout_s * 1000), zmq.POLLIN):
                try:
                    return REPLIES.unpack(sock.recv())
                except PayloadError as exc:
                    raise WorldLinkError(f"{self.endpoint}: malformed reply ({exc})") from exc
            sock.close(0)
            self._sock = None
        raise WorldLinkError(f"observation server {self.endpoint} did not answer within {self.timeout_s:.1f} s (twice)")

    def observe(self, lat: float, lon: float, heading: float, *, node: int | None = None,
                image: bool = False, altitude_m: float | None = None) -> WorldObservation:
        """What is perceived here; `altitude_m` (m above ground): from that height (a look-up), else at cruise."""
        request = ObserveRequest(float(lat), float(lon), float(heading), node, image,
                                 altitude=None if altitude_m is None else float(altitude_m))
        return self._observed(request, altitude_m)

    def frame(self, lat: float, lon: float, heading: float, camera_alt_m: float,
              pitch_deg: float | None = None) -> WorldObservation:
        """A camera frame only: rendered from exactly this position, heading and height, no sightings with it.

        What camera perception asks for (`supervisor.perception: camera`): the feed is then a camera and
        nothing else; the reply's landmarks and POIs are empty, its ``image_png`` the frame. `pitch_deg`:
        the gimbal's pitch for this frame (None: the camera's mounting pitch); a feed that does not
        echo it did not honour it, and is refused.
        """
        request = ObserveRequest(float(lat), float(lon), float(heading), None, True, sightings=False,
                                 camera_alt=float(camera_alt_m),
                                 camera_pitch=None if pitch_deg is None else float(pitch_deg))
        reply = self._ask(request)
        obs = parse_observation(reply)
        if obs.landmarks or obs.pois:
            raise WorldLinkError(f"observation server {self.endpoint} sent sightings with a frame-only request "
                                 "(a world feed without the sightings flag?)")
        echoed = reply.camera_pitch if isinstance(reply, Observation) else None
        if pitch_deg is not None and echoed != float(pitch_deg):
            raise WorldLinkError(f"observation server {self.endpoint} answered a frame at pitch {pitch_deg:g} with "
                                 f"{echoed!r} (a world feed without gimbal pitch?)")
        return obs

    def _observed(self, request: ObserveRequest, altitude_m: float | None) -> WorldObservation:
        obs = parse_observation(self._ask(request))
        if altitude_m is not None and (obs.altitude_m is None or not abs(obs.altitude_m - altitude_m) <= 1e-6):
            raise WorldLinkError(f"observation server {self.endpoint} answered a look-up from {altitude_m:.1f} m "
                                 f"with sightings from {'cruise' if obs.altitude_m is None else f'{obs.altitude_m} m'}"
                                 " (a world feed without look-ups?)")
        return obs

    def gazetteer(self) -> tuple[list[str], dict[str, str]]:
        """Names of the landmarks this vehicle can recognise (not where they are), and their other names
        (alias -> name; {} from a feed that sends none), from one request.

        Only alias pairs of strings whose name is one of the gazetteer's are kept: the reader turns an
        alias into that name, so a pair naming anything else would put an unknown landmark in a description.
        """
        reply = self._ask(GazetteerRequest())
        if not isinstance(reply, GazetteerReply):
            raise WorldLinkError(f"malformed gazetteer reply from {self.endpoint}: a {reply.MSG_TYPE!r} message")
        names = list(reply.names)
        known = set(names)
        return names, {a: n for a, n in reply.aliases.items() if a.strip() and n in known}

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(0)
            self._sock = None
