"""`aerie bench nav --map`: the benchmark's onboard map, its goal removal and its stale share."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim.benchmark.bench_map import STALE_SHIFT_M, BenchMap, BenchMapError, same_name, task_map


def _map(n: int = 50) -> BenchMap:
    rng = np.random.default_rng(0)
    landmarks = {f"Building {i:02d}": rng.uniform(-1000, 1000, 2) for i in range(n)}
    landmarks["Café Engel"] = np.array([10.0, 20.0])
    xy = np.array([[0.0, 0.0], [50.0, 0.0], [100.0, 0.0]])
    return BenchMap(landmarks, xy, ((1,), (0, 2), (1,)))


def test_goal_named_landmarks_are_removed_and_positions_are_in_the_take_off_frame():
    bm = _map()
    tm = task_map(bm, "cafe  engel", np.array([50.0, 0.0]))
    assert tm.removed_goal_named == ("Café Engel",)
    assert "Café Engel" not in tm.knowledge.landmarks and len(tm.knowledge.landmarks) == 50
    assert np.allclose(tm.knowledge.landmarks["Building 03"], bm.landmarks["Building 03"] - [50.0, 0.0])
    assert np.allclose(tm.knowledge.corridors.xy[0], [-50.0, 0.0])
    assert same_name("Cafe Engel", "CAFÉ ENGEL") and not same_name("Engel", "Café Engel")


def test_stale_share_is_reproducible_per_seed_and_task_and_displaces_or_deletes_the_stated_share():
    bm = _map(80)
    origin = np.zeros(2)
    a = task_map(bm, "Nobody", origin, stale=0.2, seed=3, task_id="d001")
    b = task_map(bm, "Nobody", origin, stale=0.2, seed=3, task_id="d001")
    assert a.displaced == b.displaced and a.deleted == b.deleted
    assert {n: list(p) for n, p in a.knowledge.landmarks.items()} == \
        {n: list(p) for n, p in b.knowledge.landmarks.items()}
    other_task = task_map(bm, "Nobody", origin, stale=0.2, seed=3, task_id="d002")
    other_seed = task_map(bm, "Nobody", origin, stale=0.2, seed=4, task_id="d001")
    assert (other_task.displaced, other_task.deleted) != (a.displaced, a.deleted)
    assert (other_seed.displaced, other_seed.deleted) != (a.displaced, a.deleted)
    stale = round(0.2 * 81)
    assert len(a.displaced) + len(a.deleted) == stale and abs(len(a.displaced) - len(a.deleted)) <= 1
    assert len(a.knowledge.landmarks) == 81 - len(a.deleted)
    for name, d in a.displaced.items():
        moved = float(np.hypot(*(a.knowledge.landmarks[name] - bm.landmarks[name])))
        assert STALE_SHIFT_M[0] <= moved <= STALE_SHIFT_M[1] and moved == pytest.approx(d)
    untouched = set(bm.landmarks) - set(a.displaced) - set(a.deleted)
    assert all(np.allclose(a.knowledge.landmarks[n], bm.landmarks[n]) for n in untouched)


def test_stale_draw_is_uniform_over_landmarks():
    bm = _map(20)
    hits = {n: 0 for n in bm.landmarks}
    for seed in range(400):
        tm = task_map(bm, "Nobody", np.zeros(2), stale=0.25, seed=seed, task_id="t")
        for n in (*tm.displaced, *tm.deleted):
            hits[n] += 1
    share = np.array(list(hits.values())) / 400
    assert share.min() > 0.15 and share.max() < 0.35  # every landmark (a task's own included) about 25 %


def test_stale_fraction_outside_zero_one_is_refused():
    with pytest.raises(BenchMapError, match="fraction"):
        task_map(_map(), "Nobody", np.zeros(2), stale=1.5)


def test_cli_map_writes_sr_spl_and_map_into_the_json(tmp_path):
    from sim import nav_bench
    from tests.sim._world_fixture import PUBLIC, helsinki

    helsinki()
    out = tmp_path / "r.json"
    rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "geometric", "--map", "--map-stale", "0.2",
                         "--limit", "3", "--json", str(out), "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    assert list(data)[:5] == ["agent", "perception", "seed", "sr", "spl"]
    assert 0.0 <= data["spl"] <= data["sr"] <= 1.0
    assert data["map"] == "world" and data["map_stale"] == 0.2
    rec = data["records"][0]
    assert rec["map"]["used_by_agent"] and len(rec["map"]["displaced"]) + len(rec["map"]["deleted"]) == 16


def test_cli_map_file_and_stale_without_map_are_refused_clearly(tmp_path, capsys):
    from sim import nav_bench
    from tests.sim._world_fixture import PUBLIC, helsinki

    helsinki()
    assert nav_bench.main(["--tasks", str(PUBLIC), "--map-stale", "0.2", "--no-progress"]) == 2
    assert "--map-stale needs --map" in capsys.readouterr().err
    bad = tmp_path / "h.aeriemap"
    bad.write_bytes(b"not a map")
    assert nav_bench.main(["--tasks", str(PUBLIC), "--map", str(bad), "--no-progress"]) == 2
    assert "h.aeriemap" in capsys.readouterr().err


def test_a_map_file_of_the_same_extract_is_the_world_map(tmp_path):
    from onboard.map.map_file import save_map
    from sim.benchmark.bench_map import load_map_file, world_map
    from tests.sim._world_fixture import helsinki

    w = helsinki()
    path = save_map(w.map, tmp_path / "h.aeriemap")
    from_file, from_world = load_map_file(str(path), w), world_map(w)
    assert set(from_file.landmarks) == set(from_world.landmarks)
    assert max(float(np.hypot(*(from_file.landmarks[n] - from_world.landmarks[n]))) for n in from_world.landmarks) < 1e-3
    assert np.abs(from_file.corridor_xy - from_world.corridor_xy).max() < 1e-3
    assert from_file.corridor_adj == from_world.corridor_adj and from_file.source == str(path)


def test_baselines_ignore_the_map():
    from sim.benchmark.bench_map import MapProvider, world_map
    from sim.benchmark.runner import run_tasks
    from sim.benchmark.tasks import load_tasks, resolve_all
    from tests.sim._world_fixture import PUBLIC, helsinki

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    rts = resolve_all(city, tasks[:2], w)
    plain = run_tasks(w, rts, "greedy", "perfect", progress=False)
    mapped = run_tasks(w, rts, "greedy", "perfect", progress=False, map_provider=MapProvider(world_map(w), w))
    assert [r["trajectory"] for r in plain["records"]] == [r["trajectory"] for r in mapped["records"]]
    assert not mapped["records"][0]["map"]["used_by_agent"]
