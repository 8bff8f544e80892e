"""Shared fixtures: one real MiniLM embedder per session, real memory files under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from onboard.memory.embedder import MiniLMEmbedder
from onboard.memory.experience_store import ExperienceStore
from onboard.memory.settings import MemoryConfig


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder.load()


@pytest.fixture
def cfg() -> MemoryConfig:
    return MemoryConfig(writer_timeout_s=0.5)


@pytest.fixture
def store(tmp_path: Path, embedder: MiniLMEmbedder, cfg: MemoryConfig):
    with ExperienceStore.open(tmp_path / "memory.sqlite", embedder, cfg) as s:
        yield s


def png_bytes(tag: int = 0) -> bytes:
    """A tiny valid PNG (1x1 pixel) whose colour depends on ``tag``."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"\x00" + bytes([tag % 256, 0, 0])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
