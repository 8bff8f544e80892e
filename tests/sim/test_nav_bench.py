"""`aerie bench nav`: runs baselines on a task file and writes the results JSON."""

from __future__ import annotations

import json

from sim import nav_bench
from tests.sim._world_fixture import PUBLIC, helsinki


def test_cli_writes_results(tmp_path, capsys):
    helsinki()
    out = tmp_path / "r.json"
    rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "greedy", "--perception", "prep", "--limit", "5",
                         "--json", str(out), "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    assert 0.0 <= data["sr"] <= 1.0 and 0.0 <= data["spl"] <= data["sr"]
    assert data["episodes"] == 5 and len(data["records"]) == 5
    rec = data["records"][0]
    for key in ("task", "success", "spl", "steps", "min_steps", "steps_over_min", "ababa", "stuck",
                "unique_ratio", "wall_ms_per_step", "trajectory"):
        assert key in rec


def test_skip_and_limit_take_a_slice_of_the_split(tmp_path):
    from sim.benchmark.tasks import load_tasks

    helsinki()
    out = tmp_path / "r.json"
    assert nav_bench.main(["--tasks", str(PUBLIC), "--agent", "greedy", "--skip", "3", "--limit", "2",
                           "--json", str(out), "--no-progress"]) == 0
    ids = [t.id for t in load_tasks(PUBLIC)[1]]
    assert [r["task"] for r in json.loads(out.read_text())["records"]] == ids[3:5]


def test_cli_rejects_malformed_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "city": "helsinki", "tasks": [{"id": "x9", "start": {"lat": 1}}]}))
    assert nav_bench.main(["--tasks", str(bad), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "task 'x9'" in err and "'lon'" in err


def test_ablation_and_plain_runs_refuse_a_stale_share_outside_0_1(tmp_path, capsys):
    """Both paths build the map provider in one place (they once had a copy each)."""
    helsinki()
    for extra in ([], ["--ablation", "--mechanisms", "none"]):
        rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "geometric", "--limit", "1", "--map",
                             "--map-stale", "1.5", "--no-progress", *extra])
        assert rc == 2
        assert "--map-stale must be a fraction in [0, 1]" in capsys.readouterr().err


def test_unreadable_map_file_is_named_and_refused(tmp_path, capsys):
    helsinki()
    bad = tmp_path / "map.json"
    bad.write_text("{ not json")
    rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "geometric", "--limit", "1", "--map", str(bad),
                         "--ablation", "--mechanisms", "none", "--no-progress"])
    assert rc == 2
    assert "map.json" in capsys.readouterr().err


def test_random_and_greedy_are_reproducible():
    from sim.benchmark.runner import run_tasks
    from sim.benchmark.tasks import load_tasks, resolve_all

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    rts = resolve_all(city, tasks[:4], w)
    for agent in ("random", "greedy"):
        a = run_tasks(w, rts, agent, "poor", seed=3, progress=False)
        b = run_tasks(w, rts, agent, "poor", seed=3, progress=False)
        assert [e["trajectory"] for e in a["records"]] == [e["trajectory"] for e in b["records"]]


def test_memory_reference_beats_memoryless_greedy():
    from sim.benchmark.runner import run_tasks
    from sim.benchmark.tasks import load_tasks, resolve_all

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    rts = resolve_all(city, tasks[:12], w)
    memory = run_tasks(w, rts, "memory", "perfect", progress=False)
    greedy = run_tasks(w, rts, "greedy", "perfect", progress=False)
    assert memory["sr"] > greedy["sr"]
    assert memory["summary"]["ababa"] < greedy["summary"]["ababa"]


def test_observation_image_renders_on_demand():
    from sim.benchmark.agent_api import Action
    from sim.benchmark.runner import run_tasks
    from sim.benchmark.tasks import load_tasks, resolve_all

    class Looker:
        name = "looker"
        shapes = []

        def reset(self, description, seed):
            pass

        def act(self, obs):
            Looker.shapes.append(obs.image().shape)
            return Action.arrive()

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    result = run_tasks(w, resolve_all(city, tasks[:1], w), Looker, "perfect", progress=False)
    assert result["agent"] == "looker"
    assert Looker.shapes and Looker.shapes[0][2] == 3


def test_standard_suite_writes_report_json_and_plots(tmp_path):
    from sim.benchmark.suite import run_standard_suite
    from sim.benchmark.tasks import load_tasks, resolve_all

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    out = run_standard_suite(w, resolve_all(city, tasks[:3], w), tmp_path / "res", tasks_path=str(PUBLIC),
                             progress=False)
    report = (out / "report.md").read_text()
    for agent in ("random", "greedy"):
        for preset in ("perfect", "prep", "poor"):
            assert f"| {agent} | {preset} |" in report
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert len(runs) == 9 and all("sr" in r and "spl" in r for r in runs)
    for png in ("sr_spl.png", "success_vs_length.png", "task_lengths.png", "trajectory.png", "view_oblique.png"):
        assert (out / png).stat().st_size > 5000


def test_episode_folders_follow_the_results_layout(tmp_path):
    from sim.benchmark.episode_files import write_episode
    from sim.benchmark.runner import run_tasks
    from sim.benchmark.tasks import load_tasks, resolve_all

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    rec = run_tasks(w, resolve_all(city, tasks[:1], w), "greedy", "perfect", progress=False)["records"][0]
    rec["trajectory"] = rec["trajectory"][:3]
    folder = write_episode(w, rec, tmp_path, "greedy-perfect")
    frames = json.loads((folder / "trajectory.json").read_text())
    assert len(frames) == 3 and {"lat", "lon", "alt_m", "heading_deg", "node"} <= set(frames[0])
    assert json.loads((folder / "episode_summary.json").read_text())["task"] == "t001"
    assert sorted(p.name for p in (folder / "rgb_images").iterdir()) == [
        "rgb_timestep_0000.png", "rgb_timestep_0001.png", "rgb_timestep_0002.png"]
    assert not (folder / "semantic_images").exists()  # the greedy baseline keeps no maps

    # Aerie's agent draws its two maps at every step while the episode runs (`--episode-dir`).
    from contract.results import map_file_names

    rec = run_tasks(w, resolve_all(city, tasks[:1], w), "geometric", "perfect", progress=False,
                    maps_dir=tmp_path)["records"][0]
    maps = tmp_path / "geometric-perfect_t001" / "semantic_images"
    assert sorted(p.name for p in maps.iterdir()) == sorted(
        n for i in range(rec["steps"] + 1) for n in map_file_names("t001", i))


def test_the_vlm_agent_reports_calls_per_mission_and_seconds_per_call(tmp_path, capsys):
    """`aerie bench nav --agent vlm`: every navigate and search step asks the VLM (the test model when config.yaml
    names none, said so), and the run reports what that cost."""
    helsinki()
    out = tmp_path / "r.json"
    assert nav_bench.main(["--tasks", str(PUBLIC), "--agent", "vlm", "--limit", "1", "--json", str(out),
                           "--no-progress"]) == 0
    data = json.loads(out.read_text())
    vlm, rec = data["vlm"], data["records"][0]
    assert vlm["model"] == "tiny-vlm" and vlm["random_weights"] and "cost, not skill" in vlm["note"]
    assert vlm["calls_per_episode"] == vlm["answered"] == vlm["asked"] >= 1 and vlm["s_per_call"] > 0
    assert vlm["adopted"] + vlm["kept"] + vlm["stale"] + vlm["fallbacks"] == vlm["answered"]
    assert rec["vlm_planner"]["step_sources"].get("vlm", 0) == vlm["adopted"]
    assert "calls/ep" in capsys.readouterr().out


def test_camera_runs_read_the_simulators_stream_and_say_where_failures_ended(tmp_path, capsys):
    """`--perception camera` takes its frames from the simulator's video stream by default."""
    helsinki()
    cfg = tmp_path / "small_camera.yaml"
    cfg.write_text("supervisor:\n  camera_width: 480\n  camera_height: 270\n  camera_reading:\n    views: 2\n")
    out = tmp_path / "r.json"
    rc = nav_bench.main(["--tasks", str(PUBLIC), "--agent", "greedy", "--perception", "camera", "--config", str(cfg),
                         "--limit", "1", "--json", str(out), "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    cam = data["camera"]
    assert cam["frames"] == "stream" and cam["stream"]["views_taken"] == cam["views_read"] > 0
    assert cam["stream"]["mispaired"] == 0 and cam["stream"]["no_frame"] == 0
    assert sum(cam["failure_ends"]["counts"].values()) == 1 - data["records"][0]["success"]
    assert "frames: stream" in capsys.readouterr().out


def test_parts_of_a_run_merge_into_the_whole_run(tmp_path, capsys):
    helsinki()
    base = ["--tasks", str(PUBLIC), "--agent", "greedy", "--perception", "prep", "--no-progress"]
    runs = {"whole": ["--limit", "4"], "a": ["--limit", "2"], "b": ["--skip", "2", "--limit", "2"]}
    for name, extra in runs.items():
        assert nav_bench.main(base + extra + ["--json", str(tmp_path / f"{name}.json")]) == 0
    merged = tmp_path / "merged.json"
    assert nav_bench.main(["--merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json", str(merged)]) == 0
    whole, got = (json.loads((tmp_path / n).read_text()) for n in ("whole.json", "merged.json"))
    assert [r["task"] for r in got["records"]] == [r["task"] for r in whole["records"]]
    assert got["sr"] == whole["sr"] and got["spl"] == whole["spl"] and got["episodes"] == 4
    assert [r["trajectory"] for r in got["records"]] == [r["trajectory"] for r in whole["records"]]
    # a part twice, or parts of two runs, are refused
    assert nav_bench.main(["--merge", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
    other = tmp_path / "other.json"
    assert nav_bench.main(base[:3] + ["random"] + base[4:] + ["--limit", "2", "--skip", "2", "--json", str(other)]) == 0
    assert nav_bench.main(["--merge", str(tmp_path / "a.json"), str(other)]) == 2
    assert "differ in 'agent'" in capsys.readouterr().err
