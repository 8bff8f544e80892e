"""Deadlines and watchdogs: a hung or crashed model is an error, never a stuck vehicle."""

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

from onboard.inference.inference_worker import DeadlineExceeded, ProcessWorker, ThreadWorker, WorkerCrashed, WorkerWedged

sys.path.insert(0, str(Path(__file__).parent))
import workers_for_tests  # noqa: E402


def test_thread_call_returns_and_raises():
    w = ThreadWorker("t", deadline_s=2.0)
    assert w.call(lambda x: x * 2, 21) == 42
    with pytest.raises(ZeroDivisionError):
        w.call(lambda: 1 / 0)
    w.close()


def test_hung_call_hits_its_deadline_and_wedges_the_worker():
    release = threading.Event()
    w = ThreadWorker("hang", deadline_s=0.2)
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="0.20 s deadline"):
        w.call(release.wait, 30)
    assert time.monotonic() - t0 < 0.5
    with pytest.raises(WorkerWedged):
        w.call(lambda: "next")
    release.set()
    time.sleep(0.05)
    assert w.call(lambda: "recovered") == "recovered"
    assert w.health.deadline_misses == 1
    w.close()


def test_control_loop_keeps_20hz_while_a_model_call_hangs():
    """Stand-in for the bridge's setpoint streamer (re-point at it once it lands):
    a 20 Hz asyncio loop must show no gap > 100 ms while a model call hangs,
    and the hang must surface as DeadlineExceeded."""
    release = threading.Event()
    worker = ThreadWorker("planner", deadline_s=0.5)

    async def scenario():
        ticks: list[float] = []
        stop = asyncio.Event()

        async def streamer():
            period = 0.05
            nxt = time.monotonic()
            while not stop.is_set():
                ticks.append(time.monotonic())
                nxt += period
                await asyncio.sleep(max(0.0, nxt - time.monotonic()))

        task = asyncio.create_task(streamer())
        await asyncio.sleep(0.2)
        with pytest.raises(DeadlineExceeded):
            await worker.call_async(release.wait, 30)  # a model that never answers
        await asyncio.sleep(0.2)
        stop.set()
        await task
        return ticks

    ticks = asyncio.run(scenario())
    release.set()
    worker.close()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) >= 15
    assert max(gaps) < 0.1, f"largest setpoint gap {max(gaps) * 1000:.0f} ms"


def test_process_worker_kills_a_hung_model_and_restarts():
    w = ProcessWorker("sleepy", workers_for_tests.make_sleepy, deadline_s=1.0)
    try:
        assert w.call(0.0) == "slept 0.0"
        t0 = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="killed"):
            w.call(30.0, deadline_s=0.3)
        assert time.monotonic() - t0 < 2.0
        assert w.call(0.0) == "slept 0.0"  # a fresh process
    finally:
        w.close()


def test_process_worker_surfaces_a_crash():
    w = ProcessWorker("crashy", workers_for_tests.make_crashy, deadline_s=5.0)
    try:
        assert w.call("hello") == "hello"
        with pytest.raises(WorkerCrashed, match="exit code 139"):
            w.call("crash")
        assert w.call("again") == "again"
    finally:
        w.close()
