"""Missions for a supervisor that runs as a service: files dropped into `<data_dir>/missions/`.

A vehicle's service cannot take its mission on a command line, so `aerie fly
--standby` connects, reports healthy and waits; a mission file (YAML/JSON, the
`Mission` fields) written into the queue directory is flown next, in name
order. Write it under a name starting with "." and rename it into place, so a
half-written file is never read. Afterwards it moves to `done/` (with the
outcome as `<name>.outcome.json`) or to `failed/` (with the reason), so the
queue is also the record of what the vehicle was asked to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract.results import write_json
from contract.typed_config import ConfigError
from onboard.supervisor.mission import Mission, load_mission

SUFFIXES = (".yaml", ".yml", ".json")


class MissionQueue:
    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory).expanduser()
        self.done = self.dir / "done"
        self.failed = self.dir / "failed"
        for d in (self.dir, self.done, self.failed):
            d.mkdir(parents=True, exist_ok=True)

    def pending(self) -> list[Path]:
        return sorted(p for p in self.dir.iterdir()
                      if p.is_file() and p.suffix in SUFFIXES and not p.name.startswith("."))

    def next(self) -> tuple[Path, Mission] | None:
        """The next valid mission; invalid files are moved to failed/ with the reason."""
        for path in self.pending():
            try:
                return path, load_mission(path)
            except (ConfigError, ValueError) as exc:
                self.finish(path, {"error": str(exc)}, ok=False)
        return None

    def finish(self, path: Path, outcome: dict[str, Any], *, ok: bool) -> Path:
        dest_dir = self.done if ok else self.failed
        dest = dest_dir / path.name
        path.replace(dest)
        write_json(dest_dir / f"{path.name}.outcome.json", outcome)  # atomic: a reader never sees half of it
        return dest
