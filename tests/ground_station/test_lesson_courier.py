"""The lesson courier over real CurveZMQ links into real vehicle memories (sqlite-vec, MiniLM as memory sync's tests).

Bundles are the post-flight analyser's own (``analyse`` + ``export_analysis`` on a
recorded flight's messages), written where ``aerie ground`` writes them; each vehicle
is a :class:`MemorySyncServer` importing into its own :class:`ExperienceStore` file,
one connection per import as the supervisor does.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import time
from pathlib import Path

import msgpack
import pytest

from contract.records import STRATEGIC_PLAN
from ground_station import service
from ground_station.lesson_courier import DELIVERED, REFUSED, LessonCourier
from ground_station.post_flight import analyse, bundle_name, export_analysis
from ground_station.settings import GroundConfig, VehicleLinkConfig
from onboard.telemetry.memory_sync import MemorySyncServer
from tests.ground_station.test_post_flight import DISTANCES, flight
from tests.telemetry.linkkit import make_keys, vehicle_cfg, wait_until

# Generous: imports embed with MiniLM on a busy 2-core machine.
DEADLINE_S = 90.0


@pytest.fixture(scope="module")
def embedder():
    from onboard.memory.embedder import MiniLMEmbedder

    return MiniLMEmbedder.load()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Vehicle:
    """One vehicle's memory file and its sync server (started on demand: a vehicle can be off)."""

    def __init__(self, tmp: Path, vehicle_id: str, embedder, keys: dict[str, Path] | None, port: int | None = None):
        self.vehicle_id = vehicle_id
        self.embedder = embedder
        self.dir = tmp / vehicle_id
        self.dir.mkdir(parents=True)
        self.memory = self.dir / "memory.sqlite"
        self.port = port or free_port()
        self.cfg = dataclasses.replace(vehicle_cfg(self.dir, curve=keys is not None, keys=keys),
                                       sync_endpoint=f"tcp://127.0.0.1:{self.port}")
        self.server: MemorySyncServer | None = None
        self.link = VehicleLinkConfig(vehicle_id=vehicle_id, sync_endpoint=f"tcp://127.0.0.1:{self.port}",
                                      server_public_key=str(keys["vehicle_public"]) if keys else "")

    def _import(self, path: Path):
        from onboard.memory.bundle import import_bundle
        from onboard.memory.experience_store import ExperienceStore

        with ExperienceStore.open(self.memory, self.embedder) as store:
            return import_bundle(store, path)

    def start(self) -> "Vehicle":
        self.server = MemorySyncServer(self.cfg, data_dir=self.dir, import_fn=self._import).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.close()

    def store(self):
        from onboard.memory.experience_store import ExperienceStore

        return ExperienceStore.open(self.memory, self.embedder)

    def count(self) -> int:
        if not self.memory.exists():
            return 0
        with self.store() as s:
            return s.count()


def make_bundle(out_dir: Path, ground_memory: Path, embedder, vehicle_id: str, start_seq: int = 1, *,
                distances: list[float] = DISTANCES) -> Path:
    """A flight of ``vehicle_id`` analysed and exported as ``aerie ground``'s watcher does; the bundle's path."""
    from onboard.memory.experience_store import ExperienceStore

    analysis = analyse(flight(start_seq, distances=distances), vehicle_id=vehicle_id, start_seq=start_seq)
    assert analysis is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / bundle_name(vehicle_id, start_seq)
    with ExperienceStore.open(ground_memory, embedder) as store:
        export_analysis(analysis, store, path)
    return path


@pytest.fixture
def rig(tmp_path: Path, embedder):
    keys = make_keys(tmp_path)
    vehicles: list[Vehicle] = []

    def vehicle(vehicle_id: str) -> Vehicle:
        v = Vehicle(tmp_path, vehicle_id, embedder, keys)
        vehicles.append(v)
        return v

    def ground(links: list[VehicleLinkConfig], **over) -> GroundConfig:
        cfg = GroundConfig(vehicles=links, client_secret_key=str(keys["ground_secret"]),
                           post_flight_dir=str(tmp_path / "ground" / "post_flight"),
                           post_flight_memory=str(tmp_path / "ground" / "ground_memory.sqlite"),
                           lesson_delivery_ledger=str(tmp_path / "ground" / "deliveries.sqlite"),
                           lesson_delivery_interval_s=0.1, lesson_delivery_timeout_s=30.0,
                           lesson_delivery_max_backoff_s=1.0)
        return dataclasses.replace(cfg, **over)

    def bundle(vehicle_id: str, start_seq: int = 1, **kw) -> Path:
        return make_bundle(tmp_path / "ground" / "post_flight", tmp_path / "ground" / "ground_memory.sqlite",
                           embedder, vehicle_id, start_seq, **kw)

    yield vehicle, ground, bundle
    for v in vehicles:
        v.stop()


def test_two_vehicles_get_the_bundle_once(rig) -> None:
    vehicle, ground, bundle = rig
    v1, v2 = vehicle("aerie-1").start(), vehicle("aerie-2").start()
    path = bundle("aerie-1")
    courier = LessonCourier(ground([v1.link, v2.link]))
    try:
        assert courier.run_pass() == 2
        assert v1.count() == 3 and v2.count() == 3
        received = (v1.server.counters["received"], v2.server.counters["received"])
        assert courier.run_pass() == 0                          # nothing new: nothing sent
        assert (v1.server.counters["received"], v2.server.counters["received"]) == received
        rows = courier.ledger().rows()
        assert {(d.bundle, d.vehicle_id, d.outcome, d.added, d.already_present) for d in rows} == {
            (path.name, "aerie-1", DELIVERED, 3, 0), (path.name, "aerie-2", DELIVERED, 3, 0)}
        assert all(d.at > 0 and len(d.sha256) == 64 for d in rows)
        c = courier.counters()
        assert c["aerie-2"]["delivered"] == 1 and c["aerie-2"]["pending"] == 0 and c["aerie-2"]["refused"] == 0
    finally:
        courier.stop()


def test_an_off_vehicle_does_not_hold_up_the_others_and_gets_its_lessons_when_it_comes_up(rig) -> None:
    vehicle, ground, bundle = rig
    off = vehicle("aerie-2")                 # no server on its endpoint yet; listed first, so a courier
    v1 = vehicle("aerie-1").start()          # that tried vehicles in turn would wait on it
    bundle("aerie-1")
    courier = LessonCourier(ground([off.link, v1.link], lesson_delivery_timeout_s=60.0)).start()
    try:
        assert wait_until(lambda: courier.counters()["aerie-1"]["delivered"] == 1, DEADLINE_S)
        assert v1.count() == 3
        # aerie-1 has its lessons while aerie-2's first attempt (60 s) is still waiting for an answer
        c = courier.counters()
        assert c["aerie-2"]["no_answer"] == 0 and c["aerie-2"]["pending"] == 1, c
        assert c["aerie-1"]["delivered"] == 1 and c["aerie-1"]["pending"] == 0, c
        off.start()                          # the vehicle comes up: the request waiting for it goes through
        assert wait_until(lambda: off.count() == 3, DEADLINE_S)
        assert wait_until(lambda: courier.counters()["aerie-2"]["pending"] == 0, DEADLINE_S)
    finally:
        courier.stop()


def test_a_silent_vehicle_backs_off_keeps_its_bundles_and_gets_them_later(rig) -> None:
    """Back-offs on a synthetic clock; the sockets' own waits long enough for a busy machine."""
    vehicle, ground, bundle = rig
    off, v1 = vehicle("aerie-2"), vehicle("aerie-1").start()
    uids = {e["uid"] for p in (bundle("aerie-1"), bundle("aerie-1", 100, distances=[50.0, 40.0, 30.0]))
            for e in msgpack.unpackb(p.read_bytes(), raw=False)["experiences"]}
    now = [1000.0]
    courier = LessonCourier(ground([off.link, v1.link], lesson_delivery_timeout_s=3.0,
                                   lesson_delivery_interval_s=2.0, lesson_delivery_max_backoff_s=5.0),
                            clock=lambda: now[0])
    try:
        assert courier.run_pass() == 2                           # aerie-1 took both, aerie-2 did not answer
        c = courier.counters()["aerie-2"]
        assert (c["no_answer"], c["pending"], c["delivered"]) == (1, 2, 0)
        assert c["backing_off_s"] > 2.0                          # 2 x interval after one silence
        now[0] += 1.0
        assert courier.run_pass() == 0                           # left alone while backing off: no attempt
        assert courier.counters()["aerie-2"]["no_answer"] == 1
        off.start()
        now[0] += 5.0                                            # the back-off (at most 5 s) is over

        def passes_until_delivered() -> bool:
            courier.run_pass()
            now[0] += 5.0
            return courier.counters()["aerie-2"]["pending"] == 0

        assert wait_until(passes_until_delivered, DEADLINE_S, interval=0.2)
        assert off.count() == v1.count() == len(uids)
        assert courier.counters()["aerie-2"]["delivered"] == 2
    finally:
        courier.stop()


def test_stopping_does_not_sit_out_a_silent_vehicles_timeout(rig) -> None:
    vehicle, ground, bundle = rig
    off = vehicle("aerie-2")
    bundle("aerie-1")
    courier = LessonCourier(ground([off.link], lesson_delivery_timeout_s=300.0)).start()
    assert wait_until(lambda: courier.counters()["aerie-2"]["attempts"] == 1, DEADLINE_S)
    t0 = time.monotonic()
    courier.stop()
    assert time.monotonic() - t0 < 8.0    # cancelled at once: not stop()'s 10 s join, nor the push's 300 s
    c = courier.counters()["aerie-2"]
    assert (c["pending"], c["no_answer"]) == (1, 0)            # a cancelled wait is not a silence


def test_a_lost_ledger_resends_and_the_vehicle_answers_already_present(rig) -> None:
    vehicle, ground, bundle = rig
    v1 = vehicle("aerie-1").start()
    bundle("aerie-1")
    cfg = ground([v1.link])
    first = LessonCourier(cfg)
    assert first.run_pass() == 1
    first.stop()
    ledger = Path(cfg.lesson_delivery_ledger)
    for p in ledger.parent.glob(ledger.name + "*"):            # the file and its WAL/SHM
        p.unlink()
    restarted = LessonCourier(cfg)                              # a ground restart that lost the ledger
    try:
        assert restarted.run_pass() == 1
        [row] = restarted.ledger().rows("aerie-1")
        assert (row.outcome, row.added, row.already_present) == (DELIVERED, 0, 3)
        assert v1.count() == 3                                  # no duplicate in the vehicle's memory
        assert restarted.run_pass() == 0                        # and settled again
    finally:
        restarted.stop()


def test_vehicle_one_lesson_is_retrieved_by_vehicle_two_at_plan_time(rig) -> None:
    vehicle, ground, bundle = rig
    v2 = vehicle("aerie-2").start()
    path = bundle("aerie-1")                                    # aerie-1's flight; aerie-2 never flew it
    courier = LessonCourier(ground([v2.link]))
    try:
        assert courier.run_pass() == 1
    finally:
        courier.stop()
    instruction = msgpack.unpackb(path.read_bytes(), raw=False)["experiences"][0]["fields"]["task_instruction"]
    assert instruction == "find the kiosk"
    with v2.store() as store:
        hits = store.retrieve_plans(instruction)               # what generate_plan_with_rag asks at plan time
        assert hits and hits[0].record.task_instruction == instruction
        sources = {item.uid: item.source for item in store.iter_experiences(STRATEGIC_PLAN)}
        assert sources[hits[0].uid] == "bundle:aerie-1"
        assert hits[0].record.reflection_note


def test_a_refused_bundle_is_recorded_not_retried_and_stops_nothing(rig) -> None:
    vehicle, ground, bundle = rig
    v1, v2 = vehicle("aerie-1").start(), vehicle("aerie-2").start()
    good = bundle("aerie-1")
    doc = msgpack.unpackb(good.read_bytes(), raw=False)
    doc["experiences"][0]["fields"]["task_instruction"] = "edited without a new id"
    tampered = good.with_name("a-tampered.bundle")             # sorts first: refused before the good one goes
    tampered.write_bytes(msgpack.packb(doc, use_bin_type=True))
    truncated = good.with_name("b-truncated.bundle")
    truncated.write_bytes(good.read_bytes()[:40])
    courier = LessonCourier(ground([v1.link, v2.link]))
    try:
        assert courier.run_pass() == 6
        assert v1.count() == v2.count() == 3
        for vid in ("aerie-1", "aerie-2"):
            rows = {d.bundle: d for d in courier.ledger().rows(vid)}
            assert rows[good.name].outcome == DELIVERED
            assert rows[tampered.name].outcome == REFUSED and "does not match its content" in rows[tampered.name].reason
            assert rows[truncated.name].outcome == REFUSED and "not a msgpack bundle" in rows[truncated.name].reason
            c = courier.counters()[vid]
            assert (c["delivered"], c["refused"], c["pending"]) == (1, 2, 0)
        received = v1.server.counters["received"]
        assert received == 2                                    # the truncated one never left the ground
        assert courier.run_pass() == 0
        assert v1.server.counters["received"] == received       # refused once, not again each pass
    finally:
        courier.stop()


def test_aerie_ground_delivers_and_reports_per_vehicle(tmp_path: Path, embedder,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    v = Vehicle(tmp_path, "a", embedder, None).start()
    try:
        make_bundle(tmp_path / "post_flight", tmp_path / "ground_memory.sqlite", embedder, "b")
        path = tmp_path / "ground.yaml"
        path.write_text("db_path: log.sqlite\ncurve: false\ndashboard_enabled: false\npost_flight_enabled: false\n"
                        "lesson_delivery_interval_s: 0.1\nvehicles:\n  - vehicle_id: a\n"
                        "    pub_endpoint: tcp://127.0.0.1:1\n    replay_endpoint: tcp://127.0.0.1:2\n"
                        f"    sync_endpoint: {v.link.sync_endpoint}\n")
        t0 = time.monotonic()
        assert service.main(["--config", str(path), "--duration", "3", "--log-level", "WARNING"]) == 0
        assert time.monotonic() - t0 < 60.0
        report = json.loads(capsys.readouterr().out)
        assert report["lesson_delivery"]["a"]["delivered"] == 1 and report["lesson_delivery"]["a"]["pending"] == 0
        assert v.count() == 3 and (tmp_path / "deliveries.sqlite").exists()
    finally:
        v.stop()
