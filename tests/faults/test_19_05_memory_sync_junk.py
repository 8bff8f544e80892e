"""Issue 19.5: multipart junk sent to the vehicle's memory-sync socket hung or killed its thread
(EFSM on a REP socket; once the whole process aborted, rc 134). The server is now a ROUTER:
junk of any shape is answered `{op: error}` where it can be, counted, and the next real lesson
sync imports. Real parts: the vehicle's sync server in its own process importing into a real
experience store; the attacker a raw DEALER; the sync the ground's own `push_bundle`."""

from __future__ import annotations

from pathlib import Path

import msgpack
import zmq

from contract.records import StrategicPlan, TaskExperience
from contract.memory_sync import SyncRefusal, answers
from ground_station.memory_sync import push_bundle
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.memory.bundle import export_bundle
from onboard.memory.embedder import MiniLMEmbedder
from onboard.memory.experience_store import ExperienceStore
from onboard.memory.settings import MemoryConfig
from tests.faults.wirekit import vehicle_child

JUNK: list[list[bytes]] = [
    [b"one frame, no REQ delimiter"],
    [b"", b"not msgpack \xff\xfe"],
    [b"", msgpack.packb(["a", "list"])],
    [b"", msgpack.packb({"op": "bundle", "sha256": "0" * 64, "bundle": "not bytes"})],
    [b"a", b"b", b"c", b"d", b"e"],
    [b"", b"", b""],
    [b""],
]


def test_junk_on_the_sync_socket_gets_errors_and_the_next_sync_imports(tmp_path: Path) -> None:
    bundle = tmp_path / "lessons.msgpack"
    with ExperienceStore.open(tmp_path / "ground_memory.sqlite", MiniLMEmbedder.load(), MemoryConfig()) as store:
        plan = store.add_strategic_plan(StrategicPlan("Inspect the tower", '{"sub_goals": []}', "fly high", "{}",
                                                      "success"))
        store.add_task_experience(TaskExperience("reach the tower (Strategy: navigate)", "navigate", "success",
                                                 "followed the river"), parent_uid=plan)
        assert export_bundle(store, bundle, vehicle_id="ground") == 2
    child, pub_ep, replay_ep, sync_ep = vehicle_child(tmp_path / "vehicle", "idle")
    with child:
        ctx = zmq.Context()
        attacker = ctx.socket(zmq.DEALER)
        attacker.linger = 0
        try:
            attacker.connect(sync_ep)
            answered = 0
            for parts in JUNK:
                attacker.send_multipart(parts)
                if attacker.poll(5_000):   # a reply to each junk message (a DEALER reads every one)
                    reply = attacker.recv_multipart()
                    assert isinstance(answers(1 << 20).unpack(reply[-1]), SyncRefusal), reply
                    answered += 1
            assert child.alive()
        finally:
            attacker.close(0)
            ctx.term()
        print(f"{answered} of {len(JUNK)} junk messages answered sync_refused")
        assert answered == len(JUNK), f"only {answered} of {len(JUNK)} junk messages were answered"
        link = VehicleLinkConfig(vehicle_id="uav-x", pub_endpoint=pub_ep, replay_endpoint=replay_ep,
                                 sync_endpoint=sync_ep)
        ack = push_bundle(bundle, link, GroundConfig(vehicles=[link], curve=False, sync_timeout_s=60.0))
        assert (ack.added, ack.already_present) == (2, 0)
        again = push_bundle(bundle, link, GroundConfig(vehicles=[link], curve=False, sync_timeout_s=60.0))
        assert (again.added, again.already_present) == (0, 2)
        assert child.alive()
