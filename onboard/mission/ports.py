"""The two small ports a mission flies and perceives through, and the hooks that report it.

A vehicle port carries out legs and says what each came to (`Leg`); a sensor port
says what is perceived at a waypoint from an altitude. Neither decides anything:
what is offered, refused and counted is the runner's. The MAVSDK ports live with
the supervisor (`onboard/supervisor/flight_ports.py`), the kinematic and oracle ones
with the benchmark (`sim/benchmark/episode.py`).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Protocol

from onboard.vocab.observation import AgentAction, AgentObservation, SharedFindings
from onboard.mission.legs import Leg
from onboard.mission.observed import MoveOption, WorldObservation


class VehiclePort(Protocol):
    async def take_off(self) -> None:
        """Arm and climb to cruise."""

    async def ready(self) -> None:
        """Return when the vehicle can take the next command (a real one waits out a link loss)."""

    async def fly_to(self, to: MoveOption) -> Leg:
        """To the neighbouring waypoint at the altitude moves are flown at (cruise, or over the roofs)."""

    async def climb(self, altitude_m: float, from_m: float, to: MoveOption | None, turn: bool) -> Leg:
        """Up to `altitude_m` here (`to` None) or on the way to `to` (one sloped leg), and a full turn up there
        when `turn`; the moves after it are flown up there. One that cannot get up there in time comes back to
        cruise (status timed out, both ways in its figures)."""

    async def come_down(self, from_m: float, to_m: float, to: MoveOption | None) -> Leg:
        """Down to `to_m` here (`to` None), or on the way to `to` (one sloped leg); moves flown there after it."""

    async def look_low(self, altitude_m: float, observe: Callable[[], Awaitable[WorldObservation]]
                       ) -> tuple[Leg, WorldObservation | None]:
        """Down to `altitude_m` here, `observe()` down there if it arrived, back up to cruise; the round trip's
        leg and what was seen (None: not down there in time)."""


class SensorPort(Protocol):
    async def observe(self, step: int, at: int | None, heading: float, altitude_m: float | None) -> WorldObservation:
        """What is perceived at waypoint `at` (None: where the vehicle is) facing `heading`, from `altitude_m`
        (None: cruise), for the agent's step `step`; with the moves on offer from there."""

    @property
    def turns_itself(self) -> bool:
        """Whether observing turns the vehicle (a camera's look-around): then a look-up flies no turn of its own."""


class Agent(Protocol):
    def act(self, observation: AgentObservation) -> AgentAction: ...


class MissionHooks:
    """What the runner tells whoever flies it; every hook does nothing here.

    The supervisor's hooks publish telemetry, draw maps and trade findings with the fleet; the
    benchmark's do nothing. A hook may not change what the mission does.
    """

    def event(self, kind: str, detail: dict[str, Any]) -> None:
        pass

    def progress(self, line: str) -> None:
        pass

    def starting(self, understood_line: str) -> None:
        """The instruction was understood and the vehicle is about to take off."""

    async def before_act(self, step: int, observed: WorldObservation, heading: float = 0.0) -> None:
        """Between the observation and the agent's step (the detector runs here)."""

    def shared(self) -> SharedFindings | None:
        """The fleet's findings for the next step (None: flying alone)."""
        return None

    async def after_act(self, step: int, action: AgentAction) -> None:
        """After the agent's step, before anything is flown (step reports, maps, findings for the fleet)."""
