"""A writer killed with SIGKILL mid-stream loses nothing it committed and leaves a sound file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from onboard.memory.experience_store import ExperienceStore
from contract.records import NAVIGATE_EXPERIENCE

ROOT = Path(__file__).resolve().parents[2]


def test_sigkill_mid_stream_keeps_every_committed_record(tmp_path: Path, embedder, cfg) -> None:
    path = tmp_path / "memory.sqlite"
    child = subprocess.Popen([sys.executable, str(Path(__file__).with_name("crash_writer.py")), str(path)],
                             cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    committed: list[str] = []
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr else ""
        while len(committed) < 60:
            line = child.stdout.readline()
            assert line, child.stderr.read() if child.stderr else "child exited"
            committed.append(line.strip())
        os.kill(child.pid, signal.SIGKILL)  # the child is mid-way through its next writes
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    # Lines the child wrote after the last one we read are committed too.
    committed += [line.strip() for line in child.stdout.read().splitlines() if line.strip()]

    with ExperienceStore.open(path, embedder, cfg) as s:  # opening runs PRAGMA integrity_check
        assert s.integrity_ok()
        assert all(s.has(uid) for uid in committed)
        n = s.count(NAVIGATE_EXPERIENCE)
        assert len(committed) <= n <= len(committed) + 1  # at most the one in flight, and only if it committed
        # Every stored row is searchable through the vector index, with its vector row intact.
        assert s.conn.execute("SELECT count(*) FROM experience_vec").fetchone()[0] == n
        assert len(s.search("flying over block 3 of the city", NAVIGATE_EXPERIENCE, k=n, threshold=-1.0)) == n
