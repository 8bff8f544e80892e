"""Every shell command docs/PX4_SITL.md shows works here, checked as README.md's are; those needing no PX4 run.

The checks are tests/test_readme.py's own (an ``aerie`` line resolves to a registered
command whose ``--help`` lists its options; a ``make`` line dry-runs; repository files
it names exist; ``# in PX4-Autopilot:`` lines belong to PX4). Then the runbook's fleet
is started as written with Aerie's simulated PX4 in place of PX4 (its section 6): the
configs command, the world feed bound from a generated config, and (slow) member 1's
`aerie fly` on `aerie sim vehicle -i 0`. The commands are taken from the document, not
copied here, so a runbook edited wrong fails this test; only the output folder and the
fixed ports are swapped for free ones, so a run never collides with another on this machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from onboard.config import load_config
from onboard.supervisor.world_link import WorldLink
from sim.vehicle.process import free_ports
from tests.faults.wirekit import Child
from tests.test_readme import ShellCommand, shell_commands
from tests.test_readme import test_aerie_command_is_registered_and_its_help_works as check_aerie_command
from tests.test_readme import test_make_target_exists as check_make_target

REPO = Path(__file__).resolve().parents[1]
RUNBOOK = REPO / "docs" / "PX4_SITL.md"
COMMANDS = shell_commands(RUNBOOK.read_text(encoding="utf-8"))
HERE = [c for c in COMMANDS if c.where.lower() == "aerie"]
FLEET_DIR = "/tmp/aerie-fleet"   # the folder section 5 writes to, swapped for a temporary one


def _param(cmds: list[ShellCommand]) -> list[object]:
    return [pytest.param(c, id=f"PX4_SITL.md:{c.id}") for c in cmds]


def test_the_runbook_shows_each_part() -> None:
    shown = [c.text for c in HERE]
    for needed in ("aerie fleet configs --members 1", "aerie fleet configs --members 2", "aerie world serve --config",
                   "aerie ground --config", "--standby", "aerie sim vehicle -i 0", "aerie sim vehicle -i 1"):
        assert any(needed in t for t in shown), needed
    assert sum(t.startswith("aerie fly --config /tmp/aerie-px4/vehicle1.yaml --mission") for t in shown) == 2
    assert {c.where for c in COMMANDS} == {"Aerie", "PX4-Autopilot"}


@pytest.mark.parametrize("cmd", _param([c for c in HERE if c.argv[0] == "make"]) or
                         [pytest.param(None, marks=pytest.mark.skip(reason="the runbook shows no make line of Aerie"))])
def test_make_target_exists(cmd: ShellCommand) -> None:
    check_make_target(cmd)


@pytest.mark.parametrize("cmd", _param([c for c in HERE if c.argv[0] == "aerie"]))
def test_aerie_command_is_registered_and_its_help_works(cmd: ShellCommand) -> None:
    check_aerie_command(cmd)


def _command(*words: str, containing: str = "") -> list[str]:
    """The runbook's command starting with ``words`` (and holding ``containing``), its folder swapped later."""
    found = [list(c.argv) for c in HERE if c.argv[:len(words)] == words and containing in c.text]
    assert found, f"the runbook shows no {' '.join(words)} {containing}"
    return found[0]


def _in(folder: Path, argv: list[str]) -> list[str]:
    """``argv`` with the runbook's folder swapped, ``$(cat FILE)`` read and a trailing ``&`` dropped."""
    out = []
    for a in argv:
        a = a.replace(FLEET_DIR, str(folder))
        if a == "$(cat":
            continue
        if a.endswith(")") and a.startswith(str(folder)):
            a = Path(a[:-1]).read_text().strip()
        if a != "&":
            out.append(a)
    return out


def _aerie(argv: list[str]) -> list[str]:
    assert argv[0] == "aerie"
    return [sys.executable, "-m", "aerie", *argv[1:]]


@pytest.fixture()
def fleet(tmp_path: Path) -> tuple[Path, int]:
    """Section 5's configs command as written, on free ports; (its folder, member 1's PX4 offboard port)."""
    px4, world, dashboard, base = free_ports(4)
    cmd = _in(tmp_path, _command("aerie", "fleet", "configs", containing="--members 2"))
    done = subprocess.run([*_aerie(cmd), "--step-limit", "2", "--px4-port", str(px4), "--world",
                           f"tcp://127.0.0.1:{world}", "--dashboard-port", str(dashboard),
                           "--port-base", str(base // 10 * 10 - 10)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return tmp_path, px4


def _world_feed(folder: Path) -> tuple[Child, str]:
    cmd = _in(folder, _command("aerie", "world", "serve", "--config", containing=FLEET_DIR))
    child = Child(["-m", "aerie", *cmd[1:]])
    endpoint = child.read_until("world feed on").split()[3]
    child.read_until("mission:")
    return child, endpoint


def test_the_world_feed_binds_where_the_generated_config_asks_and_serves_it(fleet) -> None:
    folder, _ = fleet
    cfg = load_config(folder / "vehicle1.yaml")
    child, endpoint = _world_feed(folder)
    with child:
        assert endpoint == cfg.supervisor.world_endpoint   # the 36.16 mismatch: 7720 bound, 17720 asked
        lat, lon, _ = (float(v) for v in (folder / "home1.txt").read_text().split(","))
        link = WorldLink(cfg.supervisor.world_endpoint, timeout_s=30.0)
        try:
            assert link.observe(lat, lon, 0.0).moves
        finally:
            link.close()


def test_without_options_the_feed_and_the_supervisor_share_one_endpoint() -> None:
    from argparse import Namespace

    from onboard.supervisor.settings import SupervisorConfig
    from sim.world.cli import _serve_endpoint

    assert _serve_endpoint(Namespace(endpoint=None, config=None)) == SupervisorConfig().world_endpoint
    assert re.search(r"world_endpoint: tcp://127\.0\.0\.1:7720\b", (REPO / "config.yaml").read_text())


@pytest.mark.slow  # a supervisor starts (memory, embedder) and flies two steps: about a minute on 2 cores
def test_member_1_flies_and_lands_on_the_simulated_px4_instance_as_written(fleet, tmp_path) -> None:
    folder, px4_port = fleet
    vehicle_cmd = _in(folder, _command("aerie", "sim", "vehicle", "-i", "0"))
    child, _ = _world_feed(folder)
    with child, Child(["-m", "aerie", *vehicle_cmd[1:], "--gcs-port", str(px4_port), "--port", "0"]) as vehicle:
        vehicle.read_until("{")  # its ready line
        fly = _in(folder, _command("aerie", "fly", "--config", f"{FLEET_DIR}/vehicle1.yaml"))
        done = subprocess.run(_aerie(fly), cwd=REPO, capture_output=True, text=True, timeout=600)
        outcome = json.loads((folder / "outcome1.json").read_text())
    assert done.returncode in (0, 3), done.stdout[-3000:] + done.stderr[-3000:]
    assert outcome["landed"] == "landed" and outcome["steps"] >= 1, outcome
