"""What one flight came to: the mission's record (the runner's) and the flight's own figures around it."""

from __future__ import annotations

import resource
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onboard.mission.record import MissionRecord


@dataclass
class FlightOutcome(MissionRecord):
    """`episode_summary.json` holds the same plus the agent's summary; the mission's fields are the runner's."""

    flight_id: str = ""
    mission: str = ""
    results_dir: str = ""
    agent_success: bool = False  # the agent's own belief at arrival, not a judgement
    seconds: float = 0.0         # wall time from the start of the mission to the vehicle down
    landed: str = "on ground"    # what the vehicle did at the end, in words
    landing_failed: bool = False  # the land (or return) command could not be given or did not complete
    map_ms: list[float] = field(default_factory=list)  # drawing, encoding and writing the agent's maps, per step
    paused_s: float = 0.0
    peak_rss_mb: float = 0.0
    telemetry_last_seq: int = -1
    lessons_imported: int = 0    # bundles imported while waiting after landing (supervisor.lessons_wait_s)
    perception: str = "oracle"   # where the agent's sightings came from (supervisor.perception)
    look_around_s: list[float] = field(default_factory=list)  # camera perception: seconds per look-around
    read_ms: list[float] = field(default_factory=list)  # camera perception: reader time per view read
    bad_frames: int = 0          # camera frames that did not decode or had the wrong size
    camera_losses: int = 0       # times the camera (supervisor.camera) stopped delivering, since the supervisor opened it
    setpoint_period_ms: dict = field(default_factory=dict)  # the streamer's tick periods this flight: p50/p99/max
    fleet: dict = field(default_factory=dict)  # fleet channel counters at the end of the flight (fleet.enabled)

    def to_json(self) -> dict[str, Any]:
        d = super().to_json()
        for key in ("flown_m", "climb_m", "low_m", "flight_s"):
            d[key] = round(d[key], 1)
        d["map_ms_p50"] = round(statistics.median(self.map_ms), 2) if self.map_ms else None
        d["look_around_s_p50"] = round(statistics.median(self.look_around_s), 2) if self.look_around_s else None
        d["read_ms_per_view_p50"] = round(statistics.median(self.read_ms), 1) if self.read_ms else None
        return d


def peak_rss_mb() -> float:
    """Peak resident set of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def results_folder(results_dir: Path, name: str) -> Path:
    """``results_dir / name``, refusing a name that is not one path component directly under ``results_dir``."""
    root = results_dir.resolve()
    folder = (root / name).resolve()
    if "/" in name or "\\" in name or name in (".", "..") or folder.parent != root:
        raise ValueError(f"results folder {name!r} would lie outside {root}")
    return folder
