"""What the `llm` planner is told besides the task: the seeds' context, fitted to the model's window.

Every plan prompt carries, highest priority first:

* the last reflections (strategy-tree design: the window of 3);
* past experiences chosen by adaptive retrieval (skip / single / hierarchical
  by the task's complexity), when a store is given;
* the semantic summary: what is known so far, written by code from the
  working memory (a 135M model cannot summarise its own flight reliably);
* the Navigation Context of the Place–Anchor memory (anchors, places, the
  discovered-context FIFO, localisation candidates marked as hints);
* the most recent episodic sentences (PReP).

SmolLM2 has a 2048-token window, and every prompt token costs decode time on
the vehicle's CPU, so the sections are cut to a token budget from the lowest
priority up: oldest lines first, a section left with nothing but its header
is dropped. What went in (and what was cut) is returned for the FrameLog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from onboard.agent.current_state import compass
from onboard.agent.geometry import bearing_of, norm
from onboard.memory.navigation_context import render_navigation_context

# SmolLM2's BPE spends 2.6-2.9 characters a token on these prompts (every digit is a token of its
# own); 2.4 over-counts on purpose, so the budget holds without the tokenizer at hand
# (tests/agent/test_llm_prompt_context.py checks it against the real one).
CHARS_PER_TOKEN = 2.4

RETRIEVAL_MODES = {"simple": "skip", "medium": "single", "complex": "hierarchical"}


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


@dataclass(frozen=True)
class Section:
    """One prompt section; lines after the header are cut oldest (first) first."""

    name: str
    header: str
    lines: tuple[str, ...]
    items: tuple[str, ...] = ()  # short ids of what the lines carry, for the FrameLog

    def text(self) -> str:
        return "\n".join((self.header, *self.lines)) if self.lines else ""


@dataclass(frozen=True)
class PromptContext:
    sections: tuple[Section, ...]  # prompt order; the fitted ones
    dropped: tuple[str, ...] = ()  # sections cut to nothing
    retrieval: dict[str, Any] = field(default_factory=dict)  # {"mode": ..., "hits": {collection: n}}
    lessons: tuple[str, ...] = ()  # retrieved experiences' lessons (also cited in the geometric plan)

    def text(self) -> str:
        return "\n".join(t for s in self.sections if (t := s.text()))

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text())

    def items(self) -> dict[str, list[str]]:
        return {s.name: list(s.items) for s in self.sections if s.lines}


# Lowest priority first: the order sections are cut in.
CUT_ORDER = ("episodic", "navigation", "summary", "experiences", "reflections")


def fit(sections: list[Section], budget_tokens: int, fixed_tokens: int = 0) -> tuple[list[Section], list[str]]:
    """Cut lines, lowest priority and oldest first, until the sections fit `budget_tokens` (with `fixed_tokens`)."""
    out = {s.name: s for s in sections}

    def total() -> int:
        return fixed_tokens + sum(estimate_tokens(s.text()) for s in out.values() if s.lines)

    for name in CUT_ORDER:
        s = out.get(name)
        while s is not None and s.lines and total() > budget_tokens:
            keep = len(s.items) == len(s.lines)
            s = Section(s.name, s.header, s.lines[1:], s.items[1:] if keep else s.items)
            out[name] = s
    dropped = [s.name for s in sections if s.lines and not out[s.name].lines]
    return [out[s.name] for s in sections], dropped


# ------------------------------------------------------------------------------------------ sections
def reflections_section(recent: list[str], n: int = 3) -> Section:
    last = recent[-n:]
    return Section("reflections", "## Recent reflections (do not repeat these mistakes)",
                   tuple(f"{i}. {t}" for i, t in enumerate(last, start=1)), tuple(t[:60] for t in last))


def front_deg(state) -> float:
    """The heading the model's `angle` is relative to: the last move's bearing (0 before the first)."""
    for frame in reversed(state.dynamic.trajectory_history):
        if frame.movement.get("bearing") is not None:
            return float(frame.movement["bearing"])
    return 0.0


def _turn(state, bearing: float) -> str:
    """The turn from the heading, in the PlaceAnchorPlan's sign (+ left): the model copies rather than computes."""
    angle = (front_deg(state) - bearing + 180.0) % 360.0 - 180.0
    return f"angle {angle:+.0f}"


def semantic_summary(state) -> str:
    """What is known now, from the working memory: landmarks fixed, the target, the goal's name, ground covered."""
    d, s = state.dynamic, state.static
    mem = s.memory
    parts = []
    fixed = mem.landmark_map()
    if fixed:
        where = [f"{n} {norm(p - d.position):.0f} m {compass(bearing_of(p - d.position))}" for n, p in fixed.items()]
        parts.append("Landmarks fixed: " + "; ".join(sorted(where)[:6]) + ".")
    else:
        parts.append("No described landmark fixed yet.")
    target = mem.target()
    if mem.goal_fix is not None:
        b = bearing_of(mem.goal_fix - d.position)
        parts.append(f"Goal name read {norm(mem.goal_fix - d.position):.0f} m {compass(b)} ({_turn(state, b)}).")
    elif target is not None:
        b = bearing_of(target - d.position)
        parts.append(f"Goal estimate {norm(target - d.position):.0f} m {compass(b)} ({_turn(state, b)}); "
                     "name not read yet.")
    else:
        parts.append("No goal estimate yet.")
    parts.append(f"Covered: {len(set(d.trail))} waypoints in {d.timestep} steps.")
    return " ".join(parts)


def navigation_section(anchors) -> Section:
    """The Place–Anchor Navigation Context; localisation candidates are hints, not merges (002 §8.3)."""
    if anchors is None:
        return Section("navigation", "## Navigation Context", ())
    lines = render_navigation_context(anchors).splitlines()
    dc = [f"dc{r.idx}:{r.goal_scene_type}" for r in anchors.discovered.records()]
    cands = [f"hint:A{c.anchor_id}" for c in anchors.localisation_candidates()]
    return Section("navigation", lines[0], tuple(lines[1:]), tuple(dc + cands + anchors.avoid_hints()))


def episodic_section(sentences: list[str], n: int) -> Section:
    start = max(len(sentences) - n, 0)
    recent = sentences[start:]
    return Section("episodic", "## Your moves on this flight (chronological)",
                   tuple(f"{i + 1}. {t}" for i, t in enumerate(recent, start=start)),
                   tuple(f"move{i + 1}" for i in range(start, len(sentences))))


def retrieve_experiences(store, task: str, query: str, strategy: str, adaptive: bool,
                         k: int | None = None) -> tuple[Section, dict[str, Any]]:
    """Past experiences for the prompt and what the retrieval did ({"mode", "hits"}).

    Adaptive: the task's complexity picks skip / single (the expert's own
    collection) / hierarchical (strategy -> task -> atomic). Not adaptive: the
    flat search of past whole-mission plans (the planner's retrieval before).
    """
    from contract.records import NAVIGATE_EXPERIENCE, SEARCH_AND_LOCATE, STRATEGIC_PLAN

    header = "## Past experiences (lessons)"
    if store is None:
        return Section("experiences", header, ()), {"mode": "none", "hits": {}}
    if adaptive:
        from onboard.memory.adaptive_retrieval import retrieve_adaptive

        atomic = NAVIGATE_EXPERIENCE if strategy == "navigate" else SEARCH_AND_LOCATE
        res = retrieve_adaptive(store, task, query, atomic_collection=atomic, k=k)
        mode, hits = RETRIEVAL_MODES[res.complexity], res.hits
    else:
        mode, hits = "flat", store.retrieve_plans(task, k)
    counts: dict[str, int] = {}
    lines, items = [], []
    for h in hits:
        counts[h.collection] = counts.get(h.collection, 0) + 1
        rec = h.record
        lesson = getattr(rec, "reflect_reason", "") or getattr(rec, "reflection_note", "")
        outcome = getattr(rec, "is_success", "") or getattr(rec, "status", "")
        if h.collection == STRATEGIC_PLAN:
            lines.append(f"- past mission ({outcome}) \"{rec.task_instruction[:60]}\": {lesson[:120]}")
        else:
            lines.append(f"- {outcome}: {lesson[:120]}")
        items.append(h.uid[:12])
    return Section("experiences", header, tuple(lines), tuple(items)), {"mode": mode, "hits": counts}


def gather(state, budget_tokens: int, fixed_tokens: int = 0) -> PromptContext:
    """The context sections for a plan prompt from `state`, fitted to `budget_tokens`.

    Sets the episodic memory's semantic summary (it is what the prompt says is known).
    """
    d, s = state.dynamic, state.static
    cfg = s.config
    summary = semantic_summary(state)
    s.episodic.set_semantic_summary(summary)
    strategy = d.plan.sub_goals[d.current_task_index].strategy if d.plan is not None else "navigate"
    experiences, retrieval = retrieve_experiences(s.experience_store, s.task_instruction,
                                                  d.current_state or s.task_instruction, strategy,
                                                  cfg.use_adaptive_retrieval, k=cfg.max_key_experiences)
    sections = [
        reflections_section(s.reflections.recent(), s.reflection_window),
        experiences,
        Section("summary", "## What you know so far", (summary,), ("summary",)),
        navigation_section(s.anchors),
        episodic_section(s.episodic.sentences, s.episodic.prompt_sentences),
    ]
    fitted, dropped = fit(sections, budget_tokens, fixed_tokens)
    lessons = tuple(ln.split(": ", 1)[-1] for ln in experiences.lines)
    return PromptContext(tuple(fitted), tuple(dropped), retrieval, lessons)
