"""Run one agent on one task through the mission runner that flies, and keep the episode's record.

The loop is not here: `run_episode` hands the agent to `onboard.mission.MissionRunner`, the
same runner `aerie fly` flies, over two ports made from the simulated world (`sim.benchmark.
episode_ports`): a vehicle port around a `Mover` and a sensor port around the oracle (or the
camera's look-around). `KinematicMover` (default) flies straight between node positions at
cruise speed and returns the flight time, so hundreds of episodes run in minutes; a mover that
flies through the MAVSDK bridge can replace it for end-to-end flights. What follows describes
what the runner does, with the kinematic vehicle's figures.

A look-up (`Action.look_up(altitude_m)`) is one step at the same node: the
drone climbs from cruise altitude to `altitude_m` and turns a full circle;
the moves after it are flown up there (their length is the same) until a
come-down (`Action.come_down()`, one step) brings it back to cruise where it
is, or (`Action.come_down(node=n)`) on the way to the neighbour `n`: one
straight sloped leg, as a goto to a waypoint at another altitude is flown.
Both vertical legs, (altitude_m - cruise) each, are added to `climb_m` and
to `path_m` (so SPL pays for the climb as for any detour; a sloped leg adds
its own length, the hypotenuse); their time (at
`kinematic.LOOK_UP_VERTICAL_SPEED_M_S`, plus `LOOK_UP_TURN_S` at the top; a sloped
leg takes the longer of its two components) to `flight_s`. Each may be
flown in legs: while up, a further climb, and part of the way down on the
way to a neighbour (`look_offers.further_climb_refusal`,
`come_down_refusal`). Every observation up there carries the landmarks seen
from that altitude and no POI names. A look-up above the altitude ceiling (the safety
envelope's: `firmware_bridge.settings.SafetyConfig.altitude_ceiling_m`), or
not above cruise altitude, or while up not above it, is refused (the vehicle's own
rule, `onboard.mission.look_offers`): not flown, no sightings from above,
one step spent (as an invalid move), counted in `refused_look_ups`. A
come-down at cruise is an invalid move.

A look-low (`Action.look_low(altitude_m)`) is a round trip below cruise, down
to `LOOK_LOW_FLOOR_M` over the street, a turn, and back up: its vertical
metres count likewise (in `low_m`), and the next observation carries what is
read down there, names included. None is offered while the drone is up. It is
offered only to an episode whose names come from the camera
(`camera`): the oracle's names do not depend on altitude, so a look-low would
buy nothing there. One outside [floor, cruise) is refused like a look-up.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import astuple

import numpy as np

from common.geodesy import ned_from_geo
from firmware_bridge.settings import SafetyConfig
from sim.benchmark import metrics
from sim.benchmark.agent_api import Agent
from sim.benchmark.kinematic import KinematicMover, Mover
from sim.benchmark.tasks import ResolvedTask
from sim.world.perception import NoiseModel, OraclePerception, preset
from sim.world.world import World

SUCCESS_RADIUS_M = 50.0
# The highest a look-up may climb (m above ground): the safety envelope's default ceiling.
ALTITUDE_CEILING_M = SafetyConfig().altitude_ceiling_m
# The lowest a look-low may descend over a street waypoint (m above ground): clear of lamp posts, street
# trees and tram wires (about 8-10 m in central Helsinki); not a figure of the safety envelope.
LOOK_LOW_FLOOR_M = 10.0


def is_success(world: World, rt: ResolvedTask, node: int) -> bool:
    """Within one node of the goal node, or within 50 m of the goal's position."""
    g = world.graph
    if node == rt.goal_node or node in g.adj[rt.goal_node]:
        return True
    gy, gx = ned_from_geo(world.origin, rt.task.goal_lat, rt.task.goal_lon)
    return bool(np.hypot(g.xy[node][0] - gx, g.xy[node][1] - gy) <= SUCCESS_RADIUS_M)


def run_episode(world: World, rt: ResolvedTask, agent: Agent, noise: NoiseModel | str = "perfect",
                seed: int = 0, mover: Mover | None = None, renderer=None, preset_name: str | None = None,
                altitude_ceiling_m: float = ALTITUDE_CEILING_M, camera=None, flown=None) -> dict:
    """Play one episode through the mission runner; returns the JSON-ready record (metrics + trajectory).

    `mover` flies the kinematic legs (default `KinematicMover`); `flown` (`flown_vehicle.FlownVehicle`)
    instead flies them through the MAVSDK bridge with the supervisor's vehicle port.
    `altitude_ceiling_m`: look-ups above it are refused (default: the safety envelope's ceiling).
    `camera` (`camera_perception.CameraEpisode`): the sightings come from its look-around at each
    step instead of the oracle (which then only judges success); its look-around time is flight time.
    An agent that reads its instruction (Aerie's) is refused before arming, as on the vehicle, when
    it did not understand it: nothing is flown and the task is failed.
    """
    from onboard.mission.runner import MissionLimits, MissionRunner
    from sim.benchmark.episode_ports import FrameHooks, MoverPort, OracleSensor, for_runner

    nz = preset(noise) if isinstance(noise, str) else noise
    perception = OraclePerception(world, nz, seed)
    agent.reset(rt.task.description, seed)
    if camera is not None:  # the look-around looks for what the agent understood, as in flight
        camera.read_back(getattr(agent, "reading", None))
    floor = LOOK_LOW_FLOOR_M if camera is not None else None
    limits = MissionLimits(rt.step_limit, world.cruise_alt, altitude_ceiling_m, floor)
    sensor = OracleSensor(world, perception, camera, renderer)
    # An agent that asks a VLM about each step's camera frame gets it rendered (the others never pay for it).
    hooks = FrameHooks(agent, sensor) if getattr(agent, "sees_frames", False) and renderer is not None else None

    async def play():
        if flown is not None:  # the legs flown over MAVSDK by the port `aerie fly` flies
            async with flown:
                return await MissionRunner(for_runner(agent, sensor), flown.port, sensor, limits,
                                           start=rt.start_node, hooks=hooks).run()
        vehicle = MoverPort(world, mover or KinematicMover(world, rt.start_node), rt.start_node)
        return await MissionRunner(for_runner(agent, sensor), vehicle, sensor, limits, start=rt.start_node,
                                   hooks=hooks).run()

    t0 = time.perf_counter()
    rec = asyncio.run(play())
    wall = time.perf_counter() - t0
    return episode_record(world, rt, agent, rec, seed=seed, preset_name=preset_name, wall_s=wall,
                          extra=camera.record() if camera is not None else {})


def episode_record(world: World, rt: ResolvedTask, agent: Agent, rec, *, seed: int, preset_name: str | None,
                   wall_s: float, extra: dict) -> dict:
    """The runner's `MissionRecord` judged against the task's truth, as the benchmark's JSON keeps it."""
    g = world.graph
    traj = list(rec.trajectory) or [rt.start_node]
    node = traj[-1]
    arrived = rec.end == "arrived"
    flight_s = rec.flight_s + (extra["look_around_s"] if extra else 0.0)
    success = arrived and is_success(world, rt, node)
    gy, gx = ned_from_geo(world.origin, rt.task.goal_lat, rt.task.goal_lon)
    steps = rec.steps
    return {
        "task": rt.id, "agent": getattr(agent, "name", type(agent).__name__), "perception": preset_name or "custom",
        "seed": seed, "success": bool(success), "arrived": arrived,
        "end": str(rec.end) if success or not arrived else "wrong_place",
        "steps": steps, "min_steps": rt.min_steps, "step_limit": rt.step_limit,
        "steps_over_min": steps / max(1, rt.min_steps),
        "path_m": round(rec.flown_m, 1), "shortest_m": round(rt.shortest_m, 1),
        "spl": metrics.spl(success, rt.shortest_m, rec.flown_m),
        "ababa": metrics.count_ababa(traj), "stuck": metrics.count_stuck(traj),
        "unique_ratio": metrics.unique_ratio(traj), "mean_unique_ratio": metrics.mean_unique_ratio(traj),
        "invalid_moves": rec.invalid_moves, "look_ups": rec.look_ups, "climb_m": round(rec.climb_m, 1),
        "refused_look_ups": rec.refused_look_ups, "look_up_at": [list(astuple(x)) for x in rec.look_up_at],
        "come_down_at": [list(astuple(x)) for x in rec.come_down_at],
        "look_lows": rec.look_lows, "low_m": round(rec.low_m, 1),
        "look_low_at": [list(astuple(x)) for x in rec.look_low_at],
        "final_dist_m": round(float(np.hypot(g.xy[node][0] - gx, g.xy[node][1] - gy)), 1),
        "start_goal_m": round(float(np.hypot(g.xy[rt.start_node][0] - gx, g.xy[rt.start_node][1] - gy)), 1),
        "flight_s": round(flight_s, 1), "wall_s": wall_s, "wall_ms_per_step": 1000.0 * wall_s / max(1, steps),
        "trajectory": traj, **extra,
    }
