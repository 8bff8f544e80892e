"""Typed settings of the vehicle's long-term memory (experience store, anchor graph)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryConfig:
    # One SQLite file per vehicle (sqlite-vec inside); relative paths are under the data dir.
    path: str = "memory.sqlite"
    # At most this many experiences come back from one retrieval.
    max_retrieval_results: int = 3
    # Cosine similarity below which a retrieved experience is ignored.
    similarity_threshold: float = 0.5
