"""A mission: the instruction the agent gets, its step budget and the operator's geofence.

Given on the command line (`aerie fly --instruction "..."`) or as a YAML/JSON
file (`aerie fly --mission FILE`); unknown keys are errors naming the key
and the file, like the config. A mission geofence replaces the config's
`safety.geofence` for the flight: it is operator input, not model output, and
the bridge enforces it below the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from firmware_bridge.settings import GeofenceConfig
from contract.typed_config import load_file


@dataclass(frozen=True)
class Mission:
    # What to find, in words: the agent's only knowledge of the goal.
    instruction: str
    # A short name for logs and the results folder.
    name: str = "mission"
    # Agent steps allowed (0: the supervisor's step_limit).
    step_limit: int = 0
    # The flight's geofence (None: the config's safety.geofence).
    geofence: GeofenceConfig | None = None

    def __post_init__(self) -> None:
        if not self.instruction.strip():
            raise ValueError("mission instruction is empty")
        if self.step_limit < 0:
            raise ValueError("mission step_limit must be >= 0")


def load_mission(path: str | Path) -> Mission:
    return load_file(Mission, path)
