"""`aerie bench instructions`: how right each reader reads descriptions, family by family, and how fast.

    aerie bench instructions --json out.json              # the test split: reported, never tuned on
    aerie bench instructions --split dev --show-wrong     # the dev split: where the rules were designed
    aerie bench instructions --split hand                 # 150 written by hand, never used to design a rule
    aerie bench instructions --split hand-dev --show-wrong  # 150 more by another hand: where hand-style rules are designed
    aerie bench instructions --split field-dev --show-wrong  # the field families (pilots, SAR, work orders, legs, feet):
                                                              # dev side, rules may be designed on them
    aerie bench instructions --split field-hand              # the field families written by hand (dev side)

A relation is right when its landmark, its direction and its distance (within
10 %; none where the label has none) match the generator's truth; where the
label states a bearing in degrees (written in the text, or legs summed), the
reading's `bearing_deg` must be within 3 degrees of it instead of the 8-point
direction; a
description is right when all its relations are and no other is read. Three
readers: the parser alone, the model alone (SmolLM2 under the text's schema,
always asked), and the combined reader (the model only where the parser cannot
settle). Times are per description; the model's with its system prompt's
evaluated prefix reused across calls, as on the vehicle. `--threads` lists the
llama.cpp thread counts to time (the first 40 descriptions each), so the
default is chosen by measurement.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from contract.results import write_json

SPLIT_SEEDS = {"dev": 303, "test": 404, "field-dev": 505}
# Splits drawn from other phrasing families than the original 12 (`phrasing.FAMILY_NAMES`, the default).
SPLIT_FAMILIES = {"field-dev": "field"}
# Written and labelled by hand, independently of the reader and the generator; reported, never tuned on.
HAND_FILE = Path(__file__).resolve().parent.parent / "bench" / "tasks" / "instructions_hand.json"
# Written by another hand, without sight of the reader or of HAND_FILE: the hand-style rules are designed here.
HAND_DEV_FILE = HAND_FILE.with_name("instructions_hand_dev.json")
# The field families (sim/benchmark/field_phrasing.py) written by hand: dev side, reading rules are designed here.
FIELD_HAND_FILE = HAND_FILE.with_name("instructions_field_hand.json")
HAND_FILES = {"hand": HAND_FILE, "hand-dev": HAND_DEV_FILE, "field-hand": FIELD_HAND_FILE}
DISTANCE_TOLERANCE = 0.10
BEARING_TOLERANCE_DEG = 3.0


def bearing_gap(a: float, b: float) -> float:
    """Degrees between two bearings, 0..180 (wrapping at 360)."""
    return abs((a - b + 180.0) % 360.0 - 180.0)


def relation_right(read, label: dict) -> bool:
    if read.kind != label["kind"] or read.landmarks != tuple(label["landmarks"]):
        return False
    if read.kind == "between":
        return True
    want = label.get("bearing")
    if want is not None:  # a bearing in degrees was stated: the reading must keep it, not round it to 8 sectors
        got = getattr(read, "bearing_deg", None)
        if got is None or bearing_gap(float(got), float(want)) > BEARING_TOLERANCE_DEG:
            return False
    elif read.direction != label["direction"]:
        return False
    if label["distance"] is None:
        return read.distance is None
    return read.distance is not None and abs(read.distance - label["distance"]) <= DISTANCE_TOLERANCE * label["distance"]


def reading_right(relations, labels: list[dict]) -> bool:
    if len(relations) != len(labels):
        return False
    remaining = list(labels)
    for r in relations:
        match = next((lab for lab in remaining if relation_right(r, lab)), None)
        if match is None:
            return False
        remaining.remove(match)
    return True


def _share(right: Counter, total: Counter) -> dict[str, float]:
    return {f: round(right[f] / total[f], 4) for f in sorted(total)}


def _p50_ms(seconds: list[float]) -> float | None:
    return round(1000 * statistics.median(seconds), 3) if seconds else None


def run(items: list[dict], gazetteer: list[str], generate=None, show_wrong: bool = False,
        aliases: dict[str, str] | None = None) -> dict:
    from onboard.agent.goal_description import parse_goal_description
    from onboard.agent.instruction_reader import TextFacts, model_reading, unsettled

    total, right = Counter(), {"parser": Counter(), "model": Counter(), "combined": Counter()}
    secs: dict[str, list[float]] = {"parser": [], "model": [], "combined": []}
    named, model_asked, model_taken = 0, 0, 0
    for it in items:
        fam, labels = it["family"], it["relations"]
        total[fam] += 1
        t0 = time.perf_counter()
        parsed = parse_goal_description(it["text"], gazetteer, aliases)
        facts = TextFacts.of(it["text"], gazetteer, aliases, parsed.goal_name)
        why = unsettled(parsed, facts)
        t_parse = time.perf_counter() - t0
        secs["parser"].append(t_parse)
        named += parsed.names_goal(it["goal_name"])
        right["parser"][fam] += reading_right(parsed.relations, labels)
        combined = parsed.relations
        t_combined = t_parse
        if generate is not None:
            rel, _err, s = model_reading(it["text"], gazetteer, generate, facts)
            secs["model"].append(s)
            right["model"][fam] += rel is not None and reading_right(rel, labels)
            if why and facts.landmarks and facts.directions:  # what the combined reader asks (model_reading)
                model_asked += 1
                t_combined += s
                if rel is not None:
                    combined, model_taken = rel, model_taken + 1
        secs["combined"].append(t_combined)
        ok = reading_right(combined, labels)
        right["combined"][fam] += ok
        if show_wrong and not ok:
            read = [(r.kind, r.landmarks, r.direction, r.distance, getattr(r, "bearing_deg", None)) for r in combined]
            want = [(lab["kind"], tuple(lab["landmarks"]), lab["direction"], lab["distance"], lab.get("bearing"))
                    for lab in labels]
            print(f"WRONG [{fam}] {it['text']!r}\n  read {read}\n  want {want}"
                  f"{'  (unsettled: ' + why + ')' if why else ''}")
    n = sum(total.values())
    out = {
        "descriptions": n, "families": len(total),
        "overall_accuracy": round(sum(right["combined"].values()) / n, 4),
        "family_accuracy": _share(right["combined"], total),
        "parser_overall_accuracy": round(sum(right["parser"].values()) / n, 4),
        "parser_family_accuracy": _share(right["parser"], total),
        "goal_named_share": round(named / n, 4),
        "p50_ms_parser": _p50_ms(secs["parser"]),
        "p50_ms_combined": _p50_ms(secs["combined"]),
        "model_asked_by_combined": model_asked, "model_taken_by_combined": model_taken,
    }
    if generate is not None:
        out |= {"model_overall_accuracy": round(sum(right["model"].values()) / n, 4),
                "model_family_accuracy": _share(right["model"], total),
                "p50_ms_model": _p50_ms(secs["model"]),
                "p90_ms_model": round(1000 * statistics.quantiles(secs["model"], n=10)[-1], 3)}
    return out


def thread_sweep(items: list[dict], gazetteer: list[str], cfg, threads: list[int], n: int = 40,
                 aliases: dict[str, str] | None = None) -> dict[str, float]:
    """p50 ms of the model call per llama.cpp thread count, on the first `n` descriptions."""
    from dataclasses import replace

    from onboard.agent.instruction_reader import model_reading
    from onboard.inference.llama_backend import open_llm

    out = {}
    for t in threads:
        model = open_llm(replace(cfg, n_threads=t, n_threads_batch=t))
        s = [model_reading(it["text"], gazetteer, model.generate_json, aliases=aliases)[2] for it in items[:n]]
        out[str(t)] = _p50_ms(s)
        del model
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie bench instructions", description=__doc__.split("\n\n")[0])
    p.add_argument("--split", choices=[*sorted(SPLIT_SEEDS), *HAND_FILES], default="test",
                   help="test (default): generated, only ever reported; dev: generated, where reading rules are "
                        "designed; hand: 150 written by hand, only ever reported; hand-dev: 150 written by another "
                        "hand, where rules for hand-written phrasings are designed; field-dev: generated from the "
                        "field families (pilot/ATC bearings, SAR briefings, work orders, legs, questions, "
                        "corrections, imperial units, references back), a dev (design) split; field-hand: the "
                        "field families written by hand, dev side, used to design reading rules")
    p.add_argument("-n", type=int, default=420, help="descriptions (balanced over the phrasing families)")
    p.add_argument("--no-model", action="store_true", help="parser only (no llama.cpp)")
    p.add_argument("--threads", default="", help="comma-separated llama.cpp thread counts to time, e.g. 1,2")
    p.add_argument("--show-wrong", action="store_true", help="print every description the combined reader gets wrong")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    from sim.benchmark.instruction_set import labelled_descriptions
    from sim.world.cache import load_world

    world = load_world(None, verbose=False)
    gazetteer, aliases = [lm.name for lm in world.landmarks], world.aliases()
    if args.split in HAND_FILES:
        doc = json.loads(HAND_FILES[args.split].read_text(encoding="utf-8"))
        items = [{**it, "family": it["style"]} for it in doc["items"]]
    else:
        families = None
        if SPLIT_FAMILIES.get(args.split) == "field":
            from sim.benchmark.field_phrasing import FIELD_FAMILY_NAMES

            families = FIELD_FAMILY_NAMES
        items = labelled_descriptions(world, n=args.n, seed=SPLIT_SEEDS[args.split], families=families)
    generate, cfg, load_s = None, None, None
    if not args.no_model:
        from onboard.config import load_config
        from onboard.inference.llama_backend import open_llm

        cfg = load_config().inference
        t0 = time.perf_counter()
        model = open_llm(cfg)
        load_s = round(time.perf_counter() - t0, 2)
        generate = model.generate_json
    result = {"split": args.split, "seed": SPLIT_SEEDS.get(args.split), **run(items, gazetteer, generate, args.show_wrong, aliases)}
    if cfg is not None:
        result |= {"llm_model": cfg.llm_model, "model_load_s": load_s, "n_threads": cfg.n_threads or "half the cores"}
        if args.threads:
            result["p50_ms_model_by_threads"] = thread_sweep(items, gazetteer, cfg,
                                                             [int(t) for t in args.threads.split(",") if t.strip()],
                                                             aliases=aliases)
    print(f"{args.split}: {result['descriptions']} descriptions, {result['families']} families; combined "
          f"{result['overall_accuracy']:.1%} (worst family {min(result['family_accuracy'].values()):.1%}), parser "
          f"{result['parser_overall_accuracy']:.1%}"
          + (f", model alone {result['model_overall_accuracy']:.1%}; model p50 {result['p50_ms_model']:.0f} ms"
             if generate else "")
          + f"; parser p50 {result['p50_ms_parser']:.2f} ms; model asked {result['model_asked_by_combined']}x")
    for fam, acc in result["family_accuracy"].items():
        print(f"  {fam:14s} combined {acc:6.1%}  parser {result['parser_family_accuracy'][fam]:6.1%}"
              + (f"  model {result['model_family_accuracy'][fam]:6.1%}" if generate else ""))
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
