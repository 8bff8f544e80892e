"""`aerie bench nav --ablation`: one switch off per run, the list derived from AgentConfig, a real run's JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from onboard.agent.settings import AgentConfig
from sim import nav_bench
from sim.benchmark import ablation
from tests.sim._world_fixture import helsinki

DEV = Path(__file__).resolve().parents[2] / "bench" / "tasks" / "helsinki_ordinary_dev.json"


@dataclasses.dataclass(frozen=True)
class _Extended(AgentConfig):
    """AgentConfig as it will be once another mechanism is added (AgentConfig itself is left alone)."""

    use_dummy_mechanism: bool = True
    dummy_weight: float = 1.0
    use_dummy_count: int = 3  # starts with use_ but is no switch


def _diff(a, b) -> set[str]:
    return {f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)}


def test_mechanisms_are_the_boolean_use_fields_and_new_ones_are_picked_up():
    fields = {f.name for f in dataclasses.fields(AgentConfig)}
    expected = [f.name for f in dataclasses.fields(AgentConfig)
                if f.name.startswith("use_") and isinstance(f.default, bool)]
    assert ablation.switches() == expected and "use_reflection" in expected
    assert {m.switch for m in ablation.mechanisms()} == set(expected)
    assert all(sw in fields for sw in ablation.KNOWN)            # the table names no switch that is gone
    ext = {m.switch: m for m in ablation.mechanisms(_Extended)}
    assert set(ext) == set(expected) | {"use_dummy_mechanism"}
    assert ext["use_dummy_mechanism"].name == "use_dummy_mechanism"
    assert ext["use_dummy_mechanism"].applies_to == ablation.PLANNERS and not ext["use_dummy_mechanism"].needs


def test_every_run_turns_exactly_one_switch_off():
    base = _Extended()
    runs = ablation.ablation_configs(base, ablation.mechanisms(_Extended))
    assert runs[0] == (None, base)
    assert [m.switch for m, _ in runs[1:]] == [m.switch for m in ablation.mechanisms(_Extended)]
    for m, cfg in runs[1:]:
        assert _diff(base, cfg) == {m.switch} and getattr(cfg, m.switch) is False


def test_harness_gives_each_run_its_config_and_skips_what_cannot_act():
    seen: list[tuple[str, AgentConfig]] = []

    def run(tasks, cfg, label):
        seen.append((label, cfg))
        ok = cfg.use_look_up  # a run "fails" every task without look-ups: the numbers must follow the config
        return [{"agent": "x", "success": ok, "spl": 0.5 if ok else 0.0, "steps": 10, "min_steps": 5,
                 "steps_over_min": 2.0, "ababa": 0, "stuck": 0, "unique_ratio": 1.0, "wall_s": 0.1,
                 "model_calls": 4, "model_s": 16.0,
                 "llm_calls": [{"source": "llm", "call_s": 8.0}, {"source": "llm-fallback", "call_s": 0.0}] * 2,
                 }] * len(tasks)

    res = ablation.run_ablation(None, [1, 2], "geometric", run=run, progress=False)
    base = seen[0][1]
    assert seen[0][0] == "baseline" and base.planner == "geometric"
    for label, cfg in seen[1:]:
        assert _diff(base, cfg) == {label}
    run_switches = {r["switch"] for r in res["mechanisms"]}
    skipped = {r["switch"]: r["why"] for r in res["not_applicable"]}
    assert "use_replan" in skipped and "llm" in skipped["use_replan"]          # llm-only
    assert "use_map" in skipped and "--map" in skipped["use_map"]
    assert "use_persistent_reflections" in skipped and "llm" in skipped["use_persistent_reflections"]
    assert run_switches == set(ablation.switches()) - set(skipped)
    look = next(r for r in res["mechanisms"] if r["switch"] == "use_look_up")
    assert (look["sr_on"], look["sr_off"], look["spl_on"], look["spl_off"]) == (1.0, 0.0, 0.5, 0.0)
    assert look["model_calls_per_mission"] == 4 and look["s_per_call"] == 4.0
    assert look["model_answered_per_mission"] == 2 and look["s_per_answered_call"] == 8.0  # fallbacks left out
    plan = next(r for r in res["mechanisms"] if r["switch"] == "use_plan")
    assert plan["sr_off"] == plan["sr_on"] == 1.0

    seen.clear()
    partials: list[dict] = []
    final = ablation.run_ablation(None, [1], "llm", run=run, progress=False,
                                  only=["use_replan", "use_look_up", "use_persistent_reflections"],
                                  on_result=partials.append)
    assert [(r["switch"], "--learn" in r["why"]) for r in final["not_applicable"]] == [
        ("use_persistent_reflections", True)]                    # a memory switch needs --learn
    assert [label for label, _ in seen] == ["baseline", "use_replan", "use_look_up"]
    assert [len(p["mechanisms"]) for p in partials] == [0, 1] and not any(p["complete"] for p in partials)
    assert final["complete"] and [m["switch"] for m in final["mechanisms"]] == ["use_replan", "use_look_up"]
    assert seen[0][1].planner == "llm"

    seen.clear()
    res = ablation.run_ablation(None, [1], "geometric", run=run, progress=False, config_cls=_Extended,
                                only=["use_dummy_mechanism"])
    assert [label for label, _ in seen] == ["baseline", "use_dummy_mechanism"]
    assert _diff(seen[0][1], seen[1][1]) == {"use_dummy_mechanism"}
    assert res["mechanisms"][0]["name"] == "use_dummy_mechanism"


def test_tiny_real_run_writes_the_json(tmp_path):
    helsinki()
    out = tmp_path / "abl.json"
    rc = nav_bench.main(["--ablation", "--agent", "geometric", "--tasks", str(DEV), "--limit", "2",
                         "--mechanisms", "use_reflection,use_look_up,use_replan", "--no-progress",
                         "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["split"] == "dev" and data["planner"] == "geometric" and data["tasks"] == str(DEV)
    assert data["baseline"]["n"] == 2 and (data["sr"], data["spl"]) == (data["baseline"]["sr"], data["baseline"]["spl"])
    assert "--ablation" in data["command"] and data["complete"] is True
    assert [m["switch"] for m in data["mechanisms"]] == ["use_reflection", "use_look_up"]
    for m in data["mechanisms"]:
        for key in ("name", "planner", "applies_to", "sr_on", "sr_off", "spl_on", "spl_off", "n"):
            assert key in m
        assert 0.0 <= m["spl_off"] <= m["sr_off"] <= 1.0 and m["n"] == 2
    assert [m["switch"] for m in data["not_applicable"]] == ["use_replan"]


def test_cli_rejects_unknown_mechanism_and_other_planners(capsys):
    helsinki()
    assert nav_bench.main(["--ablation", "--agent", "geometric", "--tasks", str(DEV), "--limit", "1",
                           "--mechanisms", "use_nothing", "--no-progress"]) == 2
    assert "use_nothing" in capsys.readouterr().err
    assert nav_bench.main(["--ablation", "--agent", "greedy", "--tasks", str(DEV), "--limit", "1",
                           "--no-progress"]) == 2
    assert nav_bench.main(["--mechanisms", "use_plan", "--no-progress"]) == 2


def test_with_learn_each_run_flies_on_a_memory_file_carried_between_passes(tmp_path):
    helsinki()
    out = tmp_path / "abl.json"
    rc = nav_bench.main(["--ablation", "--learn", "--learn-dir", str(tmp_path / "mem"), "--agent", "geometric",
                         "--tasks", str(DEV), "--limit", "2", "--mechanisms", "use_reflection",
                         "--no-progress", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["memory"] == "learn" and [m["switch"] for m in data["mechanisms"]] == ["use_reflection"]
    for label in ("baseline", "use_reflection"):   # each run has its own memory file, filled by pass 1
        assert (tmp_path / "mem" / label / "vehicle.sqlite").is_file()
        assert any((tmp_path / "mem" / label / "bundles").iterdir())


def test_a_mission_waits_for_the_model_worker_to_be_idle():
    import threading

    from onboard.inference.inference_worker import ThreadWorker

    class Model:
        worker = ThreadWorker("planner-test", 60.0)

    gate = threading.Event()
    Model.worker.submit(gate.wait)                      # a call still running (a mission analysis, a late plan)
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (ablation.wait_until_idle(Model, poll_s=0.01), done.set()))
    waiter.start()
    assert not done.wait(0.3)                           # still waiting while the call runs
    gate.set()
    assert done.wait(60)                                # and goes on once the worker is idle
    waiter.join()
    Model.worker.close()
    assert ablation.wait_until_idle(None) == 0.0        # the geometric planner has no model: no wait


def test_camera_runs_decide_from_the_camera_and_refuse_learning():
    """--perception camera reaches every ablation run (a mechanism judged on what the camera reads)."""
    import pytest

    from onboard.config import load_config
    from sim.benchmark.camera_perception import CameraBench
    from sim.benchmark.tasks import load_tasks, resolve_all
    from tests.perception.conftest import _reader
    from tests.sim.test_look_low import _views

    w = helsinki()
    city, tasks = load_tasks(DEV)
    short = min(resolve_all(city, tasks, w), key=lambda rt: rt.step_limit)
    bench = CameraBench(w, _reader(), _views(load_config(None).supervisor, 1))
    with pytest.raises(ValueError, match="camera"):
        ablation.run_ablation(w, [short], "geometric", "camera", only=["use_reflection"], learn=True,
                              camera_bench=bench, progress=False)
    res = ablation.run_ablation(w, [short], "geometric", "camera", only=["use_reflection"], camera_bench=bench,
                                progress=False)
    assert res["perception"] == "camera" and [m["switch"] for m in res["mechanisms"]] == ["use_reflection"]
    assert res["baseline"]["n"] == 1
    # the camera's reading figures are in the runs' records: the look-around ran, not the oracle
    assert bench.memo.reads, "no frame was read"
