"""The world feed's frames, decoded: what the detector and the VLM see when no camera is configured.

A configured camera (``supervisor.camera``: a device, a file, an RTSP or UDP stream, a GStreamer
pipeline) is read through the vehicle's one frame source (`camera_frames.shared_frames`); in
simulation without one, the frames come with each observation as PNG (the observation server
renders them) and are decoded here.
"""

from __future__ import annotations

import numpy as np


class CameraError(RuntimeError):
    """A frame that does not decode."""


def decode_png(data: bytes) -> np.ndarray:
    import cv2

    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise CameraError("camera frame is not a decodable image")
    return img
