"""The benchmark's camera as a vehicle has it: the simulator's video stream, read by the capture that flies.

`aerie bench nav --perception camera` hands the reader no rendered image. The
kinematic vehicle's camera pose is the truth a `sim.camera_stream.CameraStream`
renders and serves as MJPEG over HTTP; `onboard.perception.frame_source.FrameSource`
reads the stream as the vehicle reads its camera; and each view is the first frame
captured after the camera was pointed and settled, placed from the pose history at
its capture time by `onboard.supervisor.camera_frames.StreamFrames`, the code
`aerie fly` runs with ``supervisor.camera`` set. The world feed serves perception
nothing.

The kinematic vehicle turns and moves in no time, so its pose history (its
telemetry) holds the old pose up to the instant of pointing and the new one
from then on, refreshed while a frame is awaited as telemetry would be. A
frame captured less than `SETTLE_S` after pointing is not taken (a gimbal
settles): with the stream's latency as configured, the first frame taken shows
the new pose. Whether it did is checked by the judge, not assumed: the
stream keeps the truth of every frame it sent (`SentFrame`), and a view whose
frame showed another pose than the one it was placed from counts in
`mispaired`. That truth also says which signs were in each frame (the judge's
only: no reader sees it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

from common.geodesy import geo_from_ned
from onboard.perception.frame_source import FrameSource
from onboard.perception.pose_history import PoseHistory, PoseSample
from onboard.supervisor.camera_frames import Shot, StreamFrames
from sim.camera_stream import CameraStream, SentFrame

# A gimbal's settling after a slew (s): frames captured sooner are not taken.
SETTLE_S = 0.1
# The simulated camera's glass-to-socket latency (s) and the supervisor's setting for it: a SIYI A8
# mini's H.264 stream is about 150-200 ms behind; the stream's MJPEG is served with this much.
LATENCY_S = 0.1
# Frames a second the simulated camera sends (an unchanged view is sent again, not redrawn).
FPS = 12.0
TELEMETRY_S = 0.1  # how often the pose history is refreshed while a frame is awaited (PX4 sends at 10-50 Hz)
# A frame's truth matches the pose it was placed from within these (m, degrees).
MATCH_M, MATCH_DEG = 0.05, 0.05


@dataclass(frozen=True)
class StreamedView:
    """A view taken from the stream: the shot (frame and pose at capture) and the judge's truth of its frame."""

    shot: Shot
    signs: tuple[tuple[str, float, float], ...]  # (name, visible share, lettering px) per sign in the frame
    paired: bool | None  # the frame showed the pose it is placed from (None: no frame, or its truth is gone)


class StreamedCamera:
    """The kinematic vehicle's camera: points where asked, serves frames as a stream, takes them back from it."""

    def __init__(self, world: Any, sup: Any, *, latency_s: float = LATENCY_S, fps: float = FPS,
                 settle_s: float = SETTLE_S) -> None:
        from sim.world.render import Camera

        self.world, self.settle_s = world, settle_s
        self.sup = dataclasses.replace(sup, camera_latency_s=latency_s)
        self._lock = threading.Lock()
        self._truth: dict[str, float] | None = None
        self.stream = CameraStream(world, self._read_truth, camera=Camera.from_config(sup), fps=fps,
                                   latency_s=latency_s).start()
        self.sup = dataclasses.replace(self.sup, camera=self.stream.url)
        self.history = PoseHistory()
        self.events: list[tuple[str, Any]] = []
        self.frames = StreamFrames(FrameSource(self.stream.url, latency_s=latency_s).start(), self.history, self.sup,
                                   lambda kind, detail: self.events.append((kind, detail)))
        self.taken = self.mispaired = self.unjudged = self.no_frame = 0

    def close(self) -> None:
        self.frames.close()
        self.stream.close()

    def _read_truth(self) -> dict[str, float]:
        with self._lock:
            if self._truth is None:
                raise RuntimeError("the camera has not been pointed yet")
            return dict(self._truth)

    def _pose(self, t: float, east: float, north: float, up: float, heading: float, pitch: float) -> PoseSample:
        return PoseSample(t, north, east, up, heading, 0.0, 0.0, pitch, heading)

    async def view(self, east: float, north: float, up: float, heading: float, pitch: float) -> StreamedView:
        """Point the camera from (east, north, up) metres of the world's origin along `heading` at `pitch`, and
        take the first frame captured once it settled."""
        clock = self.frames.clock
        t = clock()
        old = self.history.newest()
        if old is not None:  # the old pose held up to now: the vehicle jumps, it does not glide
            self.history.add(dataclasses.replace(old, t=max(old.t, t - 1e-4)))
        pose = self._pose(t, east, north, up, heading, pitch)
        self.history.add(pose)
        lat, lon = geo_from_ned(self.world.origin, north, east)
        with self._lock:
            self._truth = {"lat": float(lat), "lon": float(lon), "rel_alt": float(up), "yaw_deg": float(heading),
                           "gimbal_yaw_deg": float(heading), "gimbal_pitch_deg": float(pitch)}

        async def telemetry() -> None:
            while True:
                await asyncio.sleep(TELEMETRY_S)
                self.history.add(dataclasses.replace(pose, t=clock()))

        feeder = asyncio.get_running_loop().create_task(telemetry())
        try:
            shot = await self.frames.shot(t + self.settle_s, first=True)
        finally:
            feeder.cancel()
        self.taken += 1
        if shot.rgb is None:
            self.no_frame += 1
            return StreamedView(shot, (), None)
        sent = self._sent_for(shot)
        if sent is None:
            self.unjudged += 1
            return StreamedView(shot, (), None)
        paired = _same_pose(sent, shot.pose, shot.pitch_deg)
        self.mispaired += not paired
        return StreamedView(shot, sent.signs, paired)

    def _sent_for(self, shot: Shot) -> SentFrame | None:
        """The sent frame `shot` received: the newest sent before it arrived (receipt = capture + latency)."""
        received = shot.capture_t + self.sup.camera_latency_s
        before = [f for f in list(self.stream.sent) if f.sent_t <= received + 1e-3]
        return before[-1] if before else None

    def figures(self) -> dict:
        """The stream's side of the run: frames taken, how many showed another pose, what rendering cost."""
        ms = sorted(self.stream.render_ms)
        return {"frames": "simulator stream (MJPEG over HTTP, FrameSource)", "stream_url": self.stream.url,
                "latency_s": self.sup.camera_latency_s, "settle_s": self.settle_s, "views_taken": self.taken,
                "mispaired": self.mispaired, "unjudged": self.unjudged, "no_frame": self.no_frame,
                "camera_lost": sum(k == "camera_lost" for k, _ in self.events),
                "stream_render_ms_p50": round(ms[len(ms) // 2], 1) if ms else None}


def _same_pose(sent: SentFrame, pose: PoseSample | None, pitch: float) -> bool:
    from onboard.map.compass import angle_diff

    if pose is None:
        return False
    return (abs(sent.east - pose.east) <= MATCH_M and abs(sent.north - pose.north) <= MATCH_M
            and abs(sent.up - pose.up) <= MATCH_M and angle_diff(sent.heading_deg, pose.camera_heading_deg()) <= MATCH_DEG
            and abs(sent.pitch_deg - pitch) <= MATCH_DEG)
