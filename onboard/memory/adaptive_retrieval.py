"""Adaptive retrieval over the experience hierarchy (strategy > task > atomic).

From the strategy-tree design: a simple task ("take off") gains nothing from
past lessons and should not pay for an embedding and a KNN; a medium task
searches one level; a complex task walks down the hierarchy, first the
closest whole-mission plans, then the sub-task outcomes under them, then the
decision frames under those, so the lessons that come back belong to
missions like this one. When the walk finds no linked children (a young
memory, or lessons imported without parents) it falls back to a flat search
of the atomic level rather than return nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from onboard.memory.experience_store import ExperienceStore
from contract.records import NAVIGATE_EXPERIENCE, SEARCH_AND_LOCATE, STRATEGIC_PLAN, TASK_EXPERIENCE, Retrieved
from onboard.memory.settings import MemoryConfig

Complexity = Literal["simple", "medium", "complex"]


@dataclass(frozen=True)
class AdaptiveResult:
    """What adaptive retrieval did and found; ``path`` lists the levels searched."""

    complexity: Complexity
    hits: list[Retrieved] = field(default_factory=list)
    path: tuple[str, ...] = ()


def assess_complexity(task: str, cfg: MemoryConfig) -> Complexity:
    """Word count against the configured thresholds (the strategy-tree heuristic)."""
    words = len(task.split())
    if words < cfg.simple_task_max_words:
        return "simple"
    if words < cfg.medium_task_max_words:
        return "medium"
    return "complex"


def retrieve_adaptive(store: ExperienceStore, task: str, query: str, *,
                      atomic_collection: str = NAVIGATE_EXPERIENCE, k: int | None = None) -> AdaptiveResult:
    """Retrieve lessons for ``query`` (usually ``current_state``) as ``task``'s complexity warrants.

    ``atomic_collection`` is the expert's own collection
    (``navigate_experience_memory`` or ``search_and_locate_memory``).
    """
    if atomic_collection not in (NAVIGATE_EXPERIENCE, SEARCH_AND_LOCATE):
        raise ValueError(f"atomic_collection must be {NAVIGATE_EXPERIENCE} or {SEARCH_AND_LOCATE}")
    cfg = store.cfg
    k = cfg.max_retrieval_results if k is None else k
    complexity = assess_complexity(task, cfg)
    if complexity == "simple":
        return AdaptiveResult("simple", [], ())
    if complexity == "medium":
        return AdaptiveResult("medium", store.search(query, atomic_collection, k=k), (atomic_collection,))
    fan = cfg.hierarchical_fanout
    plans = store.search(task, STRATEGIC_PLAN, k=fan)
    # The task level only scopes the search (it is never returned), so no threshold there.
    tasks = store.rank_children(query, [p.uid for p in plans], collections=[TASK_EXPERIENCE], k=fan, threshold=-1.0)
    atomic = store.rank_children(query, [t.uid for t in tasks], collections=[atomic_collection], k=k)
    if atomic:
        return AdaptiveResult("complex", atomic, (STRATEGIC_PLAN, TASK_EXPERIENCE, atomic_collection))
    return AdaptiveResult("complex", store.search(query, atomic_collection, k=k),
                          (STRATEGIC_PLAN, TASK_EXPERIENCE, atomic_collection + " (flat fallback)"))
