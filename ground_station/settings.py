"""Typed settings of the ground station, loaded from its own YAML file (`aerie ground --config FILE`).

Relative paths in the file are relative to the file's directory, so a
ground-station folder with its config, keys and flight log can be moved whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from common.typed_config import ConfigError, load_file, ranged


@dataclass(frozen=True)
class VehicleLinkConfig:
    # The vehicle's id; envelopes from this link that carry another id are rejected.
    vehicle_id: str = "aerie-1"
    # The vehicle's PUB endpoint (live telemetry).
    pub_endpoint: str = "tcp://127.0.0.1:7710"
    # The vehicle's ROUTER endpoint (status, replay, acks).
    replay_endpoint: str = "tcp://127.0.0.1:7711"
    # The vehicle's public key file (`vehicle.key` from `aerie keys generate`); pinned, so a
    # peer with another key is refused.
    server_public_key: str = "keys/vehicle.key"
    # The vehicle's REP endpoint for memory bundles (`aerie ground sync`).
    sync_endpoint: str = "tcp://127.0.0.1:7712"


@dataclass(frozen=True)
class GroundConfig:
    # The flight log (SQLite, WAL): flights, messages, events, rejected-frame counters.
    db_path: str = "flight_log.sqlite"
    # A PostgreSQL server for the flight log instead of db_path, as a URL
    # (postgresql://user@host:5432/aerie); several ground hosts and ingest processes can then
    # share one log. "" keeps the SQLite file. Run `aerie ground migrate` once first
    # (docs/GROUND_DATABASE.md).
    database: str = ""
    # Vehicles to subscribe to.
    vehicles: list[VehicleLinkConfig] = field(default_factory=lambda: [VehicleLinkConfig()])
    # Authenticate and encrypt with CurveZMQ. Off only for tests on loopback.
    curve: bool = True
    # This ground station's secret key file (`ground.key_secret`); its public key must be in
    # each vehicle's authorized_keys_dir.
    client_secret_key: str = "keys/ground.key_secret"
    # Frames larger than this are rejected and counted ("oversized"); at least the
    # vehicles' telemetry.max_message_bytes.
    max_frame_bytes: int = 1048576
    # Frames above this size make ZeroMQ drop the connection before reading them (memory bound);
    # the ground then re-creates the socket (counted as sub_dropped) and replay fills the gap.
    hard_frame_limit_bytes: int = 8388608
    # Seconds between status requests to each vehicle (reveals loss at the tail of a stream).
    status_interval_s: float = 0.5
    # Seconds between acknowledgements of what is safely in the flight log.
    ack_interval_s: float = 0.25
    # A replay request without an answer after this many seconds is sent again.
    replay_timeout_s: float = 1.0
    # Seqs asked for in one replay request (the vehicle may answer fewer).
    replay_request_max: int = 500
    # How far beyond the complete point of the log the ground looks for gaps: a vehicle's
    # claim of a higher last seq (true or spoofed) is chased this many seqs at a time.
    replay_window_max: int = 10000
    # A flight still open after this many seconds without a message from its vehicle is
    # closed as aborted (its post-flight lessons then run on what arrived); 0 never.
    flight_abort_timeout_s: float = 120.0
    # 0: this process ingests every vehicle of `vehicles`. Above 0 (needs `database`): it shares
    # them with the other ingest processes on that database by leases of this many seconds,
    # renewed every third of it; a process that dies has its vehicles taken over by the others
    # about this long after (ground_station/leases.py). Run `aerie ground migrate` first.
    ingest_lease_s: float = ranged(0.0, 0.0, 3600.0)
    # Most frames read from the sockets before one flight-log commit.
    commit_batch_max: int = 1000
    # Seconds between logging each vehicle's counters (0 disables).
    stats_interval_s: float = 10.0
    # Largest reply `aerie ground sync` reads from a vehicle (acknowledgements are small maps).
    sync_max_reply_bytes: int = 65536
    # Seconds to wait for a vehicle to acknowledge a memory bundle before trying again ...
    sync_timeout_s: float = 30.0
    # ... and how many times to try (importing is idempotent, so a retry is safe).
    sync_attempts: int = 3
    # Serve the live web dashboard (map, vehicle, agent, detections, events, flight replay)
    # while the ground station runs; `aerie ground dashboard` serves it without ingesting.
    dashboard_enabled: bool = True
    # Address the dashboard listens on. On loopback it is open to this machine; on any other
    # address every request needs the dashboard token (see dashboard_token_hash).
    dashboard_host: str = "127.0.0.1"
    # The SHA-256 of the dashboard token (`aerie keys generate` writes it and prints the token
    # once). Required when dashboard_host is not loopback: without it the dashboard refuses to start.
    dashboard_token_hash: str = "keys/dashboard.token_sha256"
    # The dashboard's TCP port (0 picks a free one; the URL is printed at start).
    dashboard_port: int = 8765
    # Seconds between the dashboard's reads of new messages from the flight log.
    dashboard_poll_interval_s: float = 0.25
    # Most live (SSE) viewers served at once; one more is answered 503 until a viewer leaves.
    dashboard_max_live_clients: int = 32
    # The onboard map file (`aerie map build`, *.aeriemap) whose streets and buildings the
    # dashboard draws beneath the tracks, every vehicle placed on it by its home lat/lon;
    # relative to this file's directory; "" draws no city.
    dashboard_map: str = ""
    # Draw only what of that map lies within this many metres of its origin; 0 draws all of it
    # (bounded: at most 20,000 buildings and 20,000 street segments, the nearest first).
    dashboard_buildings_radius_m: float = 0.0
    # After each flight ends, derive its lessons deterministically (no model) from its agent
    # steps and write them as a memory bundle for `aerie ground sync` (ground_station.post_flight).
    post_flight_enabled: bool = True
    # Directory of those bundles, one per flight: <vehicle_id>-<stream_id>-<start_seq>.bundle.
    post_flight_dir: str = "post_flight"
    # The ground station's own memory file the lessons are added to before export.
    post_flight_memory: str = "ground_memory.sqlite"
    # A flight whose flight_end does not say whether it succeeded succeeded if its last
    # distance estimate to the target is within this many metres.
    post_flight_success_radius_m: float = 20.0
    # Deliver every bundle in post_flight_dir to every vehicle of `vehicles` on its sync_endpoint
    # (ground_station.lesson_courier): once in effect per vehicle, and a vehicle that is off keeps
    # its pending bundles until it answers again.
    lesson_delivery_enabled: bool = True
    # The delivery ledger (SQLite, WAL): which bundle (file name and sha256) each vehicle
    # acknowledged or refused. Losing it only re-sends (the vehicle answers already_present).
    lesson_delivery_ledger: str = "deliveries.sqlite"
    # Seconds between delivery passes to each vehicle.
    lesson_delivery_interval_s: float = ranged(5.0, 0.05, 86400.0)
    # Seconds to wait for a vehicle's acknowledgement of one bundle (one attempt; the next pass
    # is the retry). A vehicle that does not answer is left alone until its back-off ends.
    lesson_delivery_timeout_s: float = ranged(10.0, 0.05, 3600.0)
    # A silent vehicle is tried again after lesson_delivery_interval_s, then after twice as long
    # each time it stays silent, at most this many seconds.
    lesson_delivery_max_backoff_s: float = ranged(300.0, 0.05, 86400.0)


def load_ground_config(path: str | Path) -> tuple[GroundConfig, Path]:
    """The config in ``path`` and the directory its relative paths are relative to."""
    path = Path(path)
    cfg = load_file(GroundConfig, path)
    ids = [v.vehicle_id for v in cfg.vehicles]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{path}: 'vehicles' lists a vehicle_id twice")
    if cfg.database and not cfg.database.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"{path}: database must be a postgresql:// URL (or \"\" for the db_path file), "
                          f"not {cfg.database.split('://')[0]!r}")
    if cfg.ingest_lease_s and not cfg.database:
        raise ConfigError(f"{path}: ingest_lease_s needs a PostgreSQL `database` (the leases live there)")
    if not (1 <= cfg.dashboard_max_live_clients <= 10000):
        raise ConfigError(f"{path}: dashboard_max_live_clients must be 1 to 10000, not {cfg.dashboard_max_live_clients}")
    return cfg, path.resolve().parent


def log_target(cfg: GroundConfig, base_dir: str | Path) -> str | Path:
    """Where the flight log lives: the ``database`` URL, else the ``db_path`` file."""
    return cfg.database or resolve(base_dir, cfg.db_path)


def resolve(base_dir: str | Path, path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(base_dir) / p
