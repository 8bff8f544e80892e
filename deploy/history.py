"""Which release to roll back to, from ``<prefix>/history``.

remote.sh appends ``<utc> <activated-id> <previous-id or ->`` every time it
moves ``current``. Rolling back means returning to the release that was
current before the current one became current: the newest line that
activated the current release names it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Activation:
    when: str
    release: str
    previous: str | None


def parse_history(lines: list[str]) -> list[Activation]:
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3:
            out.append(Activation(parts[0], parts[1], None if parts[2] == "-" else parts[2]))
    return out


def rollback_target(history: list[Activation], current: str | None, releases: dict[str, str]) -> str | None:
    """The release to return to, or None; never one that failed its health check or is gone."""
    if not current:
        return None
    for act in reversed(history):
        if act.release == current:
            prev = act.previous
            if prev and releases.get(prev) in ("healthy", "installed"):
                return prev
            return None
    return None
