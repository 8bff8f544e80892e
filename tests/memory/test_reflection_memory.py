"""Reflection window and PReP episodic / semantic memory, in memory and persisted."""

from __future__ import annotations

from onboard.memory.experience_store import ExperienceStore
from onboard.memory.reflection_memory import EpisodicMemory, ReflectionWindow, move_sentence


def test_window_keeps_last_three_for_the_prompt() -> None:
    w = ReflectionWindow(3)
    assert w.format_for_prompt() == ""
    for i in range(5):
        w.add(f"lesson {i}")
    assert w.recent() == ["lesson 2", "lesson 3", "lesson 4"]
    text = w.format_for_prompt()
    assert "1. lesson 2" in text and "3. lesson 4" in text and "lesson 1" not in text


def test_window_persists_across_flights(store: ExperienceStore) -> None:
    w = ReflectionWindow(3, store=store, flight_id="f1")
    for i in range(4):
        w.add(f"lesson {i}")
    again = ReflectionWindow(3, store=store, flight_id="f2")
    assert again.recent() == ["lesson 1", "lesson 2", "lesson 3"]


def test_a_flight_inherits_only_reflections_of_similar_tasks(store: ExperienceStore) -> None:
    church = "Fly to the cafe south of the red church near the harbour"
    ReflectionWindow(3, store=store, flight_id="f1", task=church).add("the cafe was not east of the church")
    ReflectionWindow(3, store=store, flight_id="f2", task="Land on the roof of the hospital by the ring road").add(
        "the hospital roof is reached from the north")
    ReflectionWindow(3, store=store, flight_id="f0").add("written without a task")
    again = ReflectionWindow(3, store=store, flight_id="f3", task="Fly to the cafe south of the red church by the harbour")
    assert again.recent() == ["the cafe was not east of the church"]
    assert again.inherited == 1
    assert ReflectionWindow(3, store=store, flight_id="f4", task="Inspect the wind turbine on the island").recent() == []
    assert len(ReflectionWindow(3, store=store, flight_id="f5")) == 3  # unscoped: the last ones of any task


def test_one_sentence_per_move() -> None:
    s = move_sentence((14, 14), ["northeast", "north", "west"], "northeast", (15, 15))
    assert s == ("You were at (14, 14). You could move to ['northeast', 'north', 'west']. "
                 "You chose to move northeast. Then you arrived at (15, 15).")


def test_episodic_and_semantic_memory(store: ExperienceStore) -> None:
    m = EpisodicMemory(store=store, flight_id="f1", prompt_sentences=3)
    for i in range(12):
        m.record_move((i, 0), ["east", "west"], "east", (i + 1, 0))
    m.set_semantic_summary("You mostly flew east along the river.")
    text = m.format_for_prompt()
    assert text.count("You were at") == 3 and "10. You were at (9, 0)" in text
    assert "You mostly flew east" in text
    reloaded = EpisodicMemory(store=store, flight_id="f1")
    assert len(reloaded.sentences) == 12 and reloaded.semantic_summary == m.semantic_summary
    assert EpisodicMemory(store=store, flight_id="other").sentences == []
