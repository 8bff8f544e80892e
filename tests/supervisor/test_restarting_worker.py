"""A crashing worker is rebuilt with doubling back-off, then given up on; the caller never sees the crash."""

import asyncio

from onboard.supervisor.restarting_worker import RestartingWorker


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_crash_backoff_rebuild_and_give_up():
    clock, events, built, closed = Clock(), [], [], []

    def factory():
        built.append(len(built))
        return {"id": len(built)}

    w = RestartingWorker("det", factory, backoff_s=1.0, backoff_max_s=3.0, max_restarts=2,
                         on_event=lambda k, d: events.append((k, d)), close=closed.append, clock=clock)

    async def ok(worker):
        return worker["id"]

    async def boom(worker):
        raise RuntimeError("onnx died")

    async def scenario():
        assert await w.call(ok) == 1
        assert await w.call(boom) is None                # crash 1: down for 1 s
        assert closed == [{"id": 1}] and await w.call(ok) is None
        clock.t = 1.01
        assert await w.call(ok) == 2 and w.restarts == 1  # rebuilt
        assert await w.call(boom) is None                # crash 2: down for 2 s
        clock.t = 2.5
        assert await w.call(ok) is None
        clock.t = 3.1
        assert await w.call(ok) == 3
        assert await w.call(boom) is None                # crash 3 > max_restarts: given up
        clock.t = 100
        assert await w.call(ok) is None and w.given_up
        ok_, detail = w.healthy()
        assert not ok_ and "gave up" in detail and "onnx died" in detail

    asyncio.run(scenario())
    kinds = [k for k, _ in events]
    assert kinds == ["worker_crashed", "worker_restarted", "worker_crashed", "worker_restarted", "worker_crashed"]
    assert events[-1][1]["retry_in_s"] is None


def test_factory_failure_counts_as_a_crash():
    clock = Clock()
    w = RestartingWorker("cam", lambda: (_ for _ in ()).throw(OSError("no /dev/video0")), backoff_s=0.5,
                         max_restarts=1, clock=clock)

    async def use(worker):
        return 1

    assert asyncio.run(w.call(use)) is None
    assert "no /dev/video0" in w.healthy()[1]
