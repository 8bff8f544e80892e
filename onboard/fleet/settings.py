"""Typed settings of the fleet channel (the ``fleet_channel:`` section of config.yaml).

Separate from ``fleet:`` (``firmware_bridge.settings.FleetConfig``, the
separation rule) because the bridge never opens a socket: it is handed the
reports. The channel runs only while ``fleet.enabled`` is true.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.typed_config import ranged


@dataclass(frozen=True)
class FleetPeer:
    # ZeroMQ endpoint where the other member publishes its reports (its fleet_channel.pub_endpoint,
    # as reached from this vehicle), e.g. tcp://10.0.0.12:7730.
    endpoint: str = ""
    # That member's public key file (CurveZMQ, `aerie keys generate`), pinned when connecting;
    # relative paths are under data_dir.
    public_key: str = ""
    # That member's fleet.member_id: reports on its socket naming another member are refused
    # (0 accepts any id, e.g. while a fleet is being set up).
    member_id: int = ranged(0, 0, 255)


@dataclass(frozen=True)
class FleetChannelConfig:
    # ZeroMQ PUB endpoint this vehicle binds to publish its own position and velocity to the fleet.
    pub_endpoint: str = "tcp://0.0.0.0:7730"
    # The other members, one entry each: {endpoint, public_key, member_id}. Each is read on its own SUB socket,
    # so a member that misbehaves loses only its own connection.
    peers: tuple[FleetPeer, ...] = ()
    # Own reports sent per second; keep several per fleet.channel_timeout_s.
    report_rate_hz: float = ranged(5.0, 0.2, 50.0)
    # Largest frame read from a peer (a position report is about 150 bytes, a findings frame at most
    # about 12 KiB); ZeroMQ drops a peer's connection that sends more, and the channel re-creates that socket.
    max_message_bytes: int = ranged(16384, 256, 65536)
    # Share findings with the other members: the landmarks this vehicle fixed, the signs it read and
    # the places it looked from (contract/fleet_discovery.py); the agent folds theirs into its memory.
    share_findings: bool = True
    # Findings frames sent per second (each is the latest snapshot; the receiver keeps the union).
    findings_rate_hz: float = ranged(1.0, 0.05, 10.0)
    # The radio's range, metres: another member's finding placed farther than this from home (or
    # than the geofence's radius, if that is less) is refused and counted, whatever key signed it.
    findings_max_range_m: float = ranged(10_000.0, 10.0, 1_000_000.0)
    # A member's finding it has not said again for this long is forgotten, seconds (a live member
    # repeats its findings every 1 / findings_rate_hz).
    findings_max_age_s: float = ranged(3600.0, 1.0, 604_800.0)
    # Frames read from one member per second (reports and findings together; a burst of one second's
    # worth passes): beyond it frames are dropped undecoded and counted. Keep it above the members'
    # report_rate_hz + findings_rate_hz.
    peer_max_frames_hz: float = ranged(60.0, 1.0, 10_000.0)
    # Findings frames taken from one member per second (a burst of two seconds' worth passes); each is
    # a snapshot of the member's latest findings, so one dropped costs only a moment's news.
    peer_max_findings_hz: float = ranged(2.0, 0.05, 100.0)
    # Longest wait between two re-creations of a peer's socket that ZeroMQ dropped, seconds; the wait
    # starts at half a second and doubles while nothing is accepted from that peer.
    peer_reopen_max_interval_s: float = ranged(30.0, 0.5, 3600.0)
    # Authenticate and encrypt the channel with CurveZMQ: this vehicle's PUB is a CURVE server
    # admitting the public keys in authorized_keys_dir; each SUB pins its peer's public_key.
    curve: bool = True
    # This vehicle's secret key file (the telemetry key pair serves); relative paths are under data_dir.
    secret_key: str = "keys/vehicle.key_secret"
    # Directory of the other members' public key files (*.key) allowed to read this vehicle's reports.
    authorized_keys_dir: str = "keys/fleet_authorized"

    def __post_init__(self) -> None:
        if self.curve and any(not p.public_key for p in self.peers):
            raise ValueError("fleet_channel.curve needs every peer's public_key")
        if any(not p.endpoint for p in self.peers):
            raise ValueError("every fleet_channel peer needs its endpoint")
        sent = self.report_rate_hz + (self.findings_rate_hz if self.share_findings else 0.0)
        if not self.peer_max_frames_hz >= sent:
            raise ValueError(f"fleet_channel.peer_max_frames_hz ({self.peer_max_frames_hz:g}) must be at least what a "
                             f"member configured like this one sends, report_rate_hz + findings_rate_hz ({sent:g})")
