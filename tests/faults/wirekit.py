"""Shared pieces of the wire fault tests: child processes, a raw attacker vehicle, RSS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.telemetry.linkkit import REPO

STREAM = "fa01700000000001"   # the stream id the attacker's hand-made envelopes carry


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


class Child:
    """A process of this repo, its stdout read line by line; killed at exit if still running."""

    def __init__(self, args: list[str], cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=child_env(), cwd=str(cwd or REPO))

    def readline(self) -> str:
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            raise AssertionError(f"child ended: rc={self.proc.poll()} stderr={self.stderr_tail()}")
        return line.strip()

    def read_until(self, prefix: str) -> str:
        while True:
            line = self.readline()
            if line.startswith(prefix):
                return line

    def stderr_tail(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read()[-3000:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


def vehicle_child(data_dir: Path, mode: str, *endpoints: str) -> tuple[Child, str, str, str]:
    """The vehicle's telemetry in its own process; returns it and its PUB, ROUTER and sync endpoints.

    ``endpoints``: the PUB and ROUTER to bind (a restarted vehicle keeps its addresses)."""
    child = Child(["-m", "tests.faults.vehicle_child", str(data_dir), mode, *endpoints])
    _, pub, replay, sync = child.read_until("endpoints ").split()
    return child, pub, replay, sync


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def zmtp_subscribe(endpoint: str, topic: bytes, timeout_s: float = 60.0) -> str:
    """Connect to a ZeroMQ PUB as a raw ZMTP 3.0 SUB peer and send one subscription of ``topic``.

    Returns how the peer ended the connection ("closed" or "reset"). A hand-made peer rather
    than a libzmq SUB: libzmq 4.3.5 itself segfaults at ``ctx.term()`` once a peer has dropped
    its oversized subscription, which would crash the test process instead of the vehicle.
    """
    import socket
    import struct

    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
    prop = b"\x0bSocket-Type" + struct.pack(">I", 3) + b"SUB"
    ready_body = b"\x05READY" + prop
    ready = b"\x04" + bytes([len(ready_body)]) + ready_body
    body = b"\x01" + topic
    message = b"\x02" + struct.pack(">Q", len(body)) + body
    with socket.create_connection((host, int(port)), timeout=timeout_s) as s:
        try:
            s.sendall(greeting + ready)
            s.sendall(message)
            while s.recv(65536):   # the PUB sends its greeting and READY, then must drop us
                pass
        except (ConnectionResetError, BrokenPipeError):
            return "reset"
    return "closed"


def stored_seqs(db: Path) -> list[int]:
    """Every seq in a flight log, read-only (empty while the ground has not created it yet)."""
    import sqlite3

    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
            return [r[0] for r in conn.execute("SELECT seq FROM messages ORDER BY seq")]
    except sqlite3.Error:
        return []   # not created yet


def hostile_vehicle(ctx: Any) -> tuple[Any, Any]:
    """A raw PUB and ROUTER bound on free loopback ports: a vehicle the test writes by hand."""
    import zmq

    pub, router = ctx.socket(zmq.PUB), ctx.socket(zmq.ROUTER)
    for s in (pub, router):
        s.linger = 0
        s.bind("tcp://127.0.0.1:*")
    return pub, router
