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


def save_reflection(store: "ExperienceStore", flight_id: str, text: str) -> None:
    with store.write() as conn:
        conn.execute("INSERT INTO reflections(flight_id, text, created_at) VALUES (?,?,?)",
                     (flight_id, text, time.time()))


def recent_reflections(store: "ExperienceStore", n: int | None = None) -> list[str]:
    """The last ``n`` reflections over all flights, oldest first."""
    n = store.cfg.reflection_window if n is None else n
    rows = store.conn.execute("SELECT text FROM reflections ORDER BY id DESC LIMIT ?", (n,)).fetchall()
    return [r[0] for r in reversed(rows)]


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
