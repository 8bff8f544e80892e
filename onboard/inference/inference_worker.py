"""Model calls off the asyncio loop, each with a deadline and a watchdog.

A model that hangs (a stuck llama.cpp decode, a GPU that stopped answering)
must never stall the vehicle: the 20 Hz setpoint stream and the agent's
asyncio loop keep running and the caller gets :class:`DeadlineExceeded`.

Two isolations:

* :class:`ThreadWorker`: one dedicated thread per model (llama.cpp and most
  sessions are not safe to call concurrently). A call past its deadline is
  abandoned; while it is still stuck the worker is *wedged* and further calls
  fail at once with :class:`WorkerWedged` instead of queueing behind it. A
  thread cannot be killed, so when it never comes back, use a process.
* :class:`ProcessWorker`: the model lives in a child process built by a
  picklable factory. A call past its deadline kills the child (the next call
  starts a fresh one); a child that dies (segfault, OOM kill) surfaces as
  :class:`WorkerCrashed` with its exit code.

``ThreadWorker.call_async`` / ``ProcessWorker.call_async`` are what asyncio
code awaits; the blocking work runs in the worker, never on the loop.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing as mp
import queue
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass
from typing import Any, Callable

log = logging.getLogger(__name__)


class InferenceWorkerError(RuntimeError):
    """Base of the errors a model call surfaces instead of hanging the vehicle."""


class DeadlineExceeded(InferenceWorkerError, TimeoutError):
    """A model call did not finish within its deadline."""


class WorkerWedged(InferenceWorkerError):
    """An earlier call is still stuck past its deadline; this one was not started."""


class WorkerCrashed(InferenceWorkerError):
    """The model's process died (or the call raised); the message says how."""


@dataclass
class WorkerHealth:
    name: str
    calls: int = 0
    deadline_misses: int = 0
    crashes: int = 0
    # Seconds the current call has run past its deadline (0 when healthy).
    stuck_for_s: float = 0.0


class ThreadWorker:
    """Runs callables one at a time on a dedicated thread, each with a deadline."""

    def __init__(self, name: str, deadline_s: float = 5.0) -> None:
        self.name = name
        self.deadline_s = deadline_s
        self.health = WorkerHealth(name)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._running: tuple[float, float] | None = None  # (started, deadline) of the call in progress
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"inference-{name}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fut, fn, args, kwargs, deadline = job
            if not fut.set_running_or_notify_cancel():
                continue
            with self._lock:
                self._running = (time.monotonic(), deadline)
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # surfaced to the caller through the future
                fut.set_exception(exc)
            finally:
                with self._lock:
                    self._running = None
                    self.health.stuck_for_s = 0.0

    def in_flight(self) -> tuple[float, float] | None:
        """(started, deadline) on the monotonic clock of the call in progress, or None."""
        with self._lock:
            return self._running

    def _check_wedged(self) -> None:
        with self._lock:
            running = self._running
        if running is not None and time.monotonic() > running[1]:
            self.health.stuck_for_s = time.monotonic() - running[1]
            raise WorkerWedged(f"model worker {self.name!r}: a call has been stuck {self.health.stuck_for_s:.1f} s past its deadline")

    def submit(self, fn: Callable[..., Any], *args: Any, deadline_s: float | None = None, **kwargs: Any) -> Future:
        if self._closed:
            raise InferenceWorkerError(f"model worker {self.name!r} is closed")
        self._check_wedged()
        fut: Future = Future()
        deadline = time.monotonic() + (deadline_s if deadline_s is not None else self.deadline_s)
        self.health.calls += 1
        self._jobs.put((fut, fn, args, kwargs, deadline))
        return fut

    def _timeout(self, deadline_s: float | None) -> DeadlineExceeded:
        self.health.deadline_misses += 1
        limit = deadline_s if deadline_s is not None else self.deadline_s
        log.error("model worker %s: call missed its %.2f s deadline", self.name, limit)
        return DeadlineExceeded(f"model worker {self.name!r}: call exceeded its {limit:.2f} s deadline")

    def call(self, fn: Callable[..., Any], *args: Any, deadline_s: float | None = None, **kwargs: Any) -> Any:
        """Blocking call from a non-asyncio thread."""
        fut = self.submit(fn, *args, deadline_s=deadline_s, **kwargs)
        try:
            return fut.result(timeout=deadline_s if deadline_s is not None else self.deadline_s)
        except (TimeoutError, FuturesTimeout):  # distinct classes before Python 3.11
            fut.cancel()
            raise self._timeout(deadline_s) from None

    async def call_async(self, fn: Callable[..., Any], *args: Any, deadline_s: float | None = None, **kwargs: Any) -> Any:
        """Await a model call from the asyncio loop; the loop keeps running meanwhile."""
        fut = self.submit(fn, *args, deadline_s=deadline_s, **kwargs)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), deadline_s if deadline_s is not None else self.deadline_s)
        except (asyncio.TimeoutError, TimeoutError):
            raise self._timeout(deadline_s) from None

    def close(self, wait_s: float = 0.0) -> bool:
        """Stop taking calls; with ``wait_s`` also wait that long for the call in flight to end.

        Why wait: a model freed while its call still runs on this thread crashes the process (a
        llama.cpp context released under the decoder); the owner frees it only once this says True.
        """
        self._closed = True
        self._jobs.put(None)
        if wait_s > 0:
            self._thread.join(wait_s)
        return not self._thread.is_alive()


def _child_main(factory: Callable[[], Callable[[Any], Any]], conn) -> None:
    try:
        handler = factory()
    except Exception as exc:  # reported to the parent, which raises WorkerCrashed with it
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        try:
            conn.send(("ok", handler(request)))
        except Exception as exc:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class ProcessWorker:
    """A model in a child process: ``factory()`` (picklable, module level) builds a handler there.

    ``call(request)`` sends one picklable request to ``handler(request)``.
    """

    def __init__(self, name: str, factory: Callable[[], Callable[[Any], Any]], deadline_s: float = 5.0, start_timeout_s: float = 120.0) -> None:
        self.name = name
        self.factory = factory
        self.deadline_s = deadline_s
        self.start_timeout_s = start_timeout_s
        self.health = WorkerHealth(name)
        self._ctx = mp.get_context("spawn")
        self._proc = None
        self._conn = None
        self._lock = threading.Lock()
        self._running: tuple[float, float] | None = None

    def in_flight(self) -> tuple[float, float] | None:
        return self._running

    def kill(self) -> None:
        """Kill the model process now (the watchdog's last resort); the waiting call sees a crash."""
        proc = self._proc
        if proc is not None:
            proc.kill()

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_child_main, args=(self.factory, child), name=f"inference-{self.name}", daemon=True)
        proc.start()
        child.close()
        if not parent.poll(self.start_timeout_s):
            proc.kill()
            raise WorkerCrashed(f"model worker {self.name!r}: the model process did not start within {self.start_timeout_s:.0f} s")
        try:
            status, detail = parent.recv()
        except EOFError:
            proc.join(1)
            raise WorkerCrashed(f"model worker {self.name!r}: the model process died while loading (exit code {proc.exitcode})") from None
        if status == "failed":
            proc.join(1)
            raise WorkerCrashed(f"model worker {self.name!r}: the model failed to load: {detail}")
        self._proc, self._conn = proc, parent

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(2)
        self._proc = self._conn = None

    def call(self, request: Any, deadline_s: float | None = None) -> Any:
        limit = deadline_s if deadline_s is not None else self.deadline_s
        with self._lock:
            if self._proc is None or not self._proc.is_alive():
                if self._proc is not None:
                    self._kill()
                self._start()
            self.health.calls += 1
            now = time.monotonic()
            self._running = (now, now + limit)
            try:
                return self._exchange(request, limit)
            finally:
                self._running = None

    def _exchange(self, request: Any, limit: float) -> Any:
        self._conn.send(request)
        if not self._conn.poll(limit):
            self.health.deadline_misses += 1
            self._kill()
            raise DeadlineExceeded(f"model worker {self.name!r}: call exceeded its {limit:.2f} s deadline; the model process was killed")
        try:
            status, value = self._conn.recv()
        except EOFError:
            self._proc.join(2)
            code = self._proc.exitcode
            self.health.crashes += 1
            self._kill()
            raise WorkerCrashed(f"model worker {self.name!r}: the model process died during a call (exit code {code})") from None
        if status == "error":
            raise WorkerCrashed(f"model worker {self.name!r}: the model raised {value}")
        return value

    async def call_async(self, request: Any, deadline_s: float | None = None) -> Any:
        return await asyncio.to_thread(self.call, request, deadline_s)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
            if self._proc is not None:
                self._proc.join(2)
            self._kill()


class Watchdog:
    """Watches workers' in-flight calls from its own thread and reports the overdue ones.

    The deadline already fails the *caller*; the watchdog is for the vehicle:
    it reports each stuck call once through ``on_stuck(worker_name, overdue_s)``
    (log, telemetry, health state) even when nobody is waiting on it, and kills
    a :class:`ProcessWorker`'s model process once it is ``kill_after_s`` overdue.
    """

    def __init__(self, workers, *, period_s: float = 0.1, kill_after_s: float = 1.0, on_stuck: Callable[[str, float], None] | None = None) -> None:
        self.workers = list(workers)
        self.period_s = period_s
        self.kill_after_s = kill_after_s
        self.on_stuck = on_stuck or (lambda name, overdue: log.error("model worker %s stuck %.1f s past its deadline", name, overdue))
        self._reported: set[tuple[str, float]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="inference-watchdog", daemon=True)

    def start(self) -> "Watchdog":
        self._thread.start()
        return self

    def check(self) -> None:
        now = time.monotonic()
        for w in self.workers:
            running = w.in_flight()
            if running is None or now <= running[1]:
                continue
            overdue = now - running[1]
            w.health.stuck_for_s = overdue
            key = (w.name, running[0])
            if key not in self._reported:
                self._reported.add(key)
                self.on_stuck(w.name, overdue)
            if isinstance(w, ProcessWorker) and overdue >= self.kill_after_s:
                w.kill()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.check()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(1)
