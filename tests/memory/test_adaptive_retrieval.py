"""Adaptive retrieval: skip simple tasks, one level for medium, strategy -> task -> atomic for complex."""

from __future__ import annotations

from onboard.memory.adaptive_retrieval import assess_complexity, retrieve_adaptive
from onboard.memory.experience_store import ExperienceStore
from contract.records import NavigateExperience, StrategicPlan, TaskExperience
from onboard.memory.settings import MemoryConfig

COMPLEX = "Fly from the harbour to the hospital roof, avoid the stadium crowd and land on the helipad safely"


def test_complexity_thresholds_from_config() -> None:
    cfg = MemoryConfig()
    assert assess_complexity("take off", cfg) == "simple"
    assert assess_complexity("fly to the red church near the park", cfg) == "medium"
    assert assess_complexity(COMPLEX, cfg) == "complex"
    assert assess_complexity("take off", MemoryConfig(simple_task_max_words=1)) == "medium"


def test_simple_skips_medium_flat_complex_walks_the_hierarchy(store: ExperienceStore) -> None:
    hospital = store.add_strategic_plan(StrategicPlan(COMPLEX, "{}", "go around crowds", "{}", "success"))
    forest = store.add_strategic_plan(StrategicPlan("Search the pine forest north of the lake for a lost hiker "
                                                    "using slow sweeps at low altitude", "{}", "sweep", "{}", "failure"))
    t_h = store.add_task_experience(TaskExperience("reach the hospital roof", "navigate", "success", "ok"),
                                    parent_uid=hospital)
    t_f = store.add_task_experience(TaskExperience("sweep the forest edge", "search", "failure", "too fast"),
                                    parent_uid=forest)
    good = store.add_navigate_experience(NavigateExperience("hospital", "success", "approach the helipad from the "
                                         "west", "{}", "a large building with a helipad on its roof"), parent_uid=t_h)
    # A closer match that belongs to the other mission: the flat search prefers it, the walk does not.
    store.add_navigate_experience(NavigateExperience("forest", "failure", "trees hide the pad", "{}",
                                                     "a helipad on the roof of a large building"), parent_uid=t_f)
    query = "a helipad on the roof of a large building"
    assert retrieve_adaptive(store, "take off", query).hits == []
    medium = retrieve_adaptive(store, "fly to the hospital roof now", query, k=1)
    assert medium.complexity == "medium" and medium.hits[0].record.reflect_reason == "trees hide the pad"
    complex_ = retrieve_adaptive(store, COMPLEX, query, k=1)
    assert complex_.complexity == "complex" and complex_.hits[0].uid == good
    assert complex_.path[0] == "strategic_plan_memory"


def test_complex_without_links_falls_back_to_flat(store: ExperienceStore) -> None:
    store.add_navigate_experience(NavigateExperience("g", "success", "lesson", "{}", "a helipad on a roof"))
    res = retrieve_adaptive(store, COMPLEX, "helipad on the roof")
    assert res.hits and res.path[-1].endswith("(flat fallback)")
