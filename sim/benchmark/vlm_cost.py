"""What a VLM call costs on this machine: a camera frame plus the agent's two maps, answered under a contract.

    python -m sim.benchmark.vlm_cost [--calls 8] [--threads 1,2] [--json PATH]

Opens the configured VLM as the vehicle does (``open_vlm``: manifest, checksum, projector, chat
handler); by default the tests' random-weight ``tiny-vlm`` (built here if absent), so the figures
are the cost of the plumbing at that model's size, never a skill. The images are a 1920 x 1080
frame the simulator renders of Helsinki (the vehicle camera's size) and the agent's landmark and
semantic maps (480 x 480). Reports, per thread count: load time, image tokens per image (the
prompt's tokens with the image minus without), the time of a prompt-only call (images encoded
and the prompt evaluated, one token out) and of a full call (the navigate contract under its
grammar), and the process's resident memory before loading, after loading and after the calls.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from contract.results import write_json

PROMPT = ("You fly a drone. Images: the camera frame, the landmark map, the semantic map. Task: find Kappahl "
          "Hakaniemi, a clothes shop, roughly 700 m north of Metsatalo. Next move? JSON only.")


def rss_mb() -> float:
    """Resident memory of this process now (VmRSS), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def flight_images() -> dict[str, np.ndarray]:
    """A rendered Helsinki frame at the camera's size and the agent's two maps, RGB."""
    from onboard.agent.agent import GraphAgent
    from onboard.agent.map_render import render_maps
    from onboard.agent.settings import AgentConfig
    from sim.benchmark.suite import example_view
    from sim.world.cache import load_world
    from sim.world.render import ViewRenderer

    world = load_world()
    node, heading = example_view(world)
    frame = ViewRenderer(world).oblique(node, heading)
    agent = GraphAgent(AgentConfig(), [lm.name for lm in world.landmarks][:20])
    agent.reset("Find Kappahl Hakaniemi, a clothes shop, roughly 700 m north of Metsatalo.")
    landmark, semantic = render_maps(agent.state, "vlm-cost")
    return {k: np.ascontiguousarray(v[:, :, ::-1]) for k, v in (("frame", frame), ("landmark_map", landmark),
                                                                  ("semantic_map", semantic))}


def measure(cfg, images: dict[str, np.ndarray], calls: int) -> dict:
    from onboard.inference.contracts import NavigationDecisionOutput
    from onboard.inference.json_contract import call_contract
    from onboard.inference.llama_backend import open_vlm, vision_messages

    before = rss_mb()
    t0 = time.perf_counter()
    vlm = open_vlm(cfg)
    load_s = time.perf_counter() - t0
    loaded = rss_mb()
    vlm.chat_with_images(PROMPT, [], max_tokens=1)
    text_tokens = vlm.last_prompt_tokens
    tokens = {}
    for name, im in images.items():
        vlm.chat_with_images(PROMPT, [im], max_tokens=1)
        tokens[name] = vlm.last_prompt_tokens - text_tokens
    all_images = list(images.values())
    prompt_only, full, answered, fallbacks = [], [], 0, 0
    for _ in range(calls):
        t = time.perf_counter()
        vlm.chat_with_images(PROMPT, all_images, max_tokens=1)
        prompt_only.append(time.perf_counter() - t)
        t = time.perf_counter()
        result = call_contract(lambda m, s: vlm.chat(m, json_schema=s), vision_messages(PROMPT, all_images),
                               NavigationDecisionOutput, fallback=NavigationDecisionOutput.fallback, retries=0)
        full.append(time.perf_counter() - t)
        answered += vlm.last_decode.tokens
        fallbacks += result.used_fallback
    out = {"threads": cfg.n_threads, "load_s": round(load_s, 3), "text_prompt_tokens": text_tokens,
           "image_tokens": tokens, "prompt_tokens_three_images": vlm.last_prompt_tokens,
           "prompt_only_s_p50": round(statistics.median(prompt_only), 4),
           "full_call_s_p50": round(statistics.median(full), 4), "full_call_s_max": round(max(full), 4),
           "answer_tokens_mean": round(answered / calls, 1), "contract_fallbacks": fallbacks, "calls": calls,
           "rss_mb_before_load": round(before, 1), "rss_mb_loaded": round(loaded, 1), "rss_mb_after_calls": round(rss_mb(), 1)}
    vlm.llm.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="tiny-vlm", help="manifest name of the VLM (tiny-vlm: built here if absent)")
    ap.add_argument("--handler", default="MTMDChatHandler")
    ap.add_argument("--model-dir", default="")
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)

    from onboard.inference.manifest import model_dir
    from onboard.inference.settings import InferenceConfig

    base = InferenceConfig()
    cfg = replace(base, model_dir=args.model_dir or base.model_dir, vlm_model=args.model, vlm_chat_handler=args.handler)
    if args.model == "tiny-vlm":
        from sim.tiny_vlm import build_tiny_vlm

        build_tiny_vlm(model_dir(cfg.model_dir))
    images = flight_images()
    runs = [measure(replace(cfg, n_threads=int(n), n_threads_batch=int(n)), images, args.calls)
            for n in args.threads.split(",")]
    report = {"model": args.model, "handler": args.handler, "image_sizes": {k: list(v.shape[:2][::-1]) for k, v in images.items()},
              "runs": runs, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    for r in runs:
        print(f"threads {r['threads']}: load {r['load_s']} s; image tokens {r['image_tokens']}; prompt-only "
              f"{r['prompt_only_s_p50']} s, full call {r['full_call_s_p50']} s p50 ({r['answer_tokens_mean']} answer tokens); "
              f"RSS {r['rss_mb_before_load']} -> {r['rss_mb_loaded']} -> {r['rss_mb_after_calls']} MB")
    if args.json:
        write_json(args.json, report)
    return report


if __name__ == "__main__":
    main()
