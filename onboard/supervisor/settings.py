"""Typed settings of the onboard supervisor (the ``supervisor:`` section of config.yaml)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from common.typed_config import ranged


@dataclass(frozen=True)
class WorldCameraConfig:
    # JPEG quality (1-100) the world's rendered views are compressed at, as a camera's encoder would;
    # 100 skips the JPEG round trip.
    jpeg_quality: int = ranged(85, 1, 100)
    # Sensor noise added to the world's views: standard deviation in 8-bit grey levels (0: none).
    noise_sigma: float = ranged(2.0, 0.0, 50.0)
    # Defocus blur of the world's views: Gaussian sigma in pixels (0: none).
    blur_sigma_px: float = ranged(0.6, 0.0, 10.0)
    # Draw each sign's box and name and a position line over the views (for people; the detector and
    # text reader must never get these frames).
    debug_labels: bool = False


@dataclass(frozen=True)
class CameraReadingConfig:
    # Views of a look-around at each waypoint (the vehicle turns through them in equal steps from the
    # heading it flew; 5 x 72 degrees covers the circle with the 81-degree camera).
    views: int = ranged(5, 1, 36)
    # Gimbal pitches (degrees, down negative) of the frames taken at each heading of the look-around;
    # empty: the camera's mounting pitch (supervisor.camera_pitch_deg) alone. A street-level sign within
    # ~25 m of a camera 25 m up is below a -15 degree frame: a second pitch of -45 sees it.
    pitches_deg: tuple[float, ...] = ()
    # Each turn of the look-around is done within this many degrees of its heading.
    turn_tolerance_deg: float = ranged(5.0, 0.5, 45.0)
    # Reads of one name this close together (m) are one sign.
    fusion_radius_m: float = ranged(50.0, 1.0, 500.0)
    # One exact read at least this sure is a sighting by itself.
    single_read_confidence: float = ranged(0.8, 0.0, 1.0)
    # Otherwise reads from at least this many views (here or at other waypoints) ...
    min_reads: int = ranged(2, 1, 20)
    # ... whose confidences, combined as independent evidence (1 - prod(1 - c)), reach this.
    fused_confidence: float = ranged(0.65, 0.0, 1.0)
    # Cap height (m) of a building's name (1-2 m in a city): its range without a map comes from it.
    building_letter_m: float = ranged(1.5, 0.1, 10.0)
    # Names read no farther than this (m) that are neither the goal nor a landmark reach the agent as
    # names seen close by (the oracle's POI range).
    poi_range_m: float = ranged(60.0, 1.0, 1000.0)
    # The lowest a look-low descends over a street waypoint to read the shop fronts (m above home): clear
    # of lamp posts, street trees and tram wires. Offered to the agent (agent.look_low_alt_m) only with
    # camera perception; never below the safety envelope's floor.
    low_floor_m: float = ranged(10.0, 1.0, 1000.0)
    # Gimbal pitches (degrees) of a look-low's frames; empty: those of the look-around at cruise. Down in
    # the street the nearest shop fronts are below a -15 degree frame, and the farther ones above a -30 degree
    # one, so both (chosen on the first ordinary dev tasks with camera and map: docs/BENCHMARKS.md).
    low_pitches_deg: tuple[float, ...] = (-15.0, -30.0)

    def __post_init__(self) -> None:
        for key in ("pitches_deg", "low_pitches_deg"):
            pitches = getattr(self, key)
            if len(pitches) > 4 or not all(-90.0 <= p <= 90.0 for p in pitches):  # NaN fails too
                raise ValueError(f"camera_reading.{key} must be at most 4 pitches within -90..90, not {pitches}")

    def pitches_at(self, low: bool) -> tuple[float, ...]:
        """The gimbal pitches of a look-around (a look-low's when `low`); empty: the mounting pitch alone."""
        return (self.low_pitches_deg or self.pitches_deg) if low else self.pitches_deg

    def fusion(self):
        from onboard.perception.camera_sightings import FusionSettings

        return FusionSettings(fusion_radius_m=self.fusion_radius_m, single_read_confidence=self.single_read_confidence,
                              min_reads=self.min_reads, fused_confidence=self.fused_confidence,
                              building_letter_m=self.building_letter_m, poi_range_m=self.poi_range_m)


@dataclass(frozen=True)
class SupervisorConfig:
    # ZeroMQ REQ endpoint of the observation server: waypoints on offer, landmarks and readable signs
    # (in simulation `sim/world/observation_server.py`; a real vehicle needs its own corridor map and
    # landmark recogniser behind the same interface, which Aerie does not ship yet).
    world_endpoint: str = "tcp://127.0.0.1:7720"
    # One observation request may take this long before it is retried on a fresh socket.
    world_timeout_s: float = ranged(5.0, 0.1, 600.0)
    # Camera frames for the detector: "" (none), "world" (views rendered by the observation
    # server), or an OpenCV source: a device index ("0"), a video file, an rtsp:// or http:// URL, or a
    # GStreamer pipeline (anything containing "!"). An OpenCV source is also what camera perception's
    # look-around reads (perception: camera); otherwise it asks the world feed for its frames.
    camera: str = ""
    # With perception: camera and an OpenCV source in `camera`, the look-around reads that camera (not the
    # world feed): seconds from a frame's exposure to its arrival here (encoder, link, decoder; a SIYI-style
    # RTSP stream is typically 0.2-0.4 s). Each frame is placed from the pose at arrival minus this.
    camera_latency_s: float = ranged(0.3, 0.0, 5.0)
    # OpenCV calibration file of that camera (FileStorage YAML: camera_matrix, distortion_coefficients,
    # image_width, image_height; it must match camera_width/height). "": a pinhole of camera_hfov_deg.
    camera_calibration: str = ""
    # A look-around view waits at most this long (s) for a frame captured after its turn settled; then the
    # view is empty and the camera is said lost (event camera_lost).
    camera_frame_timeout_s: float = ranged(5.0, 0.1, 120.0)
    # What a lost camera does to the mission: "continue" (fly on what was seen; views stay empty until
    # frames come back) or "return" (end the mission and return to launch).
    camera_lost: Literal["continue", "return"] = "continue"
    # Run the detector on a camera frame every this many agent steps (0 = never).
    detect_every_steps: int = ranged(1, 0, 10_000)
    # What the detector is asked to find.
    detect_prompts: tuple[str, ...] = ("person",)
    # Camera image size the detector's geometry assumes, pixels; frames of another size are resized
    # to it. The defaults are a SIYI A8 mini gimbal camera's full 1920x1080 video, the size the world's
    # feed renders its views at: text is found on a copy scaled to inference.text_det_max_side and each
    # line read from the full frame, so a shop sign 6 px tall at half resolution is read at 12 px.
    camera_width: int = ranged(1920, 16, 16384)
    camera_height: int = ranged(1080, 16, 16384)
    # Camera horizontal field of view, degrees (the SIYI A8 mini's is about 81).
    camera_hfov_deg: float = ranged(81.0, 1.0, 179.0)
    # Camera pitch, degrees (negative looks down): a fixed mount, or a gimbal held there. Detections
    # are placed on the ground along this pitch, so a wrong value puts them at the wrong range.
    camera_pitch_deg: float = ranged(-15.0, -90.0, 90.0)
    # Where the agent's sightings come from: "oracle" (the world feed's names, bearings and distances)
    # or "camera" (a look-around of frames at each waypoint, read by the text reader: see camera_reading).
    perception: Literal["oracle", "camera"] = "oracle"
    # How camera perception looks around and fuses what it reads (perception: camera).
    camera_reading: CameraReadingConfig = field(default_factory=CameraReadingConfig)
    # How the simulated world's camera ("world" frames, the benchmark's views) imitates a real one.
    world_camera: WorldCameraConfig = field(default_factory=WorldCameraConfig)
    # Flight altitude above home while flying the mission, metres.
    cruise_alt_m: float = ranged(30.0, 1.0, 10_000.0)
    # Horizontal speed of each move, m/s.
    speed_m_s: float = ranged(10.0, 0.1, 50.0)
    # A move has arrived when the vehicle is this close to its waypoint, metres.
    arrive_tolerance_m: float = ranged(3.0, 0.1, 1000.0)
    # A move that has not arrived after this long is given up (the agent sees where it is).
    move_timeout_s: float = ranged(90.0, 1.0, 3600.0)
    # Take-off and landing deadlines, seconds.
    takeoff_timeout_s: float = ranged(60.0, 5.0, 3600.0)
    land_timeout_s: float = ranged(180.0, 5.0, 3600.0)
    # What SIGTERM (or Ctrl-C) does while airborne: "land" where it is, or "rtl".
    on_terminate: Literal["land", "rtl"] = "land"
    # After SIGTERM the land/return command is sent at once (the agent's step is abandoned) and
    # the process waits at most this long for the vehicle to be down, then exits: PX4 finishes
    # the landing or return on its own. Keep it below systemd's TimeoutStopSec (deploy/aerie.service.in).
    terminate_timeout_s: float = ranged(20.0, 1.0, 600.0)
    # A supervisor that starts (or restarts) while the vehicle is armed and in the air takes it
    # down before anything else: "rtl" (return to launch) or "land" where it is.
    on_start_airborne: Literal["rtl", "land"] = "rtl"
    # Step budget when the mission does not give one.
    step_limit: int = ranged(60, 1, 100_000)
    # While the autopilot link is lost the agent is paused; after this long without it the
    # mission is abandoned (the autopilot's own link-loss failsafe flies the vehicle).
    link_wait_s: float = ranged(120.0, 0.0, 3600.0)
    # A crashed worker (detector) is rebuilt after this back-off, doubling up to the maximum ...
    restart_backoff_s: float = ranged(0.5, 0.01, 600.0)
    restart_backoff_max_s: float = ranged(10.0, 0.01, 3600.0)
    # ... at most this many times per flight; then the mission goes on without it.
    max_restarts: int = ranged(5, 0, 1000)
    # Serve `aerie status` on <data_dir>/supervisor.sock.
    status_socket: bool = True
    # Open the experience memory (plans retrieved for the mission's instruction).
    use_memory: bool = True
    # Accept lesson bundles from the ground station on telemetry.sync_endpoint.
    accept_lessons: bool = True
    # After landing, stay up this long for the ground station's lessons of this flight (served on
    # telemetry.sync_endpoint; replays keep flowing meanwhile); 0 ends the process at once. A fleet
    # member (fleet.enabled) stays all of it: the other members' lessons come too.
    lessons_wait_s: float = ranged(0.0, 0.0, 3600.0)
    # `aerie fly --standby` (the service): mission files dropped here are flown in name order;
    # relative paths are under data_dir.
    missions_dir: str = "missions"
    # How often the standby supervisor looks for a new mission file, seconds.
    mission_poll_s: float = ranged(1.0, 0.05, 60.0)
    # Per-flight results (trajectory.json, episode_summary.json, rgb_images/, semantic_images/) under data_dir.
    results_dir: str = "results"
    # Keep each step's camera frame in rgb_images/.
    save_images: bool = True
    # Keep each step's landmark map and semantic map (the agent's maps, PNG) in semantic_images/;
    # the semantic map is published as the `map` telemetry message either way (throttled by
    # telemetry.map_min_interval_s).
    save_maps: bool = True

    def __post_init__(self) -> None:
        if not (self.camera_width > 0 and self.camera_height > 0):
            raise ValueError("camera_width and camera_height must be positive")
        if not 0.0 < self.camera_hfov_deg < 180.0:
            raise ValueError("camera_hfov_deg must be within 0..180 (exclusive)")
        if not -90.0 <= self.camera_pitch_deg <= 90.0:
            raise ValueError("camera_pitch_deg must be within -90..90")
        if not all(0 < v < math.inf for v in (self.cruise_alt_m, self.speed_m_s, self.arrive_tolerance_m)):
            raise ValueError("cruise_alt_m, speed_m_s and arrive_tolerance_m must be positive finite numbers")
        if not self.restart_backoff_s <= self.restart_backoff_max_s:
            raise ValueError("restart_backoff_max_s must be at least restart_backoff_s")
