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


def _wait_until(cond, timeout_s: float = 30.0) -> bool:
    """Poll ``cond`` until it holds; the deadline is generous, for a loaded machine (a deadline, not a speed claim)."""
    end = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_hung_call_hits_its_deadline_and_wedges_the_worker():
    release = threading.Event()
    w = ThreadWorker("hang", deadline_s=0.2)
    with pytest.raises(DeadlineExceeded, match="0.20 s deadline"):
        w.call(release.wait, 30)
    assert w.in_flight() is not None  # the call is still stuck on the worker's thread
    with pytest.raises(WorkerWedged):
        w.call(lambda: "next")
    release.set()
    assert _wait_until(lambda: w.in_flight() is None), "the released call never finished"
    assert w.call(lambda: "recovered") == "recovered"
    assert w.health.deadline_misses == 1
    w.close()


def test_control_loop_keeps_running_while_a_model_call_hangs():
    """The asyncio loop keeps turning while a model call hangs, and the hang surfaces as DeadlineExceeded.

    Shown by ordering, not by timing: the hung call itself waits until the loop has ticked five times
    after it started (impossible if the call blocked the loop), and a ticker that yields on every loop
    turn must run between the call's submission and its DeadlineExceeded. The setpoint period under
    load is a figure, not a pass/fail bound: ``aerie bench link`` reports it (tests/e2e/
    test_hung_model_vs_setpoints.py checks the real streamer keeps the vehicle out of failsafe).
    """
    release = threading.Event()
    worker = ThreadWorker("planner", deadline_s=0.5)

    async def scenario():
        ticks = 0
        stop = asyncio.Event()
        call_started = threading.Event()
        loop_ran_during_call = threading.Event()
        seen_at_start = [0]

        async def ticker():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                if call_started.is_set() and ticks - seen_at_start[0] >= 5:
                    loop_ran_during_call.set()
                await asyncio.sleep(0)  # yield on every loop turn

        def model_that_waits_for_the_loop():
            seen_at_start[0] = ticks
            call_started.set()
            return loop_ran_during_call.wait(60)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        # 1. a call that can only finish if the loop keeps running while it is in flight
        assert await worker.call_async(model_that_waits_for_the_loop, deadline_s=120) is True
        # 2. a model that never answers: DeadlineExceeded, and the loop ticked while it was awaited
        before = ticks
        with pytest.raises(DeadlineExceeded):
            await worker.call_async(release.wait, 30)
        ticked_during_hang = ticks - before
        stop.set()
        await task
        return ticked_during_hang

    ticked_during_hang = asyncio.run(scenario())
    release.set()
    worker.close()
    assert ticked_during_hang >= 1


def test_process_worker_kills_a_hung_model_and_restarts():
    w = ProcessWorker("sleepy", workers_for_tests.make_sleepy, deadline_s=1.0)
    try:
        assert w.call(0.0) == "slept 0.0"
        with pytest.raises(DeadlineExceeded, match="killed"):
            w.call(30.0, deadline_s=0.3)  # the child would sleep 30 s: only the kill ends it early
        assert w.health.deadline_misses == 1
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
        with pytest.raises(WorkerCrashed):  # a crash, not the caller's own DeadlineExceeded: the watchdog killed it
            _call_with_stale_deadline(w)
        assert reports == ["sleepy"]
    finally:
        dog.stop()
        w.close()


def _call_with_stale_deadline(w):
    """A call whose recorded deadline (0.1 s) is far shorter than the caller's wait (60 s):
    only the watchdog can end it early, by killing the process (the caller's own deadline
    would raise DeadlineExceeded instead)."""
    with w._lock:
        now = time.monotonic()
        w._running = (now, now + 0.1)
        try:
            return w._exchange(120.0, 60.0)
        finally:
            w._running = None


def test_watchdog_flags_a_wedged_thread_worker():
    import threading as _t

    release = _t.Event()
    reports = []
    w = ThreadWorker("hang", deadline_s=0.1)
    dog = Watchdog([w], period_s=0.02, on_stuck=lambda name, overdue: reports.append((name, overdue))).start()
    try:
        w.submit(release.wait, 60)
        assert _wait_until(lambda: reports), "the watchdog never reported the stuck call"
        assert _wait_until(lambda: w.health.stuck_for_s > 0.1), "stuck_for_s does not grow"
        dog.check()
        dog.check()  # checked again while still stuck: still one report
        assert len(reports) == 1 and reports[0][0] == "hang"
    finally:
        release.set()
        dog.stop()
        w.close()


def test_process_worker_reports_a_model_that_fails_to_load():
    w = ProcessWorker("broken", workers_for_tests.make_broken, deadline_s=5.0)
    with pytest.raises(WorkerCrashed, match="failed to load: OSError: cannot open /models/missing.gguf"):
        w.call("x")
    w.close()


def test_close_waits_for_the_call_in_flight_before_the_model_may_be_freed():
    """A model freed under a running call crashes the process: close says whether the thread has ended."""
    import threading

    started, release = threading.Event(), threading.Event()

    def held():
        started.set()
        release.wait(60.0)
        return "done"

    w = ThreadWorker("held", deadline_s=60.0)
    fut = w.submit(held)
    assert started.wait(60.0)
    assert w.close(wait_s=0.05) is False  # still running: the owner must not free the model
    release.set()
    assert w.close(wait_s=60.0) is True and fut.result(60.0) == "done"
