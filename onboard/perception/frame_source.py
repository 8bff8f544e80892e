"""Frames from a video source with the time each was captured: the one path from a camera to perception.

A gimbal camera sends a continuous stream (RTSP/H.264 from a SIYI, MJPEG over
HTTP from the simulator, a CSI sensor through a GStreamer pipeline on a
Jetson). Perception does not want "a frame": it wants the first frame taken
*after* the gimbal or the vehicle settled, and the moment it was taken, so the
frame can be paired with the pose the vehicle had then (`pose_history`). A
reader thread therefore drains the capture continuously (a stream that is not
read backs up and every frame grows stale), keeps only the newest frame, and
stamps it on the caller's monotonic clock: capture time = receive time minus
the configured latency (glass to socket: encoder, link, decoder), which no
stream here reports itself.

Nothing that asks for a frame ever waits longer than it said: `next_after`
takes a timeout and answers None. A source that stops delivering is reopened
by the reader thread with a back-off; whether it is lost is the consumer's
call (it knows how long it waited), see `look_around`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# How long opening a network source and reading one frame from it may block inside FFMPEG (ms): a
# source that hangs is then closed and reopened instead of holding the reader thread for good.
OPEN_TIMEOUT_MS = 5000
READ_TIMEOUT_MS = 3000


class FrameSourceError(RuntimeError):
    """The video source cannot be opened (a wrong device, URL or pipeline)."""


class Capture(Protocol):
    """What the reader needs of a `cv2.VideoCapture`."""

    def read(self) -> tuple[bool, np.ndarray | None]: ...

    def release(self) -> None: ...


def open_capture(source: str) -> Any:
    """An opened `cv2.VideoCapture` for `source`; a device index ("0"), a file or URL, or a GStreamer
    pipeline (contains "!"). Raises `FrameSourceError` naming the source when it does not open."""
    import cv2

    if not source.strip():
        raise FrameSourceError("no video source given (empty)")
    if source.isdigit():
        cap = cv2.VideoCapture(int(source))
    elif "!" in source:
        cap = cv2.VideoCapture(source, cv2.CAP_GSTREAMER)
    elif "://" in source:
        cap = cv2.VideoCapture(source, cv2.CAP_FFMPEG, [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, OPEN_TIMEOUT_MS,
                                                        cv2.CAP_PROP_READ_TIMEOUT_MSEC, READ_TIMEOUT_MS])
    else:
        cap = cv2.VideoCapture(source)
    if not cap.isOpened():
        cap.release()
        raise FrameSourceError(f"video source {source!r} cannot be opened")
    return cap


@dataclass(frozen=True)
class Frame:
    """One decoded frame (BGR, as OpenCV delivers) and when it was taken, on the frame source's clock."""

    image: np.ndarray
    seq: int  # 1, 2, ... in the order received (over reopenings too)
    received_t: float
    capture_t: float  # received_t - the configured latency


class FrameSource:
    """The newest frame of one video source, read on a thread; `next_after(t, timeout_s)` for consumers.

    `opener` makes a capture (default `open_capture(source)`); `clock` stamps frames (default
    `time.monotonic`, the supervisor's clock, so frames pair with telemetry stamped on it).
    """

    def __init__(self, source: str, *, latency_s: float = 0.0, clock: Callable[[], float] = time.monotonic,
                 opener: Callable[[str], Capture] = open_capture, reopen_s: float = 0.5,
                 reopen_max_s: float = 5.0) -> None:
        if not latency_s >= 0.0:
            raise ValueError(f"camera latency must be a non-negative number of seconds, not {latency_s!r}")
        self.source, self.latency_s, self.clock = source, float(latency_s), clock
        self._opener, self._reopen_s, self._reopen_max_s = opener, reopen_s, reopen_max_s
        self._cond = threading.Condition()
        self._latest: Frame | None = None
        self._seq = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.opens = 0  # successful opens (a reopened stream counts again)
        self.failures: list[str] = []  # why each open or read failed, newest last (bounded)

    def start(self) -> "FrameSource":
        self._thread = threading.Thread(target=self._run, name=f"frame-source {self.source}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=READ_TIMEOUT_MS / 1000 + 2.0)

    def __enter__(self) -> "FrameSource":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- consumers ---------------------------------------------------------------
    def latest(self) -> Frame | None:
        with self._cond:
            return self._latest

    def next_after(self, t: float, timeout_s: float) -> Frame | None:
        """The first frame captured at or after `t` (clock seconds), waiting at most `timeout_s`; None if none came.

        The newest frame is returned, not the first one after `t`: frames are not queued, so a consumer
        that comes late gets the freshest view, which is what a look-around wants.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            while not self._stop.is_set():
                f = self._latest
                if f is not None and f.capture_t >= t:
                    return f
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
        return None

    # -- the reader thread -------------------------------------------------------
    def _failed(self, why: str) -> None:
        self.failures = (self.failures + [why])[-20:]

    def _run(self) -> None:
        backoff = self._reopen_s
        while not self._stop.is_set():
            try:
                cap = self._opener(self.source)
            except Exception as exc:  # noqa: BLE001 - a source that does not open is retried, never fatal
                self._failed(f"open: {exc}")
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self._reopen_max_s)
                continue
            self.opens += 1
            try:
                while not self._stop.is_set():
                    ok, img = cap.read()
                    if not ok or img is None:
                        self._failed("read: no frame (the stream ended or stalled)")
                        break
                    backoff = self._reopen_s  # it delivered: the next failure starts the back-off over
                    self._deliver(img)
            except Exception as exc:  # noqa: BLE001
                self._failed(f"read: {exc}")
            finally:
                cap.release()
            self._stop.wait(backoff)
            backoff = min(backoff * 2, self._reopen_max_s)

    def _deliver(self, img: np.ndarray) -> None:
        now = self.clock()
        with self._cond:
            self._seq += 1
            self._latest = Frame(img, self._seq, now, now - self.latency_s)
            self._cond.notify_all()
