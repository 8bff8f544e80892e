"""Judge the target's prerequisites (JetPack, Python >= 3.10, rsync, systemd, disk).

remote.sh prints one ``CHECK ok|fail|info NAME DETAIL`` line per item; this
module decides which failures stop the flash. A test machine or a dev board
that is not a Jetson may be flashed with ``ALLOW_NON_JETSON=1``: the JetPack
and systemd failures then become warnings (and the steps that need them are
skipped later, each saying so). Python, rsync, disk and access never relax.
"""

from __future__ import annotations

from dataclasses import dataclass

RELAXED_BY_ALLOW_NON_JETSON = ("jetpack", "systemd")


@dataclass(frozen=True)
class Prereq:
    name: str
    status: str  # ok | fail | warn | info
    detail: str


def parse_checks(lines: list[str], *, allow_non_jetson: bool) -> list[Prereq]:
    out = []
    for line in lines:
        status, name, detail = (line.split(" ", 2) + ["", ""])[:3]
        if status == "fail" and allow_non_jetson and name in RELAXED_BY_ALLOW_NON_JETSON:
            status, detail = "warn", f"{detail} (ALLOW_NON_JETSON=1)"
        out.append(Prereq(name, status, detail))
    return out


def blocking(prereqs: list[Prereq]) -> list[Prereq]:
    return [p for p in prereqs if p.status == "fail"]


def has(prereqs: list[Prereq], name: str) -> bool:
    """Whether an optional capability (cuda, tensorrt, systemd) checked ok."""
    return any(p.name == name and p.status == "ok" for p in prereqs)
