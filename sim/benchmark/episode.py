"""Run one agent on one task: the loop, the mover, and the per-episode record.

The loop is the same for every way of flying: the `Mover` carries out a move.
`KinematicMover` (default) flies straight between node positions at cruise
speed and returns the flight time, so hundreds of episodes run in minutes; a
mover that sends the node's lat/lon (`world.graph.latlon`) at `world.cruise_alt`
through the MAVSDK bridge can replace it for end-to-end flights.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from contract.geodesy import ned_from_geo
from sim.benchmark import metrics
from sim.benchmark.agent_api import Action, Agent, Observation
from sim.benchmark.tasks import ResolvedTask
from sim.world.compass import bearing_deg
from sim.world.perception import NoiseModel, OraclePerception, preset
from sim.world.world import World

SUCCESS_RADIUS_M = 50.0


class Mover(Protocol):
    def fly_to(self, node: int) -> float:
        """Fly from the current node to the neighbouring `node`; returns seconds taken."""


@dataclass
class KinematicMover:
    """Constant-speed straight flight between node positions (no dynamics)."""

    world: World
    node: int
    speed_m_s: float = 8.0

    def fly_to(self, node: int) -> float:
        d = self.world.graph.edge_length(self.node, node)
        self.node = node
        return d / self.speed_m_s


def is_success(world: World, rt: ResolvedTask, node: int) -> bool:
    """Within one node of the goal node, or within 50 m of the goal's position."""
    g = world.graph
    if node == rt.goal_node or node in g.adj[rt.goal_node]:
        return True
    gy, gx = ned_from_geo(world.origin, rt.task.goal_lat, rt.task.goal_lon)
    return bool(np.hypot(g.xy[node][0] - gx, g.xy[node][1] - gy) <= SUCCESS_RADIUS_M)


def run_episode(world: World, rt: ResolvedTask, agent: Agent, noise: NoiseModel | str = "perfect",
                seed: int = 0, mover: Mover | None = None, renderer=None, preset_name: str | None = None) -> dict:
    """Play one episode; returns the JSON-ready record (metrics + trajectory)."""
    nz = preset(noise) if isinstance(noise, str) else noise
    perception = OraclePerception(world, nz, seed)
    mover = mover or KinematicMover(world, rt.start_node)
    g = world.graph
    agent.reset(rt.task.description, seed)
    node, heading = rt.start_node, 0.0
    traj = [node]
    path_m, flight_s, invalid = 0.0, 0.0, 0
    arrived, reason, steps = False, "step_limit", 0
    t0 = time.perf_counter()
    while True:
        here, hd = node, heading
        image = (lambda: renderer(here, hd)) if renderer else None
        obs = Observation(step=steps, steps_left=rt.step_limit - steps, neighbours=tuple(g.neighbours(node)),
                          landmarks=tuple(perception.landmarks_at(node)), pois=tuple(perception.pois_at(node)),
                          heading=heading, image=image)
        action: Action = agent.act(obs)
        if action.kind == "arrive":
            arrived, reason = True, "arrived"
            break
        if steps >= rt.step_limit:
            break
        steps += 1
        if action.kind != "move" or action.node not in g.adj[node]:
            invalid += 1  # an impossible move costs a step and leaves the drone where it is
            traj.append(node)
            continue
        d = g.xy[action.node] - g.xy[node]
        heading = bearing_deg(d[0], d[1])
        path_m += g.edge_length(node, action.node)
        flight_s += mover.fly_to(action.node)
        node = action.node
        traj.append(node)
    wall = time.perf_counter() - t0
    success = arrived and is_success(world, rt, node)
    gy, gx = ned_from_geo(world.origin, rt.task.goal_lat, rt.task.goal_lon)
    return {
        "task": rt.id, "agent": getattr(agent, "name", type(agent).__name__), "perception": preset_name or "custom",
        "seed": seed, "success": bool(success), "arrived": arrived, "end": reason if success or not arrived else "wrong_place",
        "steps": steps, "min_steps": rt.min_steps, "step_limit": rt.step_limit,
        "steps_over_min": steps / max(1, rt.min_steps),
        "path_m": round(path_m, 1), "shortest_m": round(rt.shortest_m, 1),
        "spl": metrics.spl(success, rt.shortest_m, path_m),
        "ababa": metrics.count_ababa(traj), "stuck": metrics.count_stuck(traj),
        "unique_ratio": metrics.unique_ratio(traj), "mean_unique_ratio": metrics.mean_unique_ratio(traj),
        "invalid_moves": invalid, "final_dist_m": round(float(np.hypot(g.xy[node][0] - gx, g.xy[node][1] - gy)), 1),
        "start_goal_m": round(float(np.hypot(g.xy[rt.start_node][0] - gx, g.xy[rt.start_node][1] - gy)), 1),
        "flight_s": round(flight_s, 1), "wall_s": wall, "wall_ms_per_step": 1000.0 * wall / max(1, steps),
        "trajectory": traj,
    }
