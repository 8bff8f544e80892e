"""Issue 19.6: a vehicle's status reply claiming `last_seq` = 2^62 made the ground send 430,000
replay requests and drop the first 14 real messages. Now the claim is chased one bounded window
at a time (`replay_window_max`, `replay_request_max` seqs per request, one request per
`replay_timeout_s` while nothing usable comes back), and live frames keep being stored.

Real parts: `aerie ground` as its own process; the lying vehicle is a raw PUB + ROUTER that
publishes real envelopes and answers every status with the spoofed claim and every replay with
nothing. Checked: every replay request lies within the window beyond what the ground holds,
replay requests come no faster than the ground's own status polls, and every live message is
stored."""

from __future__ import annotations

import signal
from pathlib import Path

import zmq

from contract.envelope import encode
from contract.replay import ReplayReply, ReplayRequest, Request, StatusReply, StatusRequest, replies
from contract.replay import requests as request_channel
from ground_station.settings import GroundConfig, VehicleLinkConfig
from tests.faults.wirekit import STREAM, Child, hostile_vehicle, stored_seqs
from tests.telemetry.linkkit import wait_until, write_ground_yaml

CLAIM = 2 ** 62
REQUESTS, REPLIES = request_channel(4096), replies(1 << 20)
LIVE = 60


def test_a_spoofed_last_seq_costs_bounded_replays_and_no_live_frame(tmp_path: Path) -> None:
    ctx = zmq.Context()
    pub, router = hostile_vehicle(ctx)
    requests: list[Request] = []
    try:
        link = VehicleLinkConfig(vehicle_id="uav-s", pub_endpoint=pub.getsockopt_string(zmq.LAST_ENDPOINT),
                                 replay_endpoint=router.getsockopt_string(zmq.LAST_ENDPOINT))
        db = tmp_path / "fl.sqlite"
        cfg = GroundConfig(db_path=str(db), vehicles=[link], curve=False, dashboard_enabled=False,
                           post_flight_enabled=False, stats_interval_s=0.0, status_interval_s=0.1,
                           replay_timeout_s=0.2, replay_window_max=1000, replay_request_max=100)
        yaml_path = write_ground_yaml(tmp_path / "ground.yaml", cfg)
        with Child(["-m", "ground_station.service", "--config", str(yaml_path), "--log-level", "WARNING"]) as ground:

            def serve() -> None:
                while router.poll(0):
                    ident, body = router.recv_multipart()
                    req = REQUESTS.unpack(body)
                    requests.append(req)
                    if isinstance(req, StatusRequest):
                        router.send_multipart([ident, REPLIES.pack(StatusReply("uav-s", STREAM, 1, CLAIM, 0))])
                    elif isinstance(req, ReplayRequest):
                        router.send_multipart([ident, REPLIES.pack(ReplayReply("uav-s", STREAM, 1, CLAIM))])

            first = encode("uav-s", 1, "flight_start", {}, stream=STREAM)
            assert wait_until(lambda: pub.send(first) or serve() or 1 in stored_seqs(db), 30), "never subscribed"
            # The claim is heard; then the real flight goes on, live, one frame per round.
            assert wait_until(lambda: serve() or any(isinstance(r, ReplayRequest) for r in requests), 30)
            for seq in range(2, LIVE + 1):
                pub.send(encode("uav-s", seq, "state", {"seq": seq}, stream=STREAM))
                assert wait_until(lambda: serve() or seq in stored_seqs(db), 30), (seq, stored_seqs(db)[-5:])
            assert stored_seqs(db) == list(range(1, LIVE + 1))
            assert ground.alive()
            ground.proc.send_signal(signal.SIGTERM)
            ground.proc.communicate(timeout=30)
    finally:
        pub.close(0)
        router.close(0)
        ctx.term()
    replays = [r for r in requests if isinstance(r, ReplayRequest)]
    assert replays
    for r in replays:   # never beyond one window past what the ground held, never more than one request's worth
        assert 1 <= r.first <= r.last <= LIVE + cfg.replay_window_max, r
        assert r.last - r.first + 1 <= cfg.replay_request_max, r
    # The rate, measured on the ground's own cadence rather than the clock: it asks for status every
    # 0.1 s and re-sends an unanswered replay every 0.2 s, so replays stay below the status polls
    # (the flood of 430,000 requests came with a handful of status polls).
    statuses = sum(isinstance(r, StatusRequest) for r in requests)
    print(f"{len(replays)} bounded replay requests, {statuses} status polls, {LIVE} live messages stored")
    assert len(replays) <= statuses + 2, (len(replays), statuses)
