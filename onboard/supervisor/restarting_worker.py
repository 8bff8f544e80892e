"""A worker the supervisor rebuilds when it crashes, with back-off, so one bad model never ends a flight.

`call(fn)` runs ``fn(worker)``; an exception closes the worker and marks it
down until the back-off has passed (doubling per crash up to the maximum);
calls while it is down return None at once. After `max_restarts` rebuilds it
stays down for the rest of the flight. Each crash and rebuild is reported
through `on_event(kind, detail)` (the supervisor publishes them as telemetry
events), so a flaky detector is visible on the ground, not silent.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Awaitable, Callable, Generic, TypeVar

W = TypeVar("W")
T = TypeVar("T")

log = logging.getLogger("aerie.supervisor.worker")


class RestartingWorker(Generic[W]):
    def __init__(self, name: str, factory: Callable[[], W], *, backoff_s: float = 0.5, backoff_max_s: float = 10.0,
                 max_restarts: int = 5, on_event: Callable[[str, dict[str, Any]], Any] | None = None,
                 close: Callable[[W], Any] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.factory = factory
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.max_restarts = max_restarts
        self.on_event = on_event or (lambda kind, detail: None)
        self._close = close
        self._clock = clock
        self.worker: W | None = None
        self.crashes = 0
        self.restarts = 0
        self.last_error = ""
        self._down_until = 0.0

    @property
    def given_up(self) -> bool:
        return self.worker is None and self.crashes > self.max_restarts

    def healthy(self) -> tuple[bool, str]:
        if self.worker is not None:
            return True, f"{self.name} running ({self.restarts} restarts)"
        if self.given_up:
            return False, f"{self.name} gave up after {self.restarts} restarts: {self.last_error}"
        return False, f"{self.name} down: {self.last_error or 'not started'}"

    def _ensure(self) -> W | None:
        if self.worker is not None:
            return self.worker
        if self.given_up or self._clock() < self._down_until:
            return None
        rebuilding = self.crashes > 0
        try:
            self.worker = self.factory()
        except Exception as exc:
            self._crashed(exc)
            return None
        if rebuilding:
            self.restarts += 1
            self.on_event("worker_restarted", {"worker": self.name, "restarts": self.restarts})
        return self.worker

    def _crashed(self, exc: BaseException) -> None:
        self.crashes += 1
        self.last_error = f"{type(exc).__name__}: {exc}"
        if self.worker is not None and self._close is not None:
            try:
                self._close(self.worker)
            except Exception:  # closing a broken worker may fail too; it is dropped either way
                pass
        self.worker = None
        delay = min(self.backoff_max_s, self.backoff_s * 2 ** (self.crashes - 1))
        self._down_until = self._clock() + delay
        log.warning("%s crashed (%s); %s", self.name, self.last_error,
                    "giving up" if self.crashes > self.max_restarts else f"rebuilding in {delay:.1f} s")
        self.on_event("worker_crashed", {"worker": self.name, "error": self.last_error, "crashes": self.crashes,
                                         "retry_in_s": None if self.crashes > self.max_restarts else delay})

    async def call(self, fn: Callable[[W], Awaitable[T]]) -> T | None:
        worker = self._ensure()
        if worker is None:
            return None
        try:
            return await fn(worker)
        except Exception as exc:
            self._crashed(exc)
            return None

    def close(self) -> None:
        if self.worker is not None and self._close is not None:
            self._close(self.worker)
        self.worker = None
