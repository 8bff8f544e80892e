"""CurveZMQ: a peer without the right key is refused, counted, and hears nothing."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import zmq

from ground_station.flight_log import FlightLog
from contract import curve_keys
from contract.envelope import encode
from onboard.telemetry.publisher import TelemetryPublisher
from tests.telemetry.linkkit import GroundThread, ground_cfg, make_keys, vehicle_cfg, wait_until


def test_impostor_vehicle_is_refused_by_the_ground_station(tmp_path: Path) -> None:
    keys = make_keys(tmp_path)
    impostor = curve_keys.generate_link_keys(tmp_path / "impostor")
    # The impostor knows the ground's public key (it is public) but not the vehicle's secret key.
    cfg = vehicle_cfg(tmp_path, curve=True, keys=keys)
    cfg = dataclasses.replace(cfg, server_secret_key=str(impostor["vehicle_secret"]))
    with TelemetryPublisher(cfg, "uav-a") as fake:
        gcfg = ground_cfg(tmp_path, [fake], curve=True, keys=keys)   # pins the real vehicle's public key
        with GroundThread(gcfg) as ground:
            for _ in range(20):
                fake.publish("state", {"evil": True})
                time.sleep(0.02)
            assert wait_until(lambda: ground.station.counters()["uav-a"].get("unauthenticated", 0) >= 2, 10)
            counters = ground.station.counters()["uav-a"]
    assert not counters.get("received_live") and not counters.get("received_replay")
    with FlightLog.open(gcfg.db_path) as fl:
        assert fl.seqs("uav-a") == []
        assert fl.rejects("uav-a")["unauthenticated"] >= 2


def _listen(endpoint: str, replay_endpoint: str, *, secret: Path | None, server_public: Path | None,
            seconds: float) -> tuple[int, int]:
    """Frames a client (CURVE with the given keys, or plain) hears on SUB and DEALER in ``seconds``."""
    ctx = zmq.Context()
    sub, dealer = ctx.socket(zmq.SUB), ctx.socket(zmq.DEALER)
    try:
        for s in (sub, dealer):
            s.linger = 0
            if secret is not None:
                curve_keys.make_client(s, secret, server_public)
        sub.subscribe(b"")
        sub.connect(endpoint)
        dealer.connect(replay_endpoint)
        dealer.send(b"\x81\xa2op\xa6status", zmq.NOBLOCK)
        heard_sub = heard_dealer = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if sub.poll(20):
                sub.recv()
                heard_sub += 1
            if dealer.poll(0):
                dealer.recv()
                heard_dealer += 1
        return heard_sub, heard_dealer
    finally:
        sub.close(0)
        dealer.close(0)
        ctx.term()


def test_ground_without_an_authorized_key_is_refused_by_the_vehicle(tmp_path: Path) -> None:
    keys = make_keys(tmp_path)
    stranger = curve_keys.generate_link_keys(tmp_path / "stranger")
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=True, keys=keys), "uav-b") as pub:
        stop = threading.Event()

        def chatter() -> None:
            while not stop.is_set():
                pub.publish("state", {"secret": "position"})
                time.sleep(0.01)

        t = threading.Thread(target=chatter, daemon=True)
        t.start()
        try:
            # A ground key the vehicle has not authorized, then no CURVE at all: both hear nothing.
            unauthorized = _listen(pub.pub_endpoint, pub.replay_endpoint, secret=stranger["ground_secret"],
                                   server_public=keys["vehicle_public"], seconds=1.0)
            plain = _listen(pub.pub_endpoint, pub.replay_endpoint, secret=None, server_public=None, seconds=0.5)
            # The authorized ground station does hear it (the test is not vacuous).
            authorized = _listen(pub.pub_endpoint, pub.replay_endpoint, secret=keys["ground_secret"],
                                 server_public=keys["vehicle_public"], seconds=1.0)
        finally:
            stop.set()
            t.join(5)
        refused = pub.replay_counters
    assert unauthorized == (0, 0) and plain == (0, 0)
    assert authorized[0] > 0 and authorized[1] == 1
    assert refused["auth_failed"] >= 2 and refused["handshake_failed"] >= 1


def test_unencrypted_frames_cannot_be_injected_into_a_curve_ground_station(tmp_path: Path) -> None:
    keys = make_keys(tmp_path)
    ctx = zmq.Context()
    pub, router = ctx.socket(zmq.PUB), ctx.socket(zmq.ROUTER)
    try:
        for s in (pub, router):
            s.linger = 0
        pub.bind("tcp://127.0.0.1:*")
        router.bind("tcp://127.0.0.1:*")

        class Fake:
            vehicle_id = "uav-c"
            pub_endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
            replay_endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)

        gcfg = ground_cfg(tmp_path, [Fake()], curve=True, keys=keys)  # type: ignore[list-item]
        with GroundThread(gcfg) as ground:
            for seq in range(1, 21):
                pub.send(encode("uav-c", seq, "state", {}, stream="00000000000000ac"))
                time.sleep(0.02)
            assert wait_until(lambda: ground.station.counters()["uav-c"].get("unauthenticated", 0) >= 2, 10)
            assert ground.station.cursors()["uav-c"] == 0
    finally:
        pub.close(0)
        router.close(0)
        ctx.term()
