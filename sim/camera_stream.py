"""The simulated vehicle's camera as a video stream, of the kind a gimbal camera sends: MJPEG over HTTP.

The supervisor's camera perception must read the simulator through the same
code a real camera goes through (`onboard/perception/frame_source.py`, an
OpenCV capture), so the simulator serves its camera as a stream rather than
answering frame requests. Each frame is rendered by the world feed's renderer
(`sim/world/render.py`) from the vehicle's *truth* (the sim vehicle's JSON/UDP
control channel: position, heading, and the gimbal's ``gimbal_pitch_deg`` /
``gimbal_yaw_deg`` (from north) where it has one, else the vehicle's heading and the
camera's mounting pitch),
never from what the autopilot reports: the stream shows where the vehicle is.

MJPEG over HTTP (``multipart/x-mixed-replace``), because OpenCV's FFMPEG
backend here opens it at once and delivers each frame as it arrives (no
probing delay, no decoder queue), it needs no encoder beyond JPEG, and every
frame stands alone, so a reader that joins late or drops one loses nothing
else. H.264 over RTSP, what a SIYI sends, goes through the same capture.

Rendering costs 20-400 ms a frame on this machine, so frames are rendered on
demand: only while a client is connected, at most `fps` a second, and a view
that has not moved is sent again without drawing it. A frame leaves the server
`latency_s` after the truth it shows was read (or later, when rendering took
longer), while the next is rendered: the simulated camera's glass-to-socket latency, which
the supervisor's ``camera_latency_s`` should match. What was sent, with its
truth, is kept (`sent`) so a test can check a frame against the pose it shows.

The simulated camera's calibration (no distortion) is written with
`write_calibration`, as an OpenCV FileStorage file the supervisor reads
(``supervisor.camera_calibration``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from common.geodesy import ned_from_geo

log = logging.getLogger("aerie.sim.camera_stream")

BOUNDARY = "aerieframe"
PATH = "/stream.mjpg"
JPEG_QUALITY = 92  # the renderer already imitates the camera's own compression; this keeps the stream near it


@dataclass(frozen=True)
class SentFrame:
    """One frame as it left the server: its number, the truth it shows, and when (server clock)."""

    seq: int
    truth_t: float  # time.monotonic() when the truth was read
    sent_t: float
    east: float
    north: float
    up: float
    heading_deg: float
    pitch_deg: float
    # The renderer's truth of the frame, (name, visible share, lettering px) per sign in it: the judge's
    # only (a benchmark saying whether a goal's sign was ever in a frame); no reader sees it.
    signs: tuple[tuple[str, float, float], ...] = ()


def camera_pose(truth: dict[str, Any], origin: Any, mount_pitch_deg: float) -> tuple[np.ndarray, float, float]:
    """(eye east/north/up in the world's metres, heading, pitch) of the camera for one truth record."""
    north, east = ned_from_geo(origin, float(truth["lat"]), float(truth["lon"]))
    up = max(1.0, float(truth["rel_alt"]))
    gyaw = truth.get("gimbal_yaw_deg")  # from north, as the sim vehicle's gimbal reports it
    gpitch = truth.get("gimbal_pitch_deg")
    heading = float(gyaw if gyaw is not None else truth["yaw_deg"]) % 360.0
    pitch = float(gpitch) if gpitch is not None else mount_pitch_deg
    return np.array([east, north, up]), heading, pitch


def truth_over_udp(control_port: int, host: str = "127.0.0.1", timeout_s: float = 1.0) -> Callable[[], dict]:
    """A reader of the sim vehicle's truth on its own UDP socket (`contract.sim_control`), for the stream's thread."""
    from contract.sim_control import MAX_REPLY_BYTES, SimControl
    from contract.sim_control import replies as control_replies
    from contract.sim_control import requests as control_requests

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((host, 0))
    sock.settimeout(timeout_s)
    body = control_requests().pack(SimControl.of("truth"))

    def read() -> dict:
        sock.sendto(body, (host, control_port))
        data, _ = sock.recvfrom(MAX_REPLY_BYTES)
        reply = control_replies().unpack(data)
        if not reply.ok:
            raise RuntimeError(reply.error or "truth refused")
        return reply.result["truth"]

    return read


def write_calibration(path: str | Path, width: int, height: int, hfov_deg: float) -> Path:
    """The simulated camera's calibration file: a pinhole of this field of view, no distortion."""
    from onboard.perception.camera_model import CameraIntrinsics

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    CameraIntrinsics.from_hfov(width, height, hfov_deg).write_calibration(str(path))
    return path


class CameraStream:
    """Renders the world from the vehicle's truth and serves it at ``url`` while anyone watches."""

    def __init__(self, world: Any, truth: Callable[[], dict], *, camera: Any = None, fps: float = 4.0,
                 latency_s: float = 0.3, host: str = "127.0.0.1", port: int = 0) -> None:
        from sim.world.render import Camera

        if not 0.1 <= fps <= 30.0:
            raise ValueError(f"camera stream fps must be within 0.1..30, not {fps}")
        if not 0.0 <= latency_s <= 5.0:
            raise ValueError(f"camera stream latency must be within 0..5 s, not {latency_s}")
        self.world, self.truth, self.fps, self.latency_s = world, truth, fps, latency_s
        self.camera = camera or Camera()
        self._bind = (host, port)
        self._cond = threading.Condition()
        self._jpeg: bytes | None = None
        self._seq = 0
        self._clients = 0
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self.sent: deque[SentFrame] = deque(maxlen=200)
        self.render_ms: deque[float] = deque(maxlen=1000)  # render and JPEG per frame drawn (what the stream costs)
        self.truth_failures = 0
        self.connections = 0  # readers that connected, over the stream's life (a vehicle keeps one)
        self.url = ""
        self._last: tuple[tuple, bytes] | None = None  # (pose key, JPEG) of the newest frame rendered
        self._signs: tuple[tuple[str, float, float], ...] = ()  # its truth, for `sent`
        self._pending: deque[tuple] = deque()  # rendered, waiting out the latency: (truth time, JPEG, pose, signs)

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> "CameraStream":
        from sim.world.render import ViewRenderer

        self._renderer = ViewRenderer(self.world, self.camera)
        stream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                if self.path.split("?")[0] != PATH:
                    self.send_error(404, f"the stream is at {PATH}")
                    return
                stream._serve(self)

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug("camera stream: " + fmt, *args)

        self._server = ThreadingHTTPServer(self._bind, Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}{PATH}"
        for target, name in ((self._server.serve_forever, "camera-stream-http"), (self._render_loop, "camera-stream-render"),
                             (self._publish_loop, "camera-stream-publish")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def close(self) -> None:
        """Stop serving: connected readers see their stream end, new ones are refused (the camera unplugged)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for t in self._threads:
            t.join(timeout=5.0)

    def __enter__(self) -> "CameraStream":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- rendering ---------------------------------------------------------------
    def render(self, truth: dict[str, Any]) -> tuple[bytes, np.ndarray, float, float]:
        """One JPEG frame for a truth record, and the eye, heading and pitch it was rendered from.

        A camera that has not moved since the last frame sends that frame again (the renderer is
        deterministic, so it would draw the same): a hovering simulated vehicle costs nothing per frame.
        """
        import cv2

        from sim.world.sign_view import in_brief

        eye, heading, pitch = camera_pose(truth, self.world.origin, self.camera.pitch_deg)
        key = (*np.round(eye, 3), round(heading, 3), round(pitch, 3))
        if self._last is not None and self._last[0] == key:
            return self._last[1], eye, heading, pitch
        t0 = time.monotonic()
        img, truths = self._renderer.render_at(eye, heading, pitch)
        ok, jpeg = cv2.imencode(".jpg", np.ascontiguousarray(img), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        self._signs = in_brief(truths)
        self._last = (key, jpeg.tobytes())
        self.render_ms.append((time.monotonic() - t0) * 1000.0)
        return self._last[1], eye, heading, pitch

    def _render_loop(self) -> None:
        """Render at `fps`; each frame is handed to the publisher to leave `latency_s` after its truth was read.

        Rendering and the latency overlap, as in a camera's pipeline: the latency delays frames, it does
        not slow them down.
        """
        period = 1.0 / self.fps
        while not self._stop.is_set():
            with self._cond:
                if self._clients == 0:  # nobody watching: nothing rendered
                    self._cond.wait(0.2)
                    continue
            t0 = time.monotonic()
            try:
                truth = self.truth()
                jpeg, eye, heading, pitch = self.render(truth)
            except Exception as exc:  # noqa: BLE001 - a vehicle that does not answer: no frame this period
                self.truth_failures += 1
                log.debug("camera stream: no frame (%s)", exc)
                self._stop.wait(period)
                continue
            with self._cond:
                self._pending.append((t0, jpeg, (float(eye[0]), float(eye[1]), float(eye[2]), heading, pitch),
                                      self._signs))
                self._cond.notify_all()
            self._stop.wait(max(0.0, t0 + period - time.monotonic()))

    def _publish_loop(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending) or self._stop.is_set(), timeout=0.5)
                if not self._pending:
                    continue
                due = self._pending[0][0] + self.latency_s
            self._stop.wait(max(0.0, due - time.monotonic()))  # the camera's latency
            with self._cond:
                t0, jpeg, pose, signs = self._pending.popleft()
                self._seq += 1
                self._jpeg = jpeg
                self.sent.append(SentFrame(self._seq, t0, time.monotonic(), *pose, signs))
                self._cond.notify_all()

    # -- serving -----------------------------------------------------------------
    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        with self._cond:
            self._clients += 1
            self.connections += 1
            self._cond.notify_all()
            seen = self._seq
        try:
            while not self._stop.is_set():
                with self._cond:
                    self._cond.wait_for(lambda: self._seq != seen or self._stop.is_set(), timeout=1.0)
                    if self._stop.is_set():
                        return
                    if self._seq == seen:
                        continue
                    seen, jpeg = self._seq, self._jpeg
                handler.wfile.write(f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
                                    .encode() + jpeg + b"\r\n")
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the reader went away
        finally:
            with self._cond:
                self._clients -= 1

