"""Fault 36.3: a bundle of 65 lessons whose 65th is invalid committed the first 64.

The import validated one 64-lesson transaction at a time, so the first batch was written before the
second was looked at; the vehicle answered ``error``, moved the bundle to ``refused/`` — and kept 64
of its lessons, which the courier (having been told "refused") never sent again in a good bundle.

Real parts: the bundle file written by the contract's own writer, the vehicle's memory-sync server
on a real ZeroMQ ROUTER on loopback, the ground's ``push_bundle`` client, and a real experience
store (SQLite with sqlite-vec) embedding with the real MiniLM model.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from contract.bundle import BundleItem, write_bundle
from contract.records import COLLECTIONS, STRATEGIC_PLAN, StrategicPlan, content_uid, text_fields
from ground_station.memory_sync import SyncRefused, push_bundle
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.memory.bundle import IMPORT_BATCH, import_bundle
from onboard.memory.experience_store import ExperienceStore
from onboard.memory.settings import MemoryConfig
from onboard.telemetry.memory_sync import MemorySyncServer
from onboard.telemetry.settings import TelemetryConfig


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


def _item(i: int, status: str) -> BundleItem:
    """A strategic plan with a correct content id, whatever its status (the id does not judge content)."""
    record = StrategicPlan(f"Inspect tower {i}", '{"sub_goals": []}', f"lesson {i}", "{}", status)
    spec = COLLECTIONS[STRATEGIC_PLAN]
    uid = content_uid(spec.name, spec.level, text_fields(record), None, None)
    return BundleItem(uid, spec.name, spec.level, None, "ground", 1.7e9, record)


def test_a_bundle_with_one_bad_lesson_writes_none_of_it(tmp_path: Path, embedder) -> None:
    n = IMPORT_BATCH + 1
    bad = tmp_path / "bad.msgpack"
    write_bundle(bad, [_item(i, "success") for i in range(n - 1)] + [_item(n - 1, "maybe")],
                 vehicle_id="ground", embedding_model="x")
    good = tmp_path / "good.msgpack"
    write_bundle(good, [_item(i, "success") for i in range(n)], vehicle_id="ground", embedding_model="x")

    vcfg = TelemetryConfig(sync_endpoint="tcp://127.0.0.1:0", curve=False)
    results: list[str] = []
    with ExperienceStore.open(tmp_path / "vehicle_memory.sqlite", embedder, MemoryConfig()) as store, \
            MemorySyncServer(vcfg, data_dir=tmp_path, import_fn=lambda p: import_bundle(store, p),
                             on_result=lambda kind, _: results.append(kind)) as server:
        gcfg = GroundConfig(curve=False, sync_timeout_s=30.0, sync_attempts=1)
        link = VehicleLinkConfig(vehicle_id="uav-w", sync_endpoint=server.endpoint)
        with pytest.raises(SyncRefused, match=r"experience #64 is malformed.*'success' or 'failure'"):
            push_bundle(bad, link, gcfg)
        assert store.count() == 0, "a refused bundle left lessons behind"
        assert (tmp_path / "incoming_bundles" / "refused").is_dir()

        ack = push_bundle(good, link, gcfg)
        assert (ack.added, ack.already_present) == (n, 0)
        assert store.count() == n
    # (the server answers before it tells its listener; closed, it has told it everything)
    assert results == ["lessons_refused", "lessons_imported"]


def test_the_check_is_the_whole_bundle_even_when_the_store_would_refuse_later(tmp_path: Path, embedder) -> None:
    """Without the sync server: the import function itself refuses before embedding or writing anything."""
    bad = tmp_path / "bad.msgpack"
    items = [_item(i, "success") for i in range(3)]
    items[1] = dataclasses.replace(items[1], record=dataclasses.replace(items[1].record, task_instruction=" "))
    items[1] = dataclasses.replace(items[1], uid=content_uid(STRATEGIC_PLAN, "strategy",
                                                             text_fields(items[1].record), None, None))
    write_bundle(bad, items, vehicle_id="ground", embedding_model="x")
    with ExperienceStore.open(tmp_path / "m.sqlite", embedder, MemoryConfig()) as store:
        from contract.bundle import BundleError

        with pytest.raises(BundleError, match=r"experience #1 is malformed.*empty"):
            import_bundle(store, bad)
        assert store.count() == 0
