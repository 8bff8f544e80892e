"""Where the vehicle and its gimbal were at a past moment: telemetry kept for a few seconds and interpolated.

A frame arrives a few hundred milliseconds after it was taken (`frame_source`);
by then a turning vehicle has swung tens of degrees and a moving one has gone
metres. Placing what the frame shows from the pose *now* puts a sign where the
camera is pointing now, not where it was; placing it from the pose at capture
puts it where it is. So telemetry is kept with its timestamps (the supervisor's
monotonic clock, the clock frames are stamped on) and interpolated at the
frame's capture time: linearly for position, along the shorter arc for angles
(a heading from 359 to 1 degree passes north, not south).

Gimbal angles are optional (NaN when no gimbal reports): the camera's
heading is then the vehicle's and its pitch the mounting pitch. A stabilised
gimbal holds its own pitch and roll, so the vehicle's are not added to it.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

# Telemetry kept (s): longer than any camera's latency plus a frame wait.
DEFAULT_SPAN_S = 10.0
# A frame captured this long after the newest sample still takes that sample (telemetry arrives at
# 10-50 Hz, so a fresh frame is often newer than it); later than this there is no pose for it.
DEFAULT_HOLD_S = 0.5


def lerp_angle(a: float, b: float, w: float) -> float:
    """The angle `w` of the way from `a` to `b` (degrees) along the shorter arc, in [0, 360)."""
    d = (b - a + 180.0) % 360.0 - 180.0
    return (a + w * d) % 360.0


@dataclass(frozen=True)
class PoseSample:
    """The vehicle (metres north/east of home, up above it; attitude in degrees) and its gimbal at `t`."""

    t: float
    north: float
    east: float
    up: float
    yaw_deg: float
    pitch_deg: float = 0.0
    roll_deg: float = 0.0
    gimbal_pitch_deg: float = math.nan  # NaN: no gimbal reports
    gimbal_yaw_deg: float = math.nan  # the gimbal's heading from north (the bridge's `gimbal_yaw_deg`)

    @property
    def has_gimbal(self) -> bool:
        return math.isfinite(self.gimbal_pitch_deg)

    def camera_heading_deg(self) -> float:
        """The optical axis' heading: the gimbal's where it reports one, else the vehicle's."""
        return (self.gimbal_yaw_deg if math.isfinite(self.gimbal_yaw_deg) else self.yaw_deg) % 360.0

    def camera_pitch_deg(self, mount_pitch_deg: float) -> float:
        """The optical axis' pitch: the gimbal's when it reports one, else the camera's mounting pitch."""
        return self.gimbal_pitch_deg if self.has_gimbal else mount_pitch_deg


def _mix(a: float, b: float, w: float, angle: bool = False) -> float:
    """Interpolated value; where one side is unknown (NaN), the nearer side's value."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a if w < 0.5 else b
    return lerp_angle(a, b, w) if angle else a + w * (b - a)


def interpolate(p: PoseSample, q: PoseSample, t: float) -> PoseSample:
    """The pose at `t` between samples `p` and `q` (p.t <= t <= q.t)."""
    w = 0.0 if q.t <= p.t else min(1.0, max(0.0, (t - p.t) / (q.t - p.t)))
    return PoseSample(t, _mix(p.north, q.north, w), _mix(p.east, q.east, w), _mix(p.up, q.up, w),
                      _mix(p.yaw_deg, q.yaw_deg, w, angle=True), _mix(p.pitch_deg, q.pitch_deg, w),
                      _mix(p.roll_deg, q.roll_deg, w), _mix(p.gimbal_pitch_deg, q.gimbal_pitch_deg, w),
                      _mix(p.gimbal_yaw_deg, q.gimbal_yaw_deg, w, angle=True))


class PoseHistory:
    """Pose samples in time order over the last `span_s` seconds; `at(t)` interpolates between them.

    Written by one task (the telemetry feeder) and read by the look-around on the same event loop, or
    from a thread: appends and reads take no lock since each swaps whole lists (the GIL keeps them whole).
    """

    def __init__(self, span_s: float = DEFAULT_SPAN_S, hold_s: float = DEFAULT_HOLD_S) -> None:
        self.span_s, self.hold_s = span_s, hold_s
        self._t: list[float] = []
        self._p: list[PoseSample] = []

    def __len__(self) -> int:
        return len(self._p)

    def add(self, sample: PoseSample) -> bool:
        """Keep `sample`; one older than the newest kept or with a position or heading unknown is refused (False)."""
        if not all(math.isfinite(x) for x in (sample.t, sample.north, sample.east, sample.up, sample.yaw_deg)):
            return False
        if self._t and sample.t < self._t[-1]:
            return False
        ts, ps = self._t, self._p
        if ts and sample.t == ts[-1]:
            ts, ps = ts[:-1], ps[:-1]
        start = bisect.bisect_left(ts, sample.t - self.span_s)
        self._t, self._p = ts[start:] + [sample.t], ps[start:] + [sample]
        return True

    def newest(self) -> PoseSample | None:
        return self._p[-1] if self._p else None

    def at(self, t: float) -> PoseSample | None:
        """The pose at `t`; None before the oldest sample kept or more than `hold_s` after the newest."""
        ts, ps = self._t, self._p
        if not ts or not math.isfinite(t) or t < ts[0] or t > ts[-1] + self.hold_s:
            return None
        k = bisect.bisect_right(ts, t)
        if k >= len(ts):
            last = ps[-1]
            return PoseSample(t, last.north, last.east, last.up, last.yaw_deg, last.pitch_deg, last.roll_deg,
                              last.gimbal_pitch_deg, last.gimbal_yaw_deg)
        return interpolate(ps[k - 1], ps[k], t)

