"""Camera frames for the detector: an OpenCV capture (device, file, RTSP, GStreamer) or the simulator's views.

On a Jetson the camera is a CSI or USB device read through GStreamer
(``nvarguscamerasrc ! ... ! appsink``), on a bench a video file or an RTSP
stream; OpenCV's VideoCapture opens all of them, so one class serves. A
source that cannot be opened or stops delivering raises `CameraError`; the
supervisor's restarting worker then reopens it with back-off. In simulation
the frames come with each observation (the observation server renders them),
decoded by `decode_png`.
"""

from __future__ import annotations

import numpy as np


class CameraError(RuntimeError):
    """The camera cannot be opened or delivered no frame."""


def decode_png(data: bytes) -> np.ndarray:
    import cv2

    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise CameraError("camera frame is not a decodable image")
    return img


class OpenCVCamera:
    """`source`: a device index ("0"), a file, an rtsp:// URL, or a GStreamer pipeline (contains "!")."""

    def __init__(self, source: str) -> None:
        from onboard.perception.frame_source import FrameSourceError, open_capture

        self.source = source
        try:
            self._cap = open_capture(source)
        except FrameSourceError as exc:
            raise CameraError(str(exc)) from None

    def read(self) -> np.ndarray:
        ok, frame = self._cap.read()
        if not ok or frame is None:
            raise CameraError(f"camera {self.source!r} delivered no frame")
        return frame

    def close(self) -> None:
        self._cap.release()
