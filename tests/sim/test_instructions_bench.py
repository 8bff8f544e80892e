"""`aerie bench instructions`: the scoring rule, and the command's JSON on the parser alone."""

import json
import subprocess
import sys

from onboard.agent.goal_description import Relation
from sim.instructions_bench import reading_right, relation_right

LAB = {"kind": "offset", "landmarks": ["Kiasma"], "direction": 2, "distance": 300.0}


def test_a_relation_is_right_on_landmark_direction_and_distance_within_ten_percent():
    assert relation_right(Relation("offset", ("Kiasma",), 2, 325.0), LAB)
    assert not relation_right(Relation("offset", ("Kiasma",), 2, 340.0), LAB)
    assert not relation_right(Relation("offset", ("Kiasma",), 6, 300.0), LAB)  # read backwards
    assert not relation_right(Relation("offset", ("Stockmann",), 2, 300.0), LAB)
    assert not relation_right(Relation("ray", ("Kiasma",), 2, None), LAB)
    ray = {"kind": "ray", "landmarks": ["Kiasma"], "direction": 2, "distance": None}
    assert relation_right(Relation("ray", ("Kiasma",), 2, None), ray)


def test_a_reading_must_have_every_relation_and_no_other():
    two = [LAB, {"kind": "offset", "landmarks": ["Stockmann"], "direction": 0, "distance": 200.0}]
    a, b = Relation("offset", ("Kiasma",), 2, 300.0), Relation("offset", ("Stockmann",), 0, 200.0)
    assert reading_right((b, a), two)
    assert not reading_right((a,), two)
    assert not reading_right((a, b, a), two)


def test_the_command_reports_per_family_accuracy(tmp_path):
    out = tmp_path / "instructions.json"
    done = subprocess.run([sys.executable, "-m", "aerie", "bench", "instructions", "--split", "dev", "-n", "48",
                           "--no-model", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    res = json.loads(out.read_text())
    assert res["descriptions"] == 48 and res["families"] >= 10
    assert set(res["family_accuracy"]) == set(res["parser_family_accuracy"])
    assert 0.0 <= res["overall_accuracy"] <= 1.0 and "parser_overall_accuracy" in res
    assert "p50_ms_model" not in res  # no model was asked
