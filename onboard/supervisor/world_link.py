"""The supervisor's side of the simulated world's sensor feed (`sim/world/observation_server.py`).

A REQ socket in the lazy-pirate pattern: a request that gets no answer within
the timeout closes the socket and is retried once on a fresh one, and then
fails with `WorldLinkError` naming the endpoint, so a dead simulator shows up
as a clear error, never as a hang. Replies are validated field by field; a
malformed one is an error too, not a crash further down.

An observe request may name the camera's altitude (a look-up over the roofs):
the server then answers with the landmarks in sight from that height and no
readable names, and echoes the altitude; a reply that does not echo it comes
from a server that cannot look from above, and is an error, never sightings
from cruise passed off as sightings from above.
"""

from __future__ import annotations

import math
import msgpack
import zmq

from contract.bounded_socket import bounded_socket

from onboard.agent.observation import LandmarkSighting, PoiSighting
from onboard.mission.observed import MoveOption, WorldObservation


# Largest observation reply read (it may carry a rendered PNG); a bigger one drops the connection
# and the request times out (WorldLinkError) instead of growing the process.
MAX_REPLY_BYTES = 32 << 20


class WorldLinkError(RuntimeError):
    """The observation server did not answer, or answered nonsense."""


def parse_observation(reply: object) -> WorldObservation:
    if not isinstance(reply, dict):
        raise WorldLinkError(f"observation reply is {type(reply).__name__}, not a map")
    if not reply.get("ok", False):
        raise WorldLinkError(f"observation server refused the request: {reply.get('error', 'no reason given')}")
    altitude = reply.get("altitude_m")
    if altitude is not None and not (isinstance(altitude, (int, float)) and math.isfinite(altitude)):
        raise WorldLinkError(f"malformed observation reply: altitude_m {altitude!r} is not a finite number")
    try:
        return WorldObservation(
            node=int(reply["node"]), lat=float(reply["lat"]), lon=float(reply["lon"]),
            snap_m=float(reply.get("snap_m", 0.0)),
            moves=tuple(MoveOption(int(m["node"]), float(m["bearing"]), float(m["length"]), float(m["lat"]),
                                   float(m["lon"])) for m in reply["moves"]),
            landmarks=tuple(LandmarkSighting(str(s["name"]), float(s["bearing"]), float(s["distance"]))
                            for s in reply.get("landmarks", ())),
            pois=tuple(PoiSighting(str(p["name"]), float(p["bearing"]), float(p["distance"]))
                       for p in reply.get("pois", ())),
            image_png=bytes(reply["image_png"]) if reply.get("image_png") else None,
            altitude_m=None if altitude is None else float(altitude))
    except (KeyError, TypeError, ValueError) as exc:
        raise WorldLinkError(f"malformed observation reply: {type(exc).__name__}: {exc}") from exc


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

    def _ask(self, request: dict) -> object:
        body = msgpack.packb(request, use_bin_type=True)
        for _attempt in range(2):
            sock = self._socket()
            sock.send(body)
            if sock.poll(int(self.timeout_s * 1000), zmq.POLLIN):
                try:
                    return msgpack.unpackb(sock.recv(), raw=False)
                except (ValueError, msgpack.UnpackException) as exc:
                    raise WorldLinkError(f"{self.endpoint}: undecodable reply ({exc})") from exc
            sock.close(0)
            self._sock = None
        raise WorldLinkError(f"observation server {self.endpoint} did not answer within {self.timeout_s:.1f} s (twice)")

    def observe(self, lat: float, lon: float, heading: float, *, node: int | None = None,
                image: bool = False, altitude_m: float | None = None) -> WorldObservation:
        """What is perceived here; `altitude_m` (m above ground): from that height (a look-up), else at cruise."""
        request = {"op": "observe", "lat": lat, "lon": lon, "heading": heading, "node": node, "image": image}
        if altitude_m is not None:  # only then: a server older than the field sees the request it always did
            request["altitude"] = float(altitude_m)
        return self._observed(request, altitude_m)

    def frame(self, lat: float, lon: float, heading: float, camera_alt_m: float,
              pitch_deg: float | None = None) -> WorldObservation:
        """A camera frame only: rendered from exactly this position, heading and height, no sightings with it.

        What camera perception asks for (`supervisor.perception: camera`): the feed is then a camera and
        nothing else; the reply's landmarks and POIs are empty, its ``image_png`` the frame. `pitch_deg`:
        the gimbal's pitch for this frame (None: the camera's mounting pitch); a feed that does not
        echo it did not honour it, and is refused.
        """
        request = {"op": "observe", "lat": lat, "lon": lon, "heading": heading, "node": None, "image": True,
                   "sightings": False, "camera_alt": float(camera_alt_m)}
        if pitch_deg is not None:
            request["camera_pitch"] = float(pitch_deg)
        reply = self._ask(request)
        obs = parse_observation(reply)
        if obs.landmarks or obs.pois:
            raise WorldLinkError(f"observation server {self.endpoint} sent sightings with a frame-only request "
                                 "(a world feed without the sightings flag?)")
        if pitch_deg is not None and reply.get("camera_pitch") != float(pitch_deg):
            raise WorldLinkError(f"observation server {self.endpoint} answered a frame at pitch {pitch_deg:g} with "
                                 f"{reply.get('camera_pitch')!r} (a world feed without gimbal pitch?)")
        return obs

    def _observed(self, request: dict, altitude_m: float | None) -> WorldObservation:
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
        reply = self._ask({"op": "gazetteer"})
        if not isinstance(reply, dict) or not reply.get("ok") or not isinstance(reply.get("names"), list):
            raise WorldLinkError(f"malformed gazetteer reply from {self.endpoint}")
        raw = reply.get("aliases", {})
        if not isinstance(raw, dict):
            raise WorldLinkError(f"malformed gazetteer aliases from {self.endpoint}")
        names = [str(n) for n in reply["names"]]
        known = set(names)
        return names, {a: n for a, n in raw.items()
                       if isinstance(a, str) and isinstance(n, str) and a.strip() and n in known}

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(0)
            self._sock = None
