"""Deadlines and watchdogs: a hung or crashed model is an error, never a stuck vehicle."""

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

from onboard.inference.inference_worker import DeadlineExceeded, ProcessWorker, ThreadWorker, Watchdog, WorkerCrashed, WorkerWedged

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


def test_watchdog_reports_a_stuck_call_once_and_kills_a_stuck_process():
    reports = []
    w = ProcessWorker("sleepy", workers_for_tests.make_sleepy, deadline_s=10.0)
    dog = Watchdog([w], period_s=0.05, kill_after_s=0.2, on_stuck=lambda name, overdue: reports.append(name))
    try:
        w.call(0.0)  # start the process
        dog.start()
        t0 = time.monotonic()
        with pytest.raises(WorkerCrashed):
            _call_with_stale_deadline(w)
        assert time.monotonic() - t0 < 3.0
        assert reports == ["sleepy"]
    finally:
        dog.stop()
        w.close()


def _call_with_stale_deadline(w):
    """A call whose recorded deadline (0.1 s) is far shorter than the caller's wait (5 s):
    only the watchdog can end it early, by killing the process."""
    with w._lock:
        now = time.monotonic()
        w._running = (now, now + 0.1)
        try:
            return w._exchange(30.0, 5.0)
        finally:
            w._running = None


def test_watchdog_flags_a_wedged_thread_worker():
    import threading as _t

    release = _t.Event()
    reports = []
    w = ThreadWorker("hang", deadline_s=0.1)
    dog = Watchdog([w], period_s=0.02, on_stuck=lambda name, overdue: reports.append((name, overdue))).start()
    try:
        w.submit(release.wait, 5)
        time.sleep(0.4)
        assert len(reports) == 1 and reports[0][0] == "hang" and w.health.stuck_for_s > 0.1
    finally:
        release.set()
        dog.stop()
        w.close()
