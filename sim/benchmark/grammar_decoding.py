"""Plan-call time, llama-cpp-python's grammar sampler chain vs greedy-first grammar decoding.

    python -m sim.benchmark.grammar_decoding [--tasks 4] [--runs 3] [--json PATH]

Builds the planner's step-0 messages (``plan_messages``) for the first public
Helsinki tasks, then times ``LlamaTextModel.chat(..., json_schema=PlanOutput)``
with ``grammar_first`` off (stock) and on (greedy-first), interleaved, each call
from a fresh prompt evaluation (``Llama.reset()``: no KV-cache reuse between the
two paths). Checks that both answers are byte-identical. ``*_sample_s`` is the
time spent choosing tokens (the sampler's ``sample`` calls) within each call;
the rest is llama.cpp's prompt evaluation and per-token decode.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from contract.results import write_json

REPO = Path(__file__).resolve().parents[2]


def plan_prompts(n: int) -> list[tuple[str, list[dict[str, str]]]]:
    from onboard.agent.goal_description import parse_goal_description
    from onboard.agent.llm_planner import plan_messages

    tasks = json.loads((REPO / "bench" / "tasks" / "helsinki_public_100.json").read_text())["tasks"][:n]
    return [(t["id"], plan_messages(t["description"], parse_goal_description(t["description"], t["landmarks"]), "", [], ""))
            for t in tasks]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(REPO / "config.yaml"))
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)

    from onboard.config import load_config
    from onboard.inference.contracts import PlanOutput
    from onboard.inference.json_contract import schema_of
    from onboard.inference.llama_backend import open_llm

    from llama_cpp._internals import LlamaSampler

    from onboard.inference.grammar_decoding import GreedyGrammarSampler

    m = open_llm(load_config(args.config).inference)
    sampling = [0.0]

    def timed(fn):
        def sample(self, ctx, idx=-1):
            t0 = time.perf_counter()
            try:
                return fn(self, ctx, idx)
            finally:
                sampling[0] += time.perf_counter() - t0
        return sample

    LlamaSampler.sample = timed(LlamaSampler.sample)
    GreedyGrammarSampler.sample = timed(GreedyGrammarSampler.sample)
    schema = schema_of(PlanOutput)
    usage: dict = {}
    create = m.llm.create_chat_completion

    def recording(**kw):
        out = create(**kw)
        usage.update(out.get("usage") or {})
        return out

    m.llm.create_chat_completion = recording
    m.chat(plan_prompts(1)[0][1], json_schema=schema)  # warm-up (page in the weights)
    rows = []
    for task_id, messages in plan_prompts(args.tasks):
        row: dict = {"task": task_id, "stock_s": [], "greedy_first_s": [], "stock_sample_s": [], "greedy_first_sample_s": []}
        answers = {}
        for _ in range(args.runs):
            for path, first in (("stock", False), ("greedy_first", True)):
                m.grammar_first = first
                m.llm.reset()
                sampling[0] = 0.0
                t0 = time.perf_counter()
                text = m.chat(messages, json_schema=schema)
                row[f"{path}_s"].append(round(time.perf_counter() - t0, 3))
                row[f"{path}_sample_s"].append(round(sampling[0], 3))
                answers.setdefault(path, set()).add(text)
                row[f"{path}_tokens"] = usage.get("completion_tokens")
                row["prompt_tokens"] = usage.get("prompt_tokens")
                if first:
                    row["full_vocab_grammar_passes"] = m.last_decode.full_passes
                    row["sampled_tokens"] = m.last_decode.tokens
        row["identical"] = len(answers["stock"] | answers["greedy_first"]) == 1
        row["stock_median_s"] = statistics.median(row["stock_s"])
        row["greedy_first_median_s"] = statistics.median(row["greedy_first_s"])
        row["speedup"] = round(row["stock_median_s"] / row["greedy_first_median_s"], 2)
        row["answer"] = next(iter(answers["greedy_first"]))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "answer"}), flush=True)
    result = {"model": str(m.model_path.name), "runs": args.runs, "rows": rows,
              "all_identical": all(r["identical"] for r in rows),
              "stock_median_s": statistics.median(t for r in rows for t in r["stock_s"]),
              "greedy_first_median_s": statistics.median(t for r in rows for t in r["greedy_first_s"])}
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    if args.json:
        write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
