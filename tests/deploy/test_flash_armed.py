"""`make flash` refuses to restart the service of an armed vehicle unless forced (issue 19, item 14).

The target-side step (`deploy/remote.sh airborne`) is run for real with bash
against a throwaway prefix: it asks a real status socket (the supervisor's own
`StatusServer`) through the release's `python -m onboard.status --armed`, which
prints the report's typed `vehicle.armed` flag (`contract.status_report`), never a
word read out of the detail meant for a person. The release "venv" is a
two-line wrapper around this interpreter. The decision that `flash()` takes on
that answer is `refuse_if_armed`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from contract.status_report import StatusReport, VehicleLive
from deploy.flash import FlashFailed, FlashOptions, Report, refuse_if_armed
from deploy.target import Target
from onboard.status import vehicle_armed
from onboard.supervisor.status_server import StatusServer

REPO = Path(__file__).resolve().parents[2]


def _prefix(tmp: Path, data: Path) -> Path:
    prefix = tmp / "opt-aerie"
    venv_bin = prefix / "releases" / "r1" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    py = venv_bin / "python"
    py.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    py.chmod(0o755)
    (prefix / "current").mkdir()
    (prefix / "current" / "config.yaml").write_text(yaml.safe_dump({"data_dir": str(data)}))
    return prefix


def _remote_airborne(prefix: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(["bash", str(REPO / "deploy" / "remote.sh"), "airborne", str(prefix), "r1"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    results = [line[len("RESULT "):] for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    assert results, out.stdout + out.stderr
    return results[-1]


# The detail is for a person; its first word says the opposite of the flag in the first two, and
# nothing at all in the third: the answer follows the typed flag every time.
@pytest.mark.parametrize("vehicle, expected", [
    (VehicleLive(True, True, "disarmed? no: armed, in air at 30.0 m, mode OFFBOARD"), "armed"),
    (VehicleLive(False, False, "armed state: disarmed, on ground, mode HOLD"), "disarmed"),
    (VehicleLive(None, None, "armed or not: not connected yet"), "unknown")])
def test_the_target_step_asks_the_running_supervisor_for_the_typed_flag(tmp_path, vehicle, expected):
    data = tmp_path / "data"
    prefix = _prefix(tmp_path, data)

    async def scenario() -> str:
        server = await StatusServer(data, {"bridge": lambda: (True, "link")}, lambda: vehicle).start()
        try:
            return await asyncio.to_thread(_remote_airborne, prefix)
        finally:
            await server.close()

    assert asyncio.run(scenario()) == expected


def test_vehicle_armed_reads_the_flag_and_says_unknown_without_one():
    assert vehicle_armed(StatusReport((), VehicleLive(True, detail="disarmed"))) == "armed"
    assert vehicle_armed(StatusReport((), VehicleLive(False, detail="armed"))) == "disarmed"
    assert vehicle_armed(StatusReport((), None)) == "unknown"   # a supervisor that does not report its vehicle
    assert vehicle_armed(None) == "unknown"                      # none answering


def test_no_supervisor_answering_is_unknown_not_armed(tmp_path):
    assert _remote_airborne(_prefix(tmp_path, tmp_path / "data")) == "unknown"


def test_an_armed_vehicle_stops_the_flash_unless_forced(tmp_path):
    opts = FlashOptions(target=Target("nobody@127.0.0.1"), config=tmp_path / "c.yaml")
    report = Report()
    with pytest.raises(FlashFailed, match="armed"):
        refuse_if_armed(opts, report, "armed")
    assert report.outcomes()["airborne"] == "REFUSED"
    forced = Report()
    refuse_if_armed(FlashOptions(target=opts.target, config=opts.config, force=True), forced, "armed")
    assert forced.outcomes()["airborne"] == "FORCED"
    for answer in ("disarmed", "unknown"):
        ok = Report()
        refuse_if_armed(opts, ok, answer)
        assert ok.outcomes()["airborne"] == "ok"
