"""The simulated world as the mission runner's ports: a vehicle around a `Mover`, a sensor around the oracle.

The runner (`onboard.mission.runner`) is the loop `aerie fly` flies; these ports give it the
benchmark's world instead of a vehicle and a world feed. The vehicle port turns each leg into
the mover's call and reports the graph's metres and the mover's seconds; the sensor port
answers with the oracle's sightings (or the camera episode's look-around) and the graph's
moves. Agents written to the benchmark's own contract (`sim.benchmark.agent_api`: the
baselines) are adapted to the runner's agent types; Aerie's agent takes them as they are.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import numpy as np

from onboard.vocab.observation import ActionKind, AgentAction, AgentObservation
from onboard.vocab.observation import LandmarkSighting as AgentLandmark
from onboard.vocab.observation import PoiSighting as AgentPoi
from onboard.map.compass import compass8
from onboard.map.corridors import Neighbour
from onboard.mission.legs import Leg, LegStatus
from onboard.mission.observed import MoveOption, WorldObservation
from onboard.mission.ports import MissionHooks
from sim.benchmark.agent_api import Action, Observation
from sim.benchmark.kinematic import look_seconds, vertical_seconds
from sim.world.perception import LandmarkSighting, OraclePerception, PoiSighting
from sim.world.world import World


class MoverPort:
    """A `VehiclePort` over a benchmark `Mover`: the legs' metres from the graph, their seconds from the mover.

    A mover without a vertical manoeuvre stays put for it and the leg takes the kinematic time
    (`vertical_seconds`, `look_seconds`), as the benchmark always counted it.
    """

    def __init__(self, world: World, mover: Any, start: int) -> None:
        self.world = world
        self.mover = mover
        self.node = start

    async def take_off(self) -> None:
        pass

    async def ready(self) -> None:
        pass

    def _edge(self, to: int) -> float:
        return self.world.graph.edge_length(self.node, to)

    async def fly_to(self, to: MoveOption) -> Leg:
        metres = self._edge(to.node)
        seconds = self.mover.fly_to(to.node)
        self.node = to.node
        return Leg(LegStatus.ARRIVED, metres, 0.0, seconds)

    def _vertical(self, to: MoveOption | None, vertical: float, turn: bool, straight: tuple[str, tuple],
                  sloped: tuple[str, tuple]) -> Leg:
        """Straight at the node by the mover's `straight` (method, args), or one sloped leg to `to` by its
        `sloped` (method, args after the node); without the method, the vertical time (and the move)."""
        method, args = straight if to is None else sloped
        fly = getattr(self.mover, method, None)
        if to is None:
            seconds = fly(*args) if fly is not None else vertical_seconds(vertical, turn=turn)
            return Leg(LegStatus.ARRIVED, vertical, vertical, seconds)
        edge = self._edge(to.node)
        seconds = fly(to.node, *args) if fly is not None else self.mover.fly_to(to.node) + vertical_seconds(vertical, turn=turn)
        self.node = to.node
        return Leg(LegStatus.ARRIVED, float(np.hypot(edge, vertical)), vertical, seconds)

    async def climb(self, altitude_m: float, from_m: float, to: MoveOption | None, turn: bool) -> Leg:
        # The kinematic vehicle turns at the top whatever the sensor does: the benchmark's look-up time.
        return self._vertical(to, altitude_m - from_m, True, ("climb_to", (altitude_m, from_m)),
                              ("climb_on_to", (altitude_m, from_m)))

    async def come_down(self, from_m: float, to_m: float, to: MoveOption | None) -> Leg:
        return self._vertical(to, from_m - to_m, False, ("come_down", (from_m,)), ("come_down_to", (from_m, to_m)))

    async def look_low(self, altitude_m: float, observe: Callable[[], Awaitable[WorldObservation]]
                       ) -> tuple[Leg, WorldObservation | None]:
        cruise = self.world.cruise_alt
        fly = getattr(self.mover, "look_from", None)
        seconds = fly(altitude_m) if fly is not None else look_seconds(altitude_m, cruise)
        vertical = 2.0 * abs(altitude_m - cruise)
        return Leg(LegStatus.ARRIVED, vertical, vertical, seconds), await observe()


class OracleSensor:
    """A `SensorPort` over the world's truth: the oracle's sightings with its noise, or the camera episode's.

    Names are not asked of the oracle from above cruise (none is readable there), so its random draws
    are those the benchmark always made. `renderer(node, heading)`, when given, draws the view an agent
    on the benchmark's contract may ask for (`Observation.image`).
    """

    turns_itself = False

    def __init__(self, world: World, perception: OraclePerception, camera: Any = None, renderer: Any = None) -> None:
        self.world = world
        self.perception = perception
        self.camera = camera
        self.renderer = renderer
        self.last: tuple[int, float] | None = None  # where the last observation was made, for the renderer

    async def observe(self, step: int, at: int | None, heading: float, altitude_m: float | None) -> WorldObservation:
        assert at is not None, "the benchmark always knows its node"
        w = self.world
        if self.camera is not None:
            lms, pois = await self.camera.observe(step, at, altitude_m)
        else:
            lms = self.perception.landmarks_at(at, altitude_m)
            pois = () if altitude_m is not None and altitude_m > w.cruise_alt else self.perception.pois_at(at)
        self.last = (at, heading)
        lat, lon = (float(v) for v in w.graph.latlon[at])
        moves = tuple(MoveOption(n.node, float(n.bearing), float(n.distance), *(float(v) for v in w.graph.latlon[n.node]))
                      for n in w.graph.neighbours(at))
        return WorldObservation(
            node=at, lat=lat, lon=lon, snap_m=0.0, moves=moves,
            landmarks=tuple(AgentLandmark(s.name, float(s.bearing), float(s.distance)) for s in lms),
            pois=tuple(AgentPoi(p.name, float(p.bearing), float(p.distance)) for p in pois),
            altitude_m=altitude_m)

    def image(self) -> Callable[[], np.ndarray] | None:
        if self.renderer is None or self.last is None:
            return None
        node, heading = self.last
        return lambda: self.renderer(node, heading)


class ContractAgent:
    """An agent on the benchmark's own contract (`agent_api`), as the runner's: observation and action translated."""

    def __init__(self, agent: Any, sensor: OracleSensor) -> None:
        self.agent = agent
        self.sensor = sensor
        self.name = getattr(agent, "name", type(agent).__name__)

    def act(self, obs: AgentObservation) -> AgentAction:
        seen = Observation(
            step=obs.step, steps_left=obs.steps_left,
            neighbours=tuple(Neighbour(m.node, compass8(m.bearing), m.bearing, m.length) for m in obs.moves),
            landmarks=tuple(LandmarkSighting(s.name, s.bearing, s.distance) for s in obs.landmarks),
            pois=tuple(PoiSighting(p.name, "read", p.bearing, p.distance) for p in obs.pois),
            heading=obs.heading, altitude_m=obs.altitude_m, look_up_ceiling_m=obs.look_up_ceiling_m,
            look_low_floor_m=obs.look_low_floor_m, image=self.sensor.image())
        a: Action = self.agent.act(seen)
        if a.kind not in ActionKind._value2member_map_:  # no such action: a move to nowhere, a step spent
            return AgentAction(ActionKind.MOVE, None, a.reason)
        return AgentAction(ActionKind(a.kind), a.node, a.reason, a.altitude_m)


class FrameHooks(MissionHooks):
    """Hands each step's rendered camera frame (RGB) to an agent that asks a VLM about it (`sees_frames`)."""

    def __init__(self, agent: Any, sensor: OracleSensor) -> None:
        self.agent = agent
        self.sensor = sensor

    async def before_act(self, step: int, observed: WorldObservation, heading: float = 0.0) -> None:
        draw = self.sensor.image()
        if draw is not None:
            self.agent.see_frame(np.ascontiguousarray(draw()[:, :, ::-1]))  # the renderer's BGR -> RGB


def for_runner(agent: Any, sensor: OracleSensor) -> Any:
    """The agent as the runner drives it: Aerie's as it is (it reads `AgentObservation`), others adapted."""
    return agent if getattr(agent, "takes_agent_observation", False) else ContractAgent(agent, sensor)
