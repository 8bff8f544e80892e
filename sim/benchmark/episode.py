"""Run one agent on one task: the loop, the mover, and the per-episode record.

The loop is the same for every way of flying: the `Mover` carries out a move.
`KinematicMover` (default) flies straight between node positions at cruise
speed and returns the flight time, so hundreds of episodes run in minutes; a
mover that sends the node's lat/lon (`world.graph.latlon`) at `world.cruise_alt`
through the MAVSDK bridge can replace it for end-to-end flights.

A look-up (`Action.look_up(altitude_m)`) is one step at the same node: the
drone climbs from cruise altitude to `altitude_m` and turns a full circle;
the moves after it are flown up there (their length is the same) until a
come-down (`Action.come_down()`, one step) brings it back to cruise where it
is, or (`Action.come_down(node=n)`) on the way to the neighbour `n`: one
straight sloped leg, as a goto to a waypoint at another altitude is flown.
Both vertical legs, (altitude_m - cruise) each, are added to `climb_m` and
to `path_m` (so SPL pays for the climb as for any detour; a sloped leg adds
its own length, the hypotenuse); their time (at
`LOOK_UP_VERTICAL_SPEED_M_S`, plus `LOOK_UP_TURN_S` at the top; a sloped
leg takes the longer of its two components) to `flight_s`. Each may be
flown in legs: while up, a further climb, and part of the way down on the
way to a neighbour (`look_offers.further_climb_refusal`,
`come_down_refusal`). Every observation up there carries the landmarks seen
from that altitude and no POI names. A look-up above the altitude ceiling (the safety
envelope's: `firmware_bridge.settings.SafetyConfig.altitude_ceiling_m`), or
not above cruise altitude, or while up not above it, is refused (the vehicle's own
rule, `onboard.supervisor.look_offers`): not flown, no sightings from above,
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

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from contract.geodesy import ned_from_geo
from firmware_bridge.settings import SafetyConfig
from onboard.map.compass import bearing_deg
from onboard.supervisor.look_offers import come_down_refusal, further_climb_refusal, look_low_refusal, look_up_refusal
from sim.benchmark import metrics
from sim.benchmark.agent_api import Action, Agent, Observation
from sim.benchmark.tasks import ResolvedTask
from sim.world.perception import NoiseModel, OraclePerception, preset
from sim.world.world import World

SUCCESS_RADIUS_M = 50.0
# A look-up climbs and descends at this speed (m/s) and turns a full circle at the top in this time (s).
LOOK_UP_VERTICAL_SPEED_M_S = 3.0
LOOK_UP_TURN_S = 10.0
# The highest a look-up may climb (m above ground): the safety envelope's default ceiling.
ALTITUDE_CEILING_M = SafetyConfig().altitude_ceiling_m
# The lowest a look-low may descend over a street waypoint (m above ground): clear of lamp posts, street
# trees and tram wires (about 8-10 m in central Helsinki); not a figure of the safety envelope.
LOOK_LOW_FLOOR_M = 10.0


class Mover(Protocol):
    def fly_to(self, node: int) -> float:
        """Fly from the current node to the neighbouring `node`; returns seconds taken."""

    # Optional (`KinematicMover`, `MavsdkMover`): `look_from(altitude_m) -> seconds` descends at the current
    # node, turns, comes back to cruise (a look-low); `climb_to(altitude_m) -> seconds` climbs there and turns,
    # and `fly_to` flies on at that altitude until `come_down() -> seconds` (a look-up); `climb_on_to(node,
    # altitude_m, from_m)` / `come_down_to(node, from_m, to_m)` fly them on the way to a neighbour. A mover
    # without them stays put (without the on-the-way ones: `fly_to`); the episode counts `look_seconds` /
    # `vertical_seconds`.


def look_seconds(altitude_m: float, cruise_alt: float) -> float:
    """Time of a look-low: there and back at `LOOK_UP_VERTICAL_SPEED_M_S`, plus the turn."""
    return 2.0 * abs(altitude_m - cruise_alt) / LOOK_UP_VERTICAL_SPEED_M_S + LOOK_UP_TURN_S


def vertical_seconds(metres: float, turn: bool) -> float:
    """Time of a look-up's climb (with the turn at the top) or of its come-down."""
    return abs(metres) / LOOK_UP_VERTICAL_SPEED_M_S + (LOOK_UP_TURN_S if turn else 0.0)


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

    def look_from(self, altitude_m: float) -> float:
        return look_seconds(altitude_m, self.world.cruise_alt)

    def climb_to(self, altitude_m: float, from_m: float | None = None) -> float:
        start = self.world.cruise_alt if from_m is None else from_m
        return vertical_seconds(altitude_m - start, turn=True)

    def come_down(self, from_m: float) -> float:
        return vertical_seconds(from_m - self.world.cruise_alt, turn=False)

    def climb_on_to(self, node: int, altitude_m: float, from_m: float | None = None) -> float:
        """Up to `altitude_m` (from cruise, or from `from_m`) on the way to the neighbouring `node`, the turn
        there (the slower component sets the leg's time)."""
        d = self.world.graph.edge_length(self.node, node)
        self.node = node
        start = self.world.cruise_alt if from_m is None else from_m
        return max(d / self.speed_m_s, vertical_seconds(altitude_m - start, turn=False)) + LOOK_UP_TURN_S

    def come_down_to(self, node: int, from_m: float, to_m: float | None = None) -> float:
        """Down to cruise (or to `to_m`) on the way to the neighbouring `node`: the slower of the two components
        sets the time."""
        d = self.world.graph.edge_length(self.node, node)
        self.node = node
        end = self.world.cruise_alt if to_m is None else to_m
        return max(d / self.speed_m_s, vertical_seconds(from_m - end, turn=False))


def vertical_leg(world: World, mover: Mover, node: int, to: int | None, vertical: float, turn: bool,
                 straight: tuple[str, tuple], sloped: tuple[str, tuple]) -> tuple[float, float, float | None]:
    """A climb or a descent of `vertical` metres: straight at `node` (`to` None), flown by the mover's
    `straight` (method, args), or one straight sloped leg to the neighbour `to`, by its `sloped` (method, args
    after the node); without the method, the vertical time (and the move). Returns the leg's length (the
    hypotenuse when sloped), its seconds, and its heading (None when straight)."""
    method, args = straight if to is None else sloped
    fly = getattr(mover, method, None)
    if to is None:
        return vertical, fly(*args) if fly is not None else vertical_seconds(vertical, turn=turn), None
    g = world.graph
    d = g.xy[to] - g.xy[node]
    seconds = fly(to, *args) if fly is not None else mover.fly_to(to) + vertical_seconds(vertical, turn=turn)
    return float(np.hypot(g.edge_length(node, to), vertical)), seconds, bearing_deg(d[0], d[1])


def is_success(world: World, rt: ResolvedTask, node: int) -> bool:
    """Within one node of the goal node, or within 50 m of the goal's position."""
    g = world.graph
    if node == rt.goal_node or node in g.adj[rt.goal_node]:
        return True
    gy, gx = ned_from_geo(world.origin, rt.task.goal_lat, rt.task.goal_lon)
    return bool(np.hypot(g.xy[node][0] - gx, g.xy[node][1] - gy) <= SUCCESS_RADIUS_M)


def run_episode(world: World, rt: ResolvedTask, agent: Agent, noise: NoiseModel | str = "perfect",
                seed: int = 0, mover: Mover | None = None, renderer=None, preset_name: str | None = None,
                altitude_ceiling_m: float = ALTITUDE_CEILING_M, camera=None) -> dict:
    """Play one episode; returns the JSON-ready record (metrics + trajectory).

    `altitude_ceiling_m`: look-ups above it are refused (default: the safety envelope's ceiling).
    `camera` (`camera_perception.CameraEpisode`): the sightings come from its look-around at each
    step instead of the oracle (which then only judges success); its look-around time is flight time.
    """
    nz = preset(noise) if isinstance(noise, str) else noise
    perception = OraclePerception(world, nz, seed)
    mover = mover or KinematicMover(world, rt.start_node)
    g = world.graph
    agent.reset(rt.task.description, seed)
    # The vehicle refuses before arming what it did not understand: nothing is flown, the task is failed.
    not_understood = getattr(agent, "refusal", lambda: "")()
    node, heading = rt.start_node, 0.0
    traj = [node]
    path_m, flight_s, invalid = 0.0, 0.0, 0
    look_ups, refused_look_ups, climb_m, look_up_at, come_down_at = 0, 0, 0.0, [], []
    look_lows, low_m, look_low_at = 0, 0.0, []
    floor = LOOK_LOW_FLOOR_M if camera is not None else None
    view_alt: float | None = None  # the altitude of this observation's sightings when a look was flown
    up: float | None = None  # flying over the roofs at this altitude since a look-up (None: at cruise)
    arrived, reason, steps = False, "step_limit", 0
    t0 = time.perf_counter()
    if not_understood:
        reason = "refused"
    while not not_understood:
        here, hd = node, heading
        if up is not None:
            view_alt = up
        image = (lambda: renderer(here, hd)) if renderer else None
        if camera is not None:
            seen_lms, seen_pois = camera.observe(steps, node, view_alt)
        else:
            seen_lms = perception.landmarks_at(node, view_alt)
            seen_pois = () if view_alt is not None and view_alt > world.cruise_alt else perception.pois_at(node)
        obs = Observation(step=steps, steps_left=rt.step_limit - steps, neighbours=tuple(g.neighbours(node)),
                          landmarks=tuple(seen_lms), pois=tuple(seen_pois),
                          heading=heading, altitude_m=world.cruise_alt if view_alt is None else view_alt,
                          look_up_ceiling_m=altitude_ceiling_m, look_low_floor_m=None if up is not None else floor,
                          image=image)
        view_alt = None
        action: Action = agent.act(obs)
        if action.kind == "arrive":
            arrived, reason = True, "arrived"
            break
        if steps >= rt.step_limit:
            break
        steps += 1
        if action.kind == "come_down":
            # the vehicle's rule (nothing to come down from, part way down only on the way), and a neighbour
            if come_down_refusal(action.altitude_m, world.cruise_alt, up, action.node is not None) is not None or \
                    (action.node is not None and action.node not in g.adj[node]):
                invalid += 1  # a step spent
                traj.append(node)
                continue
            to = world.cruise_alt if action.altitude_m is None else action.altitude_m
            drop = up - to
            climb_m += drop
            come_down_at.append([steps, node, up, to])
            # straight down here, or one straight sloped leg down over the neighbour (to cruise, or part way)
            metres, seconds, bearing = vertical_leg(world, mover, node, action.node, drop, False,
                                                    ("come_down", (up,)), ("come_down_to", (up, to)))
            path_m += metres
            flight_s += seconds
            if bearing is not None:
                heading, node = bearing, action.node
            traj.append(node)
            up = None if to == world.cruise_alt else to
            continue
        if action.kind in ("look_up", "look_low"):
            alt = action.altitude_m
            climbing = action.kind == "look_up"
            # the vehicle's rules (NaN fails too): a look-up above cruise, a look-low below it and offered; while
            # up only a further climb; only a look-up may be flown on the way, and only to a neighbour
            refused = look_up_refusal(alt, world.cruise_alt, altitude_ceiling_m) if climbing else \
                look_low_refusal(alt, world.cruise_alt, floor)
            if climbing and refused is None:
                refused = further_climb_refusal(alt, up)
            if refused is not None or (not climbing and up is not None) or \
                    (action.node is not None and (not climbing or action.node not in g.adj[node])):
                refused_look_ups += 1  # not flown: a step spent, nothing seen from there
                traj.append(node)
                continue
            if climbing:
                start = world.cruise_alt if up is None else up
                vertical = alt - start
                climb_m += vertical
                look_ups += up is None  # a further climb while up is a leg of the same look-up
                look_up_at.append([steps, node, alt, start])
                # straight up here, or one straight sloped leg up to the neighbour; the turn at the top
                metres, seconds, bearing = vertical_leg(world, mover, node, action.node, vertical, True,
                                                        ("climb_to", (alt, start)), ("climb_on_to", (alt, start)))
                path_m += metres
                flight_s += seconds
                if bearing is not None:
                    heading, node = bearing, action.node
                traj.append(node)
                up = alt
            else:
                traj.append(node)  # the drone stays over this node
                vertical = 2.0 * abs(alt - world.cruise_alt)
                low_m += vertical
                look_lows += 1
                look_low_at.append([steps, node, alt])
                fly = getattr(mover, "look_from", None)
                flight_s += fly(alt) if fly is not None else look_seconds(alt, world.cruise_alt)
                path_m += vertical
            view_alt = alt
            continue
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
    extra = {}
    if camera is not None:
        extra = camera.record()
        flight_s += extra["look_around_s"]
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
        "invalid_moves": invalid, "look_ups": look_ups, "climb_m": round(climb_m, 1),
        "refused_look_ups": refused_look_ups, "look_up_at": look_up_at, "come_down_at": come_down_at,
        "look_lows": look_lows, "low_m": round(low_m, 1), "look_low_at": look_low_at,
        "final_dist_m": round(float(np.hypot(g.xy[node][0] - gx, g.xy[node][1] - gy)), 1),
        "start_goal_m": round(float(np.hypot(g.xy[rt.start_node][0] - gx, g.xy[rt.start_node][1] - gy)), 1),
        "flight_s": round(flight_s, 1), "wall_s": wall, "wall_ms_per_step": 1000.0 * wall / max(1, steps),
        "trajectory": traj, **extra,
    }
