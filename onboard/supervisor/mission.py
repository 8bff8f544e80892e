"""A mission: the instruction the agent gets, its step budget and the operator's geofence.

Given on the command line (`aerie fly --instruction "..."`) or as a YAML/JSON
file (`aerie fly --mission FILE`); unknown keys are errors naming the key
and the file, like the config. A mission geofence replaces the config's
`safety.geofence` for the flight: it is operator input, not model output, and
the bridge enforces it below the agent.

The name becomes part of file names (the results folder, the map images), so
it must be a plain file-name component: letters, digits, space, ``.``, ``_``
and ``-``, not starting with a dot, at most 80 characters. Anything else
(``../``, a slash, a NUL) is refused with the key's name rather than
rewritten, so what the operator sees is what the files are called.

A mission file is read through the one bounded parser of outside YAML
(``common/untrusted_yaml.py``, with a mission's smaller limits) and never
through a symbolic link: a link dropped into the queue would otherwise have
the service read, and echo into its outcome, a file the operator never wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from firmware_bridge.settings import GeofenceConfig
from contract.quoting import short
from common.typed_config import load_file
from common.untrusted_yaml import MISSION_LIMITS

# A name that is one safe path component on every filesystem Aerie writes to.
SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9 ._-]{0,79}")


def check_name(name: str) -> str:
    """``name`` if it is a safe file-name component; a ValueError naming the key otherwise."""
    if not isinstance(name, str) or not SAFE_NAME.fullmatch(name) or ".." in name or name.endswith((" ", ".")):
        raise ValueError(f"mission name {short(name)} is not a safe file name: use letters, digits, space, '.', '_' "
                         "and '-' (at most 80, no '..', not starting with '.' or ending with '.' or a space)")
    return name


class MissionRefused(RuntimeError):
    """The mission is not flown: its instruction was not understood (said before arming, nothing flown)."""


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
    # The goal's name as the operator spells it, for camera perception to match signs against
    # ("": guessed from the instruction's words, onboard/perception/camera_sightings.py goal_names).
    goal_name: str = ""
    # Fly a search for the named goal on purpose, without any relation to a landmark; without it an
    # instruction whose relations cannot be read is refused before arming (onboard/agent/understood.py).
    search_only: bool = False

    def __post_init__(self) -> None:
        check_name(self.name)
        if not self.instruction.strip():
            raise ValueError("mission instruction is empty")
        if self.step_limit < 0:
            raise ValueError("mission step_limit must be >= 0")


def load_mission(path: str | Path) -> Mission:
    """The mission in ``path``; a ConfigError naming the file for anything else, a symbolic link included."""
    return load_file(Mission, path, limits=MISSION_LIMITS, follow_symlinks=False)
