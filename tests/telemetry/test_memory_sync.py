"""Memory sync over a real CURVE REQ/REP link into real experience stores: acknowledged and idempotent."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import msgpack
import pytest

from ground_station.memory_sync import SyncError, push_bundle
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.telemetry.memory_sync import MemorySyncServer
from tests.telemetry.linkkit import make_keys, vehicle_cfg


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


def test_bundle_is_delivered_acknowledged_and_imported_once(tmp_path: Path, embedder) -> None:
    from onboard.memory.bundle import export_bundle, import_bundle
    from onboard.memory.experience_store import ExperienceStore
    from contract.records import StrategicPlan, TaskExperience
    from onboard.memory.settings import MemoryConfig

    bundle = tmp_path / "lessons.msgpack"
    with ExperienceStore.open(tmp_path / "ground_memory.sqlite", embedder, MemoryConfig()) as ground_store:
        plan = ground_store.add_strategic_plan(StrategicPlan("Inspect the bridge", '{"sub_goals": []}', "fly low",
                                                             "{}", "success"))
        ground_store.add_task_experience(TaskExperience("reach the bridge (Strategy: navigate)", "navigate",
                                                        "success", "followed the river"), parent_uid=plan)
        assert export_bundle(ground_store, bundle, vehicle_id="ground") == 2

    keys = make_keys(tmp_path)
    vcfg = dataclasses.replace(vehicle_cfg(tmp_path, curve=True, keys=keys), sync_endpoint="tcp://127.0.0.1:0")
    results: list[str] = []
    with ExperienceStore.open(tmp_path / "vehicle_memory.sqlite", embedder, MemoryConfig()) as vehicle_store:
        with MemorySyncServer(vcfg, data_dir=tmp_path, import_fn=lambda p: import_bundle(vehicle_store, p),
                              on_result=lambda kind, detail: results.append(kind)) as server:
            link = VehicleLinkConfig(vehicle_id="uav-m", sync_endpoint=server.endpoint,
                                     server_public_key=str(keys["vehicle_public"]))
            gcfg = GroundConfig(vehicles=[link], client_secret_key=str(keys["ground_secret"]), sync_timeout_s=20.0)
            first = push_bundle(bundle, link, gcfg)
            second = push_bundle(bundle, link, gcfg)          # a retry after a lost ack changes nothing
            assert (first.added, first.already_present) == (2, 0)
            assert (second.added, second.already_present) == (0, 2)
            assert vehicle_store.count() == 2
            # A tampered bundle is refused by the vehicle with a reason, and the server keeps serving.
            doc = msgpack.unpackb(bundle.read_bytes(), raw=False)
            doc["experiences"][0]["fields"]["task_instruction"] = "edited without a new id"
            tampered = tmp_path / "tampered.msgpack"
            tampered.write_bytes(msgpack.packb(doc, use_bin_type=True))
            with pytest.raises(SyncError, match="refused the bundle.*does not match its content"):
                push_bundle(tampered, link, gcfg)
            # A ground station whose key the vehicle has not authorized gets no answer.
            stranger = make_keys(tmp_path / "stranger")
            bad = dataclasses.replace(gcfg, client_secret_key=str(stranger["ground_secret"]), sync_timeout_s=0.5,
                                      sync_attempts=2)
            with pytest.raises(SyncError, match="no acknowledgement"):
                push_bundle(bundle, link, bad)
            assert push_bundle(bundle, link, gcfg).already_present == 2
    assert results == ["lessons_imported", "lessons_imported", "lessons_refused", "lessons_imported"]
    # The refused bundle is not kept among the received ones.
    assert len(list((tmp_path / "incoming_bundles").glob("*.msgpack"))) == 1
    assert len(list((tmp_path / "incoming_bundles" / "refused").glob("*.msgpack"))) == 1
