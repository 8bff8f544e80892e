"""Short-horizon memories for prompts: the reflection window and PReP's episodic/semantic memory.

* Reflection window (strategy-tree design, after Reflexion): only the last N
  reflections (default 3) go into a prompt; older ones have either been acted
  on or become experiences in the store, and a long list dilutes the prompt.
* Episodic memory (PReP): one plain sentence per move ("You were at (x, y).
  You could move to [...]. You chose to move east. Then you arrived at (x, y).").
* Semantic memory (PReP): one slot for the language model's summary of the
  episodes; it is replaced, never appended, whenever a new summary is made.

Both are plain in-memory objects; give them an :class:`ExperienceStore` and a
flight id to persist what they hold in the vehicle's memory file as well. A
store-backed reflection window also starts with the reflections earlier
flights wrote for similar tasks (``task``), so a second flight over the same
ground does not repeat the first one's mistakes from an empty window.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Sequence

from onboard.memory import flight_notes

if TYPE_CHECKING:
    from onboard.memory.experience_store import ExperienceStore


class ReflectionWindow:
    """The last ``size`` reflections, oldest first."""

    def __init__(self, size: int = 3, *, store: "ExperienceStore | None" = None, flight_id: str = "",
                 task: str | None = None) -> None:
        """``task``: scope the reflections loaded from ``store`` to similar tasks (None: the last ones of any)."""
        if size < 1:
            raise ValueError(f"reflection window size must be >= 1, got {size}")
        self._items: deque[str] = deque(maxlen=size)
        self._store = store
        self._flight_id = flight_id
        self._task = task or ""
        self.inherited = 0  # reflections the window started with (written on earlier flights)
        if store is not None:
            self._items.extend(flight_notes.recent_reflections(store, size, task=task))
            self.inherited = len(self._items)

    def add(self, reflection: str) -> None:
        reflection = reflection.strip()
        if not reflection:
            return
        self._items.append(reflection)
        if self._store is not None:
            flight_notes.save_reflection(self._store, self._flight_id, reflection, self._task)

    def recent(self) -> list[str]:
        return list(self._items)

    def format_for_prompt(self) -> str:
        """A prompt section, or "" when there is nothing to learn from yet."""
        if not self._items:
            return ""
        lines = ["## Recent reflections (lessons from earlier attempts)"]
        lines += [f"{i}. {text}" for i, text in enumerate(self._items, start=1)]
        lines.append("Do not repeat these mistakes.")
        return "\n".join(lines)

    def __len__(self) -> int:
        return len(self._items)


def _fmt_pos(pos: Sequence[float]) -> str:
    return "(" + ", ".join(f"{v:g}" if float(v).is_integer() else f"{v:.2f}" for v in pos) + ")"


def move_sentence(at: Sequence[float], options: Sequence[str], chosen: str, arrived: Sequence[float],
                  note: str = "") -> str:
    """One PReP-style episodic sentence for one move."""
    opts = ", ".join(f"'{o}'" for o in options)
    sentence = f"You were at {_fmt_pos(at)}. You could move to [{opts}]. You chose to move {chosen}. " \
               f"Then you arrived at {_fmt_pos(arrived)}."
    return f"{sentence} {note.strip()}" if note.strip() else sentence


class EpisodicMemory:
    """One sentence per move for this flight, plus the semantic summary slot."""

    def __init__(self, *, store: "ExperienceStore | None" = None, flight_id: str = "",
                 prompt_sentences: int = 10) -> None:
        self._store = store
        self.prompt_sentences = prompt_sentences
        self.flight_id = flight_id
        self.sentences: list[str] = []
        self.semantic_summary: str = ""
        if store is not None:
            self.sentences = [s for _, s in flight_notes.episodes(store, flight_id)]
            self.semantic_summary = flight_notes.semantic_summary(store, flight_id) or ""

    def record_move(self, at: Sequence[float], options: Sequence[str], chosen: str, arrived: Sequence[float],
                    note: str = "") -> str:
        sentence = move_sentence(at, options, chosen, arrived, note)
        self.sentences.append(sentence)
        if self._store is not None:
            flight_notes.save_episode(self._store, self.flight_id, len(self.sentences) - 1, sentence)
        return sentence

    def set_semantic_summary(self, text: str) -> None:
        self.semantic_summary = text.strip()
        if self._store is not None:
            flight_notes.set_semantic_summary(self._store, self.flight_id, self.semantic_summary)

    def format_for_prompt(self, last: int | None = None) -> str:
        """Numbered recent moves (the numbers keep their place in the whole flight) and the summary.

        ``last`` defaults to ``prompt_sentences`` (config: ``episodic_prompt_sentences``).
        """
        last = self.prompt_sentences if last is None else last
        lines = []
        if self.sentences:
            start = max(len(self.sentences) - last, 0)
            lines.append("## Your memory of this flight (chronological)")
            lines += [f"{i + 1}. {s}" for i, s in enumerate(self.sentences[start:], start=start)]
        if self.semantic_summary:
            lines.append("## What you have learned so far")
            lines.append(self.semantic_summary)
        return "\n".join(lines)
