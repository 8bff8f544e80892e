"""The real standby loop (`aerie fly --standby`'s `_standby`) over a real queue folder, with the flight faked.

Issue 36's queue faults are about what the service does with files, not about
flying: the loop, the queue and the files are real, and `FakeSupervisor`
stands in for the vehicle so that a test takes a second, not a flight. Each
fake flight is a script the test gives; a flight's script may touch the queue
(delete or re-queue its file) as an operator would while it flies, and the
last one sets `stop`, as SIGTERM does.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Awaitable, Callable

from onboard.config import AerieConfig
from onboard.supervisor import cli
from onboard.supervisor.mission import Mission
from onboard.mission.record import MissionEnd
from onboard.supervisor.supervisor import FlightOutcome

Flight = Callable[[Mission, asyncio.Event], Awaitable[FlightOutcome]]
# A loop that neither flies nor stops within this is hung (generous: a guard, not a timing claim).
HANG_GUARD_S = 20.0


def outcome(mission: Mission, flight_id: str, reason: str = "arrived") -> FlightOutcome:
    return FlightOutcome(end=MissionEnd(reason), flight_id=flight_id, mission=mission.name,
                         agent_success=reason == "arrived", steps=1, flown_m=10.0, seconds=1.0, landed="landed",
                         trajectory=[1, 2])


class FakeSupervisor:
    flights: list[Flight] = []
    flown: list[str] = []

    def __init__(self, cfg: AerieConfig, mission: Mission | None = None, *, on_progress=None) -> None:
        self.outcome: FlightOutcome | None = None

    async def start(self) -> None:
        pass

    async def fly(self, mission: Mission, stop: asyncio.Event) -> FlightOutcome:
        FakeSupervisor.flown.append(mission.name)
        flight = FakeSupervisor.flights.pop(0)
        self.outcome = await flight(mission, stop)
        return self.outcome

    async def stop_airborne(self) -> str:
        return "on ground"

    async def close(self) -> None:
        pass


def standby_config(data_dir: Path) -> AerieConfig:
    base = AerieConfig()
    return replace(base, data_dir=str(data_dir), supervisor=replace(base.supervisor, mission_poll_s=0.05))


def run_standby(monkeypatch, cfg: AerieConfig, flights: list[Flight]) -> tuple[int, list[str]]:
    """`_standby` until a flight sets stop; (its return code, the mission names flown, in order)."""
    FakeSupervisor.flights = list(flights)
    FakeSupervisor.flown = []
    monkeypatch.setattr("onboard.supervisor.supervisor.Supervisor", FakeSupervisor)
    args = argparse.Namespace(quiet=True)
    rc = asyncio.run(asyncio.wait_for(cli._standby(cfg, args), HANG_GUARD_S))
    return rc, list(FakeSupervisor.flown)
