"""The ordinary benchmark: uniform references, every phrasing family, labels that say what the text says."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from common.geodesy import ned_from_geo
from sim.benchmark.compass import DIRECTION_RE, direction_index
from sim.benchmark.ordinary import HOP_BAND, generate_ordinary, phrase
from sim.benchmark.phrasing import (FAMILY_NAMES, TruthRelation, distance_in_words, number_words, plain_lower,
                                    words_round)
from sim.benchmark.tasks import dump_tasks, load_tasks, resolve_all
from tests.sim._world_fixture import helsinki

TASKS = Path(__file__).resolve().parents[2] / "bench" / "tasks"
DEV, TEST = TASKS / "helsinki_ordinary_dev.json", TASKS / "helsinki_ordinary_test.json"
DEV2 = TASKS / "helsinki_ordinary_dev2.json"
REQUIRED = {"object", "subject", "imperative", "number_words", "units", "lowercase", "two_relations",
            "two_sentence", "label", "between", "abbrev", "ray"}


@pytest.fixture(scope="module")
def world():
    return helsinki()


@pytest.fixture(scope="module")
def shipped() -> dict:
    return {path.name: load_tasks(path)[1] for path in (DEV, TEST)}


@pytest.fixture(scope="module")
def all_tasks(shipped) -> list:
    return [t for tasks in shipped.values() for t in tasks]


def _xy(world, lat: float, lon: float) -> np.ndarray:
    north, east = ned_from_geo(world.origin, lat, lon)
    return np.array([east, north])


def _unit(direction: int) -> np.ndarray:
    r = math.radians(45.0 * direction)
    return np.array([math.sin(r), math.cos(r)])


def _resolve(relations: list[dict], pos: dict) -> np.ndarray:
    """The label's position from true landmark positions (written here again, independent of ordinary.py)."""
    points, rays = [], []
    for r in relations:
        if r["kind"] == "between":
            points.append((pos[r["landmarks"][0]] + pos[r["landmarks"][1]]) / 2.0)
        elif r["kind"] == "offset":
            points.append(pos[r["landmarks"][0]] + r["distance"] * _unit(r["direction"]))
        else:
            rays.append((pos[r["landmarks"][0]], _unit(r["direction"])))
    if rays:
        (p, u), (q, v) = rays
        t = np.linalg.solve(np.column_stack([u, -v]), q - p)  # p + t0 u = q + t1 v
        assert t[0] > 0 and t[1] > 0, "the rays meet behind a landmark"
        points.append(p + t[0] * u)
    return np.mean(points, axis=0)


def _directions(text: str, names: list[str]) -> list[int]:
    """Compass directions written in `text`, names masked (dotted abbreviations read as plain)."""
    for n in sorted(names, key=len, reverse=True):
        text = text.replace(n, " ")
    text = re.sub(r"\b([NSEW])\.(?:([NSEW])\.)?", lambda m: m.group(1) + (m.group(2) or ""), text)
    return [direction_index(m.group("word") or m.group("abbr")) for m in DIRECTION_RE.finditer(text)]


def test_family_names_cover_the_brief():
    assert len(FAMILY_NAMES) >= 10
    assert REQUIRED <= set(FAMILY_NAMES)


def test_generation_is_deterministic_per_seed(world):
    a = [t.to_json() for t in generate_ordinary(world, 24, seed=7)]
    b = [t.to_json() for t in generate_ordinary(world, 24, seed=7)]
    c = [t.to_json() for t in generate_ordinary(world, 24, seed=8)]
    assert a == b
    assert a != c


def test_shipped_files_are_what_the_generator_writes(world, shipped):
    dev = generate_ordinary(world, 100, seed=101, prefix="d")
    test = generate_ordinary(world, 100, seed=202, prefix="h", exclude_goals={t.goal_name for t in dev})
    for path, tasks in ((DEV, dev), (TEST, test)):
        assert json.loads(path.read_text(encoding="utf-8")) == dump_tasks(tasks)


def test_the_second_dev_file_is_what_the_generator_writes_and_shares_no_goal(world, shipped):
    """dev2: 200 more tasks to design on, drawn apart from dev and test (no goal of either)."""
    taken = {t.goal_name for tasks in shipped.values() for t in tasks}
    dev2 = generate_ordinary(world, 200, seed=303, prefix="e", exclude_goals=taken)
    assert json.loads(DEV2.read_text(encoding="utf-8")) == dump_tasks(dev2)
    assert not {t.goal_name for t in dev2} & taken and len({t.goal_name for t in dev2}) == 200
    counts = Counter(t.extra["family"] for t in dev2)
    assert set(counts) == set(FAMILY_NAMES) and min(counts.values()) >= 14, counts


def test_files_load_resolve_and_every_family_appears(world, shipped):
    for name, tasks in shipped.items():
        assert len(tasks) == 100, name
        assert all(t.id.startswith("d" if "dev" in name else "h") for t in tasks)
        counts = Counter(t.extra["family"] for t in tasks)
        assert set(counts) == set(FAMILY_NAMES) and min(counts.values()) >= 7, (name, counts)
        assert len({t.goal_name for t in tasks}) == 100, "a goal is repeated"
        resolved = resolve_all("helsinki", tasks, world)
        for rt in resolved:
            assert rt.start_node == rt.task.extra["start.node"]
            assert int(world.graph.hops_from(rt.start_node)[rt.goal_node]) == rt.min_steps


def test_dev_and_test_goals_are_disjoint(shipped):
    dev, test = ({t.goal_name for t in tasks} for tasks in (shipped[DEV.name], shipped[TEST.name]))
    assert not dev & test


def test_labels_resolve_near_the_goal_with_true_landmarks(world, all_tasks):
    pos = {lm.name: lm.centroid for lm in world.landmarks}
    for t in all_tasks:
        goal = _xy(world, t.goal_lat, t.goal_lon)
        est = _resolve(t.extra["relations"], pos)
        assert np.hypot(*(est - goal)) <= 160.0, (t.id, t.description)
        assert t.extra["landmarks"] == list(dict.fromkeys(n for r in t.extra["relations"] for n in r["landmarks"]))


def test_landmarks_starts_and_visibility(world, all_tasks):
    pos = {lm.name: lm.centroid for lm in world.landmarks}
    prominence = world.prominence()
    for t in all_tasks:
        goal = _xy(world, t.goal_lat, t.goal_lon)
        for name in t.extra["landmarks"]:
            assert 120.0 - 1.0 <= np.hypot(*(pos[name] - goal)) <= 600.0 + 1.0, (t.id, name)
            assert t.extra["visibility"][name] == prominence[name]
        assert np.hypot(*(_xy(world, t.start_lat, t.start_lon) - goal)) >= 500.0 - 1.0, t.id
        assert HOP_BAND[0] <= t.min_steps <= HOP_BAND[1]
        assert t.step_limit == math.ceil(2.5 * t.min_steps)
        if t.extra["family"] != "lowercase":
            assert t.goal_name in t.description, t.id


def test_each_relation_says_what_the_text_says(world, all_tasks):
    """Directions written in words or abbreviations are the label's (the inverse for `subject`)."""
    names = [lm.name for lm in world.landmarks]
    for t in all_tasks:
        fam, rels = t.extra["family"], t.extra["relations"]
        if fam in ("between", "lowercase"):
            continue
        written = _directions(t.description, names + [t.goal_name])
        want = [(r["direction"] + 4) % 8 if fam == "subject" else r["direction"] for r in rels]
        assert written == want, (t.id, t.description, rels)
        for r in rels:
            if r["distance"] is not None and fam not in ("number_words", "units"):
                assert re.search(rf"(?<!\d){r['distance']}\s?(?:m|metres|meters)\b", t.description), t.description


def test_subject_puts_the_landmark_first_and_states_the_inverse(world, all_tasks):
    subj = [t for t in all_tasks if t.extra["family"] == "subject"]
    assert subj
    for t in subj:
        (rel,) = t.extra["relations"]
        lm = rel["landmarks"][0]
        assert t.description.index(lm) < t.description.index(t.goal_name), t.description
        assert _directions(t.description, [lm, t.goal_name]) == [(rel["direction"] + 4) % 8]


def test_subject_in_a_known_geometry():
    # The goal is north of Postitalo: the text says Postitalo is south of the goal.
    truth = (TruthRelation("offset", ("Postitalo",), 0, 412.0),)
    p = phrase("subject", truth, "Café X", "cafe", np.random.default_rng(1))
    assert p.relations[0].label() == {"kind": "offset", "landmarks": ["Postitalo"], "direction": 0, "distance": 400,
                                      "bearing": None}
    assert p.text.index("Postitalo") < p.text.index("Café X") and "south" in p.text and "north" not in p.text


def test_lowercase_has_no_upper_case_and_no_diacritics(all_tasks):
    low = [t for t in all_tasks if t.extra["family"] == "lowercase"]
    assert low
    for t in low:
        text = t.description
        assert text == text.lower(), text
        assert unicodedata.normalize("NFKD", text) == text and not any(unicodedata.combining(c) for c in text)
        assert not set(text) & set("øæœß"), text
        assert plain_lower(t.goal_name) in text
        assert all(plain_lower(n) in text for n in t.extra["landmarks"])
    assert plain_lower("Pääesikunta") == "paaesikunta" and plain_lower("Ateneum") == "ateneum"


def test_between_only_where_the_goal_is_near_the_midpoint(world, all_tasks):
    pos = {lm.name: lm.centroid for lm in world.landmarks}
    for t in all_tasks:
        if t.extra["family"] != "between":
            continue
        a, b = (pos[n] for n in t.extra["relations"][0]["landmarks"])
        span = np.hypot(*(a - b))
        assert span >= 120.0
        assert np.hypot(*((a + b) / 2 - _xy(world, t.goal_lat, t.goal_lon))) <= 0.25 * span + 1.0


def test_number_words():
    assert number_words(550) == "five hundred and fifty"
    assert number_words(400) == "four hundred"
    assert number_words(1200) == "one thousand two hundred"
    rng = np.random.default_rng(0)
    forms = {distance_in_words(500, rng) for _ in range(60)}
    assert any("half a kilomet" in f for f in forms) and any("five hundred met" in f for f in forms)
    assert any(f.startswith("one point two kilomet") for f in {distance_in_words(1200, rng) for _ in range(60)})
    for d in np.linspace(120.0, 1600.0, 300):
        w = words_round(float(d), rng)
        assert abs(w - d) <= 0.05 * d or w % 10 == 0 and abs(w - d) <= 5.0


def test_labelled_descriptions_are_balanced_and_deterministic(world):
    from sim.benchmark.instruction_set import labelled_descriptions

    items = labelled_descriptions(world, n=420, seed=5)
    assert len(items) == 420 and len({i["id"] for i in items}) == 420
    counts = Counter(i["family"] for i in items)
    assert set(counts) == set(FAMILY_NAMES) and min(counts.values()) >= 35
    assert all(set(i) == {"id", "family", "text", "goal_name", "relations"} for i in items)
    assert all(i["goal_name"] in i["text"] for i in items if i["family"] != "lowercase")
    small = labelled_descriptions(world, n=24, seed=5, families=["subject", "ray"])
    assert small == labelled_descriptions(world, n=24, seed=5, families=["subject", "ray"])
    assert Counter(i["family"] for i in small) == {"subject": 12, "ray": 12}


def test_cli_draws_ordinary_tasks_and_excludes_goals(world, tmp_path, shipped):
    from sim.nav_bench import main

    out = tmp_path / "o.json"
    assert main(["--generate", "12", "--draw", "ordinary", "--seed", "3", "--prefix", "x",
                 "--exclude-tasks", str(DEV), "--exclude-tasks", str(TEST), "--write-tasks", str(out)]) == 0
    _, tasks = load_tasks(out)
    assert [t.id for t in tasks] == [f"x{i:03d}" for i in range(1, 13)]
    assert not {t.goal_name for t in tasks} & {t.goal_name for t in shipped[DEV.name] + shipped[TEST.name]}
    assert main(["--generate", "5", "--exclude-tasks", str(DEV), "--write-tasks", str(out)]) == 2
    assert main(["--generate", "5", "--draw", "ordinary"]) == 2
