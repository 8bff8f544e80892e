"""The one typed configuration of an Aerie vehicle, loaded from ``config.yaml``.

Each package owns the dataclass of its own section; this module composes
them and is the only place that reads the file. Unknown keys are errors that
name the key and the file (see :mod:`common.typed_config`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from firmware_bridge.settings import BridgeConfig, FleetConfig, GimbalConfig, LinkConfig, SafetyConfig, StreamerConfig
from onboard.agent.settings import AgentConfig
from onboard.inference.settings import InferenceConfig
from common.log_setup import LoggingConfig
from onboard.map.settings import MapConfig
from onboard.fleet.settings import FleetChannelConfig
from onboard.memory.settings import MemoryConfig
from onboard.supervisor.settings import SupervisorConfig
from onboard.telemetry.settings import TelemetryConfig
from common.typed_config import load_file, to_dict



@dataclass(frozen=True)
class AerieConfig:
    # Names this vehicle in telemetry, memory and results.
    vehicle_id: str = "aerie-1"
    # Where the vehicle keeps its files (memory, journal, results).
    data_dir: str = "~/.local/share/aerie"
    link: LinkConfig = field(default_factory=LinkConfig)
    streamer: StreamerConfig = field(default_factory=StreamerConfig)
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    fleet: FleetConfig = field(default_factory=FleetConfig)
    # The camera gimbal, where the autopilot announces one (firmware_bridge/gimbal.py).
    gimbal: GimbalConfig = field(default_factory=GimbalConfig)
    fleet_channel: FleetChannelConfig = field(default_factory=FleetChannelConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    map: MapConfig = field(default_factory=MapConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    inference: InferenceConfig = field(default_factory=InferenceConfig)
    supervisor: SupervisorConfig = field(default_factory=SupervisorConfig)

    def __post_init__(self) -> None:
        self.bridge  # noqa: B018 -- the bridge's cross-section checks (fleet layer within the ceiling)
        if not 2.0 / self.fleet_channel.report_rate_hz <= self.fleet.channel_timeout_s:
            raise ValueError("fleet_channel.report_rate_hz must send at least two reports per "
                             "fleet.channel_timeout_s (else one lost report reads as a silent channel)")
        if self.agent.planner == "vlm" and not self.inference.vlm_model:
            raise ValueError("agent.planner: vlm needs a vision-language model: set inference.vlm_model (and "
                             "vlm_mmproj) to a manifest entry (aerie models import)")

    @property
    def bridge(self) -> BridgeConfig:
        return BridgeConfig(link=self.link, streamer=self.streamer, safety=self.safety, fleet=self.fleet,
                            gimbal=self.gimbal)


def load_config(path: str | Path | None = None) -> AerieConfig:
    """Load and validate a config file; ``None`` gives the documented defaults.

    The repository's ``config.yaml`` spells out those same defaults with their
    documentation; a test keeps the two equal.
    """
    if path is None:
        return AerieConfig()
    return load_file(AerieConfig, path)


def dump_config(cfg: AerieConfig) -> str:
    return yaml.safe_dump(to_dict(cfg), sort_keys=False)
