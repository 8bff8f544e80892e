"""Fault 19.18: a bundle the vehicle refuses at import must not stay among its received bundles
nor be announced as ``lessons_imported``.

Real parts: a lesson bundle exported from a real experience store and then corrupted on disk
(one byte of a lesson's text changed, so its content id no longer matches, as bit rot would do),
the vehicle's memory-sync server on a real ZeroMQ socket importing into a real store, its
events published by a real telemetry publisher (as the supervisor wires it) and ingested by a
real ground station into its SQLite flight log.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import zmq

from contract.memory_sync import BundleDelivery, SyncRefusal, answers, deliveries
from contract.records import StrategicPlan, TaskExperience
from ground_station.flight_log import FlightLog
from ground_station.memory_sync import SyncError, push_bundle
from ground_station.settings import VehicleLinkConfig
from onboard.memory.bundle import export_bundle, import_bundle
from onboard.memory.experience_store import ExperienceStore
from onboard.memory.settings import MemoryConfig
from onboard.telemetry.memory_sync import MemorySyncServer
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import GroundThread, ground_cfg, vehicle_cfg, wait_until


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


def _events(db: Path, vehicle_id: str) -> list[tuple[int, str, object]]:
    with FlightLog.open(db) as fl:
        return fl.events(vehicle_id)


def test_refused_bundle_is_quarantined_and_announced_as_refused(tmp_path: Path, embedder) -> None:
    good = tmp_path / "lessons.msgpack"
    with ExperienceStore.open(tmp_path / "ground_memory.sqlite", embedder, MemoryConfig()) as ground_store:
        plan = ground_store.add_strategic_plan(StrategicPlan("Inspect the tower", '{"sub_goals": []}', "fly high",
                                                             "{}", "success"))
        ground_store.add_task_experience(TaskExperience("reach the tower (Strategy: navigate)", "navigate",
                                                        "success", "followed the river"), parent_uid=plan)
        assert export_bundle(ground_store, good, vehicle_id="ground") == 2
    raw = good.read_bytes()
    assert raw.count(b"followed the river") == 1
    corrupt = tmp_path / "corrupt.msgpack"
    corrupt.write_bytes(raw.replace(b"followed the river", b"followed the rivet"))   # one byte of rot

    vcfg = dataclasses.replace(vehicle_cfg(tmp_path, curve=False), sync_endpoint="tcp://127.0.0.1:0")
    incoming = tmp_path / "incoming_bundles"
    with TelemetryPublisher(vcfg, "uav-r", data_dir=tmp_path) as pub, \
            ExperienceStore.open(tmp_path / "vehicle_memory.sqlite", embedder, MemoryConfig()) as vehicle_store, \
            MemorySyncServer(vcfg, data_dir=tmp_path, import_fn=lambda p: import_bundle(vehicle_store, p),
                             on_result=pub.event) as server:
        gcfg = ground_cfg(tmp_path, [pub], curve=False, sync_timeout_s=20.0)
        link = dataclasses.replace(gcfg.vehicles[0], sync_endpoint=server.endpoint)
        with GroundThread(gcfg):
            with pytest.raises(SyncError, match="refused the bundle.*does not match its content"):
                push_bundle(corrupt, link, gcfg)
            # A sender that skips the ground's own check: a truncated file with a matching hash.
            truncated = raw[: len(raw) // 2]
            with zmq.Context() as ctx, ctx.socket(zmq.REQ) as req:
                req.linger = 0
                req.connect(server.endpoint)
                req.send(deliveries(len(truncated)).pack(BundleDelivery.of(truncated)))
                assert req.poll(20_000), "the sync server did not answer the truncated bundle"
                reply = answers(1 << 20).unpack(req.recv())
            assert isinstance(reply, SyncRefusal) and "not a msgpack bundle" in reply.reason

            # Nothing refused stays among the received bundles; both are kept aside as evidence.
            assert list(incoming.glob("*.msgpack")) == []
            refused = sorted(p.name for p in (incoming / "refused").glob("*.msgpack"))
            assert refused == sorted(f"{hashlib.sha256(b).hexdigest()}.msgpack"
                                     for b in (corrupt.read_bytes(), truncated))
            assert vehicle_store.count() == 0
            assert server.counters == {"received": 2, "imported": 0, "errors": 2, "junk": 0, "held_back": 0, "pruned": 0}

            # The ground hears two refusals with their reasons, and no import.
            db = Path(gcfg.db_path)
            assert wait_until(lambda: db.exists() and len(_events(db, "uav-r")) >= 2, 60.0)
            events = _events(db, "uav-r")
            assert [kind for _, kind, _ in events] == ["lessons_refused", "lessons_refused"]
            assert "does not match its content" in events[0][2]["reason"]
            assert "not a msgpack bundle" in events[1][2]["reason"]
            assert events[0][2]["moved_to"].endswith(f"refused/{hashlib.sha256(corrupt.read_bytes()).hexdigest()}"
                                                     ".msgpack")

            # The server lives on: the intact bundle is imported and announced as such.
            ack = push_bundle(good, link, gcfg)
            assert (ack.added, ack.already_present) == (2, 0)
            assert vehicle_store.count() == 2
            assert [p.name for p in incoming.glob("*.msgpack")] == [f"{hashlib.sha256(raw).hexdigest()}.msgpack"]
            assert wait_until(lambda: len(_events(db, "uav-r")) >= 3, 60.0)
            assert _events(db, "uav-r")[-1][1] == "lessons_imported"
