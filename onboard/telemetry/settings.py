"""Typed settings of onboard telemetry (the ``telemetry:`` section of config.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from common.typed_config import ranged


@dataclass(frozen=True)
class TelemetryConfig:
    # Publish telemetry at all. Off: the supervisor creates no sockets and no journal.
    enabled: bool = True
    # ZeroMQ PUB endpoint the vehicle binds for live telemetry (the ground station connects).
    pub_endpoint: str = "tcp://0.0.0.0:7710"
    # ZeroMQ ROUTER endpoint the vehicle binds for replay requests, status and acks.
    replay_endpoint: str = "tcp://0.0.0.0:7711"
    # Largest message the PUB socket reads (ground stations send it only subscription
    # messages, a few bytes, and the CurveZMQ handshake, about 300); ZeroMQ drops a peer that
    # sends more, unread.
    pub_max_inbound_bytes: int = ranged(1024, 512, 1 << 20)
    # Largest request the replay ROUTER socket reads (status, replay and ack are tiny maps);
    # bigger ones are dropped by ZeroMQ unread.
    replay_max_request_bytes: int = ranged(4096, 256, 1 << 20)
    # Store-and-forward journal (SQLite, WAL); relative paths are under data_dir.
    journal_path: str = "telemetry_journal.sqlite"
    # SQLite synchronous mode of the journal: NORMAL survives a process crash, FULL also
    # a power cut (one fsync per commit batch, slower).
    journal_synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    # State messages published at most this often; faster calls are skipped (no seq used);
    # 0 publishes every call.
    state_rate_hz: float = ranged(10.0, 0.0, 1000.0)
    # Map snapshots (PNG) published at most once per this many seconds.
    map_min_interval_s: float = ranged(2.0, 0.0, 3600.0)
    # Largest encoded message in bytes; a bigger one is refused at the source with a
    # `payload_refused` event, never truncated. The ground station must accept at least this.
    max_message_bytes: int = ranged(1048576, 1024, 1 << 28)
    # Messages waiting to be journaled and sent; a full queue makes publish() wait (bounded memory).
    queue_max_messages: int = ranged(10000, 64, 10_000_000)
    # At most this many messages per journal transaction (group commit) and wire burst.
    commit_batch_max: int = ranged(512, 1, 100_000)
    # A message published at least inline_commit_min_gap_s after the previous one is committed
    # and sent in the caller's thread (no hand-off latency: 10 Hz state, events, 200 Hz);
    # denser streams go to the writer thread, which commits them in batches.
    inline_commit: bool = True
    inline_commit_min_gap_s: float = ranged(0.001, 0.0, 10.0)
    # On close, while a ground station has asked for anything in the last 10 s, wait up to this long
    # for it to acknowledge the last message: it learns the last seq from its status requests and
    # replays what the PUB socket had not delivered (flight_end is usually among it). 0 closes at
    # once; the journal keeps anything unacknowledged either way.
    close_ack_wait_s: float = ranged(3.0, 0.0, 600.0)
    # PUB socket send high-water mark (messages); beyond it frames are dropped on the wire
    # only, the journal keeps them for replay.
    send_hwm: int = ranged(10000, 64, 10_000_000)
    # One replay answer carries at most this many messages ...
    replay_batch_max: int = ranged(500, 1, 100_000)
    # ... and at most this many bytes (the first message always goes).
    replay_batch_max_bytes: int = ranged(4194304, 1024, 1 << 30)
    # Authenticate and encrypt both sockets with CurveZMQ. Off only for tests on loopback.
    curve: bool = True
    # The vehicle's secret key file from `aerie keys generate DIR`; relative paths are
    # under data_dir.
    server_secret_key: str = "keys/vehicle.key_secret"
    # Directory of public key files (*.key) of ground stations allowed to connect.
    authorized_keys_dir: str = "keys/authorized"
    # ZeroMQ REP endpoint where the ground station delivers memory bundles (same CURVE keys).
    sync_endpoint: str = "tcp://0.0.0.0:7712"
    # Largest memory bundle accepted, bytes; bigger ones are dropped by ZeroMQ unread.
    sync_max_bundle_bytes: int = ranged(67108864, 1024, 1 << 32)
    # Where received bundles are kept (named by their SHA-256); relative paths are under data_dir.
    sync_incoming_dir: str = "incoming_bundles"
    # Received bundles kept, in the incoming directory and in its refused/ each; the oldest go first.
    sync_incoming_max_files: int = ranged(200, 1, 100_000)
    # A received bundle older than this is deleted, seconds (30 days by default).
    sync_incoming_max_age_s: float = ranged(2_592_000.0, 60.0, 31_536_000.0)
    # Log lines and journaled events about sync requests per second (bursts of ten pass): a peer that
    # floods the sync socket is answered every time, but logged and journaled at this rate; the next
    # line says how many were held back.
    sync_report_rate_hz: float = ranged(1.0, 0.01, 100.0)


def resolve_path(data_dir: str | Path, path: str) -> Path:
    """``path`` as given when absolute, otherwise under ``data_dir``."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(data_dir).expanduser() / p
