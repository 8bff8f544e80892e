"""Issue 34: `aerie fly` says what it understood before arming, and refuses what it did not understand.

A real supervisor process against the simulated MAVLink vehicle and the world feed on loopback: an
instruction that names no landmark is refused with exit status 2, a message naming what is missing and
an outcome file, and the vehicle is never armed (its own ground truth).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from onboard.config import AerieConfig
from sim.flight_rig import start_rig
from tests.supervisor.flightkit import world, write_config

ROOT = Path(__file__).resolve().parents[2]


def test_an_instruction_with_nothing_placeable_is_refused_before_arming(tmp_path):
    rig = start_rig("t019", world=world())
    try:
        cfg = rig.config(AerieConfig(), tmp_path / "vehicle")
        config_file = write_config(cfg, tmp_path / "config.yaml")
        proc = subprocess.run([sys.executable, "-m", "aerie", "fly", "--config", str(config_file), "--instruction",
                               "Take some pictures of the harbour please", "--json", str(tmp_path / "outcome.json")],
                              cwd=ROOT, capture_output=True, text=True, timeout=180)
        print(proc.stdout, proc.stderr)
        assert proc.returncode == 2, proc.stderr
        assert "instruction not understood" in proc.stderr and "relative to a landmark" in proc.stderr
        assert "understood: goal" in proc.stdout and "no relation read" in proc.stdout  # said before anything
        outcome = json.loads((tmp_path / "outcome.json").read_text())
        assert outcome["refused_before_arming"] and outcome["steps"] == 0 and outcome["flown_m"] == 0.0
        assert outcome["landed"] == "on ground" and outcome["reason"].startswith("refused: instruction not understood")
        truth = rig.vehicle.truth()
        assert not truth["armed"] and truth["on_ground"] and truth["rel_alt"] < 0.5, truth
    finally:
        rig.close()
