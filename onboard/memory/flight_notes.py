"""The memory file's side tables: reflections, episodic sentences and semantic summaries.

They are not experiences (no vectors, no collections) but ride in the same
file so that one backup, one integrity check and one writer lock cover a
vehicle's whole memory. :mod:`onboard.memory.reflection_memory` is their user.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store is passed in; importing it here would load numpy and sqlite for nothing
    from onboard.memory.experience_store import ExperienceStore


def save_reflection(store: "ExperienceStore", flight_id: str, text: str, task: str = "") -> None:
    with store.write() as conn:
        conn.execute("INSERT INTO reflections(flight_id, text, created_at, task) VALUES (?,?,?,?)",
                     (flight_id, text, time.time(), task))


# Rows looked at when choosing a task's reflections: enough for many flights' worth, few enough
# that embedding their distinct tasks before take-off stays well under a second.
SCOPE_SCAN_ROWS = 200


def recent_reflections(store: "ExperienceStore", n: int | None = None, *, task: str | None = None,
                       min_similarity: float | None = None) -> list[str]:
    """The last ``n`` reflections, oldest first: over all flights, or (``task`` given) for similar tasks only.

    A reflection is about one task in one place ("the goal was not east of the church"); offered to
    an unrelated task it is noise in a small model's prompt. So with ``task`` only reflections whose
    task's embedding is within ``min_similarity`` (default ``memory.similarity_threshold``) of it
    count; ones written without a task (before schema v4) never match.
    """
    n = store.cfg.reflection_window if n is None else n
    if task is None:
        rows = store.conn.execute("SELECT text FROM reflections ORDER BY id DESC LIMIT ?", (n,)).fetchall()
        return [r[0] for r in reversed(rows)]
    threshold = store.cfg.similarity_threshold if min_similarity is None else min_similarity
    rows = store.conn.execute("SELECT text, task FROM reflections WHERE task != '' ORDER BY id DESC LIMIT ?",
                              (SCOPE_SCAN_ROWS,)).fetchall()
    if not rows:
        return []
    tasks = sorted({t for _, t in rows} | {task})
    vecs = store.embedder.embed(tasks)
    here = vecs[tasks.index(task)]
    similar = {t for t, v in zip(tasks, vecs) if float(v @ here) >= threshold}
    picked = [text for text, t in rows if t in similar][:n]
    return list(reversed(picked))


def save_episode(store: "ExperienceStore", flight_id: str, step: int, sentence: str) -> None:
    with store.write() as conn:
        conn.execute("INSERT INTO episodic(flight_id, step, sentence, created_at) VALUES (?,?,?,?)",
                     (flight_id, step, sentence, time.time()))


def episodes(store: "ExperienceStore", flight_id: str) -> list[tuple[int, str]]:
    return [tuple(r) for r in store.conn.execute(
        "SELECT step, sentence FROM episodic WHERE flight_id = ? ORDER BY step, id", (flight_id,))]


def set_semantic_summary(store: "ExperienceStore", flight_id: str, text: str) -> None:
    with store.write() as conn:
        conn.execute("DELETE FROM semantic_summary WHERE flight_id = ?", (flight_id,))
        conn.execute("INSERT INTO semantic_summary(flight_id, text, updated_at) VALUES (?,?,?)",
                     (flight_id, text, time.time()))


def semantic_summary(store: "ExperienceStore", flight_id: str) -> str | None:
    row = store.conn.execute("SELECT text FROM semantic_summary WHERE flight_id = ?", (flight_id,)).fetchone()
    return row[0] if row else None
