"""Missions for a supervisor that runs as a service: files dropped into `<data_dir>/missions/`.

A vehicle's service cannot take its mission on a command line, so `aerie fly
--standby` connects, reports healthy and waits; a mission file (YAML/JSON, the
`Mission` fields) written into the queue directory is flown next, in name
order. Write it under a name starting with "." and rename it into place, so a
half-written file is never read. Afterwards it moves to `done/` or to `failed/`
as `<stamp>_<name>`, with the outcome (or the reason) beside it as
`<stamp>_<name>.outcome.json`, so the queue is also the record of what the
vehicle was asked to do. The stamp is the flight's id (UTC time), with a
counter when that name is taken: the same file name queued again is a second
record, never an overwrite of the first.

Nothing in a file can end the service: whatever taking it raises, the file is
refused (moved to `failed/` with the reason) and the next one is taken. A
file deleted while its mission flies still gets its outcome. `refuse` is the
one way to turn a mission down with a reason, for any check that comes later.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Any

from contract.quoting import clip
from contract.results import write_json
from onboard.supervisor.mission import Mission, load_mission

SUFFIXES = (".yaml", ".yml", ".json")
OUTCOME_SUFFIX = ".outcome.json"
# A kept file: <stamp>[-<n>]_<name>, the stamp a flight id.
_RECORD = re.compile(r"(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?_(?P<name>.+)", re.DOTALL)

log = logging.getLogger("aerie.mission_queue")


def outcome_path(record: Path) -> Path:
    """Where the outcome of the mission file kept as ``record`` (in done/ or failed/) is written."""
    return record.with_name(record.name + OUTCOME_SUFFIX)


def _identity(path: Path) -> tuple[int, int, int]:
    """What tells the file taken under a name from another put there later (inode numbers are reused)."""
    st = os.lstat(path)
    return st.st_dev, st.st_ino, st.st_ctime_ns


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


class MissionQueue:
    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory).expanduser()
        self.done = self.dir / "done"
        self.failed = self.dir / "failed"
        for d in (self.dir, self.done, self.failed):
            d.mkdir(parents=True, exist_ok=True)
        self._stuck: set[str] = set()  # files that could not even be moved away: not taken again this run
        self._taken: dict[str, tuple[int, int, int]] = {}  # name -> identity of the file taken under it

    def pending(self) -> list[Path]:
        """Queued files in name order; a symbolic link is listed too, so that it is refused, not left."""
        return sorted(p for p in self.dir.iterdir()
                      if (p.is_symlink() or p.is_file()) and p.suffix in SUFFIXES
                      and not p.name.startswith(".") and p.name not in self._stuck)

    def next(self) -> tuple[Path, Mission] | None:
        """The next valid mission; any other file is refused (moved to failed/ with the reason)."""
        for path in self.pending():
            try:
                self._taken[path.name] = _identity(path)
                return path, load_mission(path)
            except Exception as exc:  # whatever a file holds, it is refused, never the service's end
                self.refuse(path, str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}")
        return None

    def refuse(self, path: Path, reason: str) -> Path | None:
        """Turn the mission in ``path`` down: to failed/ with ``reason`` as its outcome; then the next is taken."""
        try:
            return self.finish(path, {"error": clip(reason)}, ok=False)
        except OSError as exc:  # failed/ not writable: skip the file for this run rather than loop on it
            log.error("cannot move refused mission file %s to %s: %s", path.name, self.failed, exc)
            self._stuck.add(path.name)
            return None

    def finish(self, path: Path, outcome: dict[str, Any], *, ok: bool, flight_id: str | None = None) -> Path:
        """Keep ``path`` in done/ (``ok``) or failed/ under a name no earlier record has, its outcome beside it.

        ``flight_id`` stamps the record (default: the time now). A file that is no longer there (deleted
        while its mission flew) still gets its outcome, which says so; a new file queued under the same name
        meanwhile is left in the queue, to be flown in its turn.
        """
        dest = self._free_name(self.done if ok else self.failed, path.name, flight_id or _stamp())
        taken = self._taken.pop(path.name, None)
        try:
            if taken is not None and _identity(path) != taken:
                raise FileNotFoundError(path)
            os.replace(path, dest)  # a symbolic link is moved as the link
        except FileNotFoundError:
            outcome = {**outcome, "mission_file": f"{path.name} was gone (deleted or replaced) when the mission "
                                                  "ended; only its outcome is kept"}
            log.warning("mission file %s was gone when its mission ended; outcome kept as %s", path.name, dest.name)
        write_json(outcome_path(dest), outcome)  # atomic: a reader never sees half of it
        return dest

    @staticmethod
    def _free_name(folder: Path, name: str, stamp: str) -> Path:
        for n in range(1, 10_000):
            dest = folder / (f"{stamp}_{name}" if n == 1 else f"{stamp}-{n}_{name}")
            if not os.path.lexists(dest) and not os.path.lexists(outcome_path(dest)):
                return dest
        raise OSError(f"no free record name for {name} in {folder}")

    def records(self, name: str, *, ok: bool) -> list[Path]:
        """Where queued file ``name`` was kept in done/ (``ok``) or failed/, oldest first: one per outcome
        written (a record whose mission file was gone has its outcome only)."""
        found = []
        for p in (self.done if ok else self.failed).iterdir():
            m = _RECORD.fullmatch(p.name[:-len(OUTCOME_SUFFIX)]) if p.name.endswith(OUTCOME_SUFFIX) else None
            if m and m["name"] == name:
                found.append((m["stamp"], int(m["n"] or 1), p.with_name(p.name[:-len(OUTCOME_SUFFIX)])))
        return [p for *_, p in sorted(found)]
