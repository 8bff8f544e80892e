"""`aerie bench fleet-channel`: peer to peer or through a relay? The fleet channel's two shapes, measured.

N real `FleetChannel`s (each its own thread and sockets, on loopback, CurveZMQ
off in both shapes: it costs the same per connection in either) publish
position reports at `report_rate_hz` and a full findings frame (32 landmarks,
32 signs, 32 places: the largest a frame may be) at `findings_rate_hz`.

- `p2p`: each member subscribes to every other member's PUB (N x (N-1) connections),
  as `aerie fleet` runs it.
- `relay`: one relay (a ground-station-like process: a ZeroMQ XSUB connected to
  every member's PUB, proxied to one XPUB) that every member subscribes to
  (2N connections); each member also gets its own frames back, which it refuses
  (`rejected_own_id`) and this bench does not count as delivered.

Measured per shape: delivery latency (send to hand-over, one monotonic clock:
the position report's latitude carries its send count, the findings frame its
seq), the share of frames delivered, and the CPU the whole process used per
wall second. The members share one process and its 2 cores here, so the CPU
figure is the fleet's on one machine, not one vehicle's.

    aerie bench fleet-channel --members 2,4,8,16 --seconds 20 --json PATH
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import socket
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from contract.bounded_socket import bounded_socket
from contract.fleet_discovery import MAX_ITEMS, FleetDiscovery, LandmarkFinding, LookedFrom, SignRead
from firmware_bridge.fleet_picture import TrafficReport
from onboard.fleet.channel import FleetChannel
from onboard.fleet.settings import FleetChannelConfig, FleetPeer

BASE_LAT = 60.17
TAG_STEP = 1e-7  # degrees of latitude per report counted (1 cm)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Member:
    """One member's callbacks: what it sent when, and when it got the others' frames."""

    def __init__(self, member_id: int, sent_at: dict, got: list, lock: threading.Lock) -> None:
        self.member_id = member_id
        self.count = 0
        self.sent_at, self.got, self.lock = sent_at, got, lock
        name = "N" * 40
        self.frame = FleetDiscovery(member_id, 1, "bench", tuple(
            LandmarkFinding(name, BASE_LAT, 24.94, 10.0, 3) for _ in range(MAX_ITEMS)),
            tuple(SignRead(name, BASE_LAT, 24.94) for _ in range(MAX_ITEMS)),
            tuple(LookedFrom(BASE_LAT, 24.94) for _ in range(MAX_ITEMS)))
        self.channel: FleetChannel | None = None

    def own_position(self) -> TrafficReport:
        self.count += 1
        with self.lock:
            self.sent_at[("r", self.member_id, self.count)] = time.monotonic()
        return TrafficReport(self.member_id, BASE_LAT + self.count * TAG_STEP, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0)

    def own_findings(self) -> FleetDiscovery:
        # The channel gives the frame its next seq: one more than all frames sent so far.
        seq = self.channel.counters().get("sent", 0) + self.channel.counters().get("findings_sent", 0) + 1
        with self.lock:
            self.sent_at[("f", self.member_id, seq)] = time.monotonic()
        return self.frame

    def deliver(self, reports: list[TrafficReport]) -> tuple:
        now = time.monotonic()
        with self.lock:
            for r in reports:
                self.got.append(("r", r.member_id, round((r.lat - BASE_LAT) / TAG_STEP), now))
        return ()

    def take(self, d: FleetDiscovery) -> None:
        now = time.monotonic()
        with self.lock:
            self.got.append(("f", d.member_id, d.seq, now))


class _Relay:
    """XSUB connected to every member, proxied to one XPUB: the ground station as a hub."""

    def __init__(self, members: list[str]) -> None:
        import zmq

        self.ctx = zmq.Context()
        self.endpoint = f"tcp://127.0.0.1:{_free_port()}"
        self._members = members
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="relay")

    def start(self) -> "_Relay":
        self._thread.start()
        self._ready.wait(10.0)
        return self

    def _run(self) -> None:
        import zmq

        # bounded like every socket (a relay takes the members' largest frame; the control word is tiny)
        limit = FleetChannelConfig().max_message_bytes
        xsub, xpub = bounded_socket(self.ctx, zmq.XSUB, limit), bounded_socket(self.ctx, zmq.XPUB, limit)
        ctl = bounded_socket(self.ctx, zmq.PAIR, 64)
        ctl.bind("inproc://relay-ctl")
        for ep in self._members:
            xsub.connect(ep)
        xpub.bind(self.endpoint)
        self._ready.set()
        try:
            zmq.proxy_steerable(xsub, xpub, None, ctl)
        except zmq.ZMQError:
            pass
        finally:
            for s in (xsub, xpub, ctl):
                s.close(0)

    def stop(self) -> None:
        import zmq

        ctl = bounded_socket(self.ctx, zmq.PAIR, 64)
        ctl.connect("inproc://relay-ctl")
        ctl.send(b"TERMINATE")
        self._thread.join(10.0)
        ctl.close(0)
        self.ctx.term()


def run_shape(n: int, shape: str, seconds: float, report_hz: float, findings_hz: float) -> dict[str, Any]:
    eps = [f"tcp://127.0.0.1:{_free_port()}" for _ in range(n)]
    sent_at: dict = {}
    got: list = []
    lock = threading.Lock()
    members = [_Member(i + 1, sent_at, got, lock) for i in range(n)]
    relay = _Relay(eps).start() if shape == "relay" else None
    for i, m in enumerate(members):
        peers = ((FleetPeer(relay.endpoint),) if relay is not None
                 else tuple(FleetPeer(eps[j], member_id=j + 1) for j in range(n) if j != i))
        fan_in = n - 1 if relay is not None else 1  # members whose frames one peer socket carries
        base = FleetChannelConfig()  # the per-peer rate limits, raised to what this shape sends on one socket
        cfg = FleetChannelConfig(pub_endpoint=eps[i], peers=peers, curve=False, report_rate_hz=report_hz,
                                 findings_rate_hz=findings_hz,
                                 peer_max_frames_hz=max(base.peer_max_frames_hz, fan_in * (report_hz + findings_hz)),
                                 peer_max_findings_hz=max(base.peer_max_findings_hz, fan_in * findings_hz))
        m.channel = FleetChannel(cfg, m.member_id, m.own_position, m.deliver, own_findings=m.own_findings,
                                 take_findings=m.take)
    cpu0, t0 = _cpu_s(), time.monotonic()
    try:
        for m in members:
            m.channel.start()
        time.sleep(seconds)
    finally:
        for m in members:
            m.channel.close()
        if relay is not None:
            relay.stop()
    wall, cpu = time.monotonic() - t0, _cpu_s() - cpu0
    warm = t0 + 2.0  # connections take a moment: frames sent in the first 2 s are not judged
    out: dict[str, Any] = {"members": n, "shape": shape, "seconds": round(wall, 1),
                           "connections": 2 * n if relay is not None else n * (n - 1),
                           "cpu_s_per_s": round(cpu / wall, 3)}
    for kind, label in (("r", "reports"), ("f", "findings")):
        judged = {k: t for k, t in sent_at.items() if k[0] == kind and warm <= t <= t0 + seconds - 1.0}
        lat_ms, delivered = [], 0
        for k2, member, seq, t in got:
            if k2 != kind:
                continue
            t_sent = judged.get((kind, member, seq))
            if t_sent is not None:
                lat_ms.append((t - t_sent) * 1000.0)
                delivered += 1
        expected = len(judged) * (n - 1)
        out[label] = {"sent": len(judged), "expected_deliveries": expected, "delivered": delivered,
                      "delivered_share": round(delivered / expected, 4) if expected else None,
                      "latency_ms_p50": round(float(np.percentile(lat_ms, 50)), 2) if lat_ms else None,
                      "latency_ms_p99": round(float(np.percentile(lat_ms, 99)), 2) if lat_ms else None}
    c = [m.channel.counters() for m in members]
    out["rejected_own_id"] = sum(x.get("rejected_own_id", 0) for x in c)
    out["rejected_other"] = sum(v for x in c for k, v in x.items() if k.startswith("rejected_") and k != "rejected_own_id")
    return out


def table(rows: list[dict]) -> str:
    lines = [f"{'members':>7} {'shape':<6} {'conn':>5} {'CPU/s':>6} {'report p50/p99 ms':>18} {'delivered':>9} "
             f"{'findings p50/p99 ms':>20} {'delivered':>9}"]
    for r in rows:
        rep, fnd = r["reports"], r["findings"]
        lines.append(f"{r['members']:>7} {r['shape']:<6} {r['connections']:>5} {r['cpu_s_per_s']:>6.3f} "
                     f"{str(rep['latency_ms_p50']) + ' / ' + str(rep['latency_ms_p99']):>18} "
                     f"{str(rep['delivered_share']):>9} "
                     f"{str(fnd['latency_ms_p50']) + ' / ' + str(fnd['latency_ms_p99']):>20} "
                     f"{str(fnd['delivered_share']):>9}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie bench fleet-channel", description=__doc__.split("\n\n")[0])
    p.add_argument("--members", default="2,4,8")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--report-rate-hz", type=float, default=FleetChannelConfig().report_rate_hz)
    p.add_argument("--findings-rate-hz", type=float, default=FleetChannelConfig().findings_rate_hz)
    p.add_argument("--json", default="")
    args = p.parse_args(argv)
    rows = []
    for n in (int(x) for x in args.members.split(",")):
        for shape in ("p2p", "relay"):
            rows.append(run_shape(n, shape, args.seconds, args.report_rate_hz, args.findings_rate_hz))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"bench": "fleet_channel", "host": platform.node(),
                                               "seconds": args.seconds, "rows": rows}, indent=1) + "\n")
    return 0
