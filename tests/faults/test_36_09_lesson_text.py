"""Fault 36.9: one lesson with a 50 MB ``reflection_note`` was imported, and every later mission that
retrieved it carried it (first step 16 → 357 ms, RSS +500 MB, a 50 MB episode summary per flight).

Real parts: the bundle written by the contract's writer, delivered by the ground's ``push_bundle``
to the vehicle's memory-sync server on a real ZeroMQ socket on loopback, imported into a real
experience store (SQLite, sqlite-vec, the MiniLM embedder).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.bundle import BundleItem, write_bundle
from contract.records import COLLECTIONS, STRATEGIC_PLAN, StrategicPlan, content_uid, text_fields
from ground_station.memory_sync import SyncRefused, push_bundle
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.memory.bundle import import_bundle
from onboard.memory.experience_store import ExperienceStore
from onboard.memory.settings import MemoryConfig
from onboard.telemetry.memory_sync import MemorySyncServer
from onboard.telemetry.settings import TelemetryConfig


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


def _bundle(path: Path, note: str) -> Path:
    record = StrategicPlan("Inspect the tower", '{"sub_goals": []}', note, "{}", "success")
    spec = COLLECTIONS[STRATEGIC_PLAN]
    uid = content_uid(spec.name, spec.level, text_fields(record), None, None)
    write_bundle(path, [BundleItem(uid, spec.name, spec.level, None, "ground", 1.7e9, record)],
                 vehicle_id="ground", embedding_model="x")
    return path


def test_an_oversized_lesson_is_refused_and_its_text_not_echoed(tmp_path: Path, embedder) -> None:
    mem = MemoryConfig()
    huge = _bundle(tmp_path / "huge.msgpack", "x" * 50_000_000)
    at_limit = _bundle(tmp_path / "ok.msgpack", "y" * mem.lesson_text_max_chars)
    vcfg = TelemetryConfig(sync_endpoint="tcp://127.0.0.1:0", curve=False)
    with ExperienceStore.open(tmp_path / "vehicle_memory.sqlite", embedder, mem) as store, \
            MemorySyncServer(vcfg, data_dir=tmp_path, import_fn=lambda p: import_bundle(store, p)) as server:
        gcfg = GroundConfig(curve=False, sync_timeout_s=30.0, sync_attempts=1)
        link = VehicleLinkConfig(vehicle_id="uav-t", sync_endpoint=server.endpoint)
        with pytest.raises(SyncRefused, match=r"reflection_note holds 50000000 characters, more than 16384") as err:
            push_bundle(huge, link, gcfg)
        assert len(str(err.value)) < 1000, "the refusal quotes the lesson back"
        assert store.count() == 0

        assert push_bundle(at_limit, link, gcfg).added == 1
        assert store.count() == 1


def test_the_bound_is_the_configured_one(tmp_path: Path, embedder) -> None:
    bundle = _bundle(tmp_path / "b.msgpack", "z" * 300)
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, MemoryConfig(lesson_text_max_chars=256)) as store:
        from contract.bundle import BundleError

        with pytest.raises(BundleError, match="more than 256"):
            import_bundle(store, bundle)
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, MemoryConfig(lesson_text_max_chars=300)) as store:
        assert import_bundle(store, bundle).added == 1


def test_the_bound_is_range_checked_in_the_config(tmp_path: Path) -> None:
    from common.typed_config import ConfigError, build

    for bad in (0, -1, float("nan"), 10**9):
        with pytest.raises(ConfigError, match="lesson_text_max_chars"):
            build(MemoryConfig, {"lesson_text_max_chars": bad})
