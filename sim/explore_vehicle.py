"""One exploring vehicle as its own OS process, flying in (scaled) real time.

This is the child half of `sim.explore_fleet`: it is started with the
"spawn" context, so everything it gets must pickle; the world is therefore
not passed but loaded here from the simulator's cache (`load_world`, the
same pickle every process reads). It talks to its parent over one Pipe:

    child  -> ("ready", endpoint)       world loaded, discovery PUB bound ("" when not sharing)
    parent -> ("peers", [endpoints])    the other live vehicles' PUB endpoints
    child  -> ("subscribed", ok)        every peer subscribed to us (False: timed out, flies anyway)
    parent -> ("go",) | ("abort",)      one common take-off; after it nobody waits for anybody
    child  -> ("done", VehicleReport) | ("failed", traceback)

A move takes the leg's flight time (leg metres / (cruise speed * time
scale)) on top of whatever perceiving and deciding really took, and before
each decision the vehicle merges whatever peer frames have arrived by then:
no barrier, so a starved or slow peer is simply heard late, as over a real
radio. What the vehicle read is matched to world POIs here (the benchmark's
ground truth, never shown to the agent).
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

# Kinds of injected fault (`Fault.kind`): a Python error that ends the process, or a wedge.
FAULT_KINDS = ("crash", "hang")


@dataclass(frozen=True)
class Fault:
    """A drill: at `step` this vehicle crashes (exit code 1) or hangs (until the parent kills it)."""

    step: int
    kind: str = "crash"


class InjectedFault(RuntimeError):
    """Raised by a `crash` drill, so the traceback says it was asked for."""


@dataclass(frozen=True)
class VehicleOrder:
    """Everything a vehicle process needs; plain values because it crosses a spawn."""

    index: int
    vehicle_id: str
    start: int
    budget: int
    agent_seed: int
    perception_seed: int
    sharing: bool
    team: str = "bench"
    noise: str = "perfect"
    cruise_m_s: float = 10.0
    time_scale: float = 15.0
    launch_delay_s: float = 0.0  # after the common "go": vehicles leave one pad one after another
    world_pbf: str | None = None
    world_dir: str | None = None
    subscribe_timeout_s: float = 20.0
    fault: Fault | None = None


@dataclass
class StepTiming:
    """One step's clock: `overshoot_s` is how much longer the flight sleep took than asked (CPU starvation)."""

    at: float  # time.monotonic() when the step began: one clock for every process on the machine
    decide_s: float
    flight_s: float
    overshoot_s: float
    heard: dict[str, int] = field(default_factory=dict)  # each peer's latest step merged by then


@dataclass
class VehicleReport:
    """What one vehicle flew and heard; `pois` are world POI indices."""

    index: int
    vehicle_id: str
    trail: list[int]
    pois: list[int]
    claim_clashes: int
    counters: dict
    steps: list[StepTiming] = field(default_factory=list)
    published_at: list[float] = field(default_factory=list)  # time.monotonic() of each step's frame
    mission_s: float = 0.0  # from this vehicle's take-off to its last view
    subscribed: bool = True


def run(order: VehicleOrder, conn) -> None:
    """Process entry: handshake, fly, report; a failure is reported and then ends the process."""
    share = None
    try:
        from sim.exploration.discovery_share import DiscoveryShare
        from sim.exploration.frontier_explorer import FrontierExplorer
        from sim.explore_episode import PoiMatcher
        from sim.world.cache import load_world
        from sim.world.perception import OraclePerception

        world = load_world(order.world_pbf, Path(order.world_dir) if order.world_dir else None)
        agent = FrontierExplorer(order.vehicle_id, seed=order.agent_seed)
        perception = OraclePerception(world, order.noise, order.perception_seed)
        matcher = PoiMatcher(world, perception.noise.poi_range_m)
        if order.sharing:
            share = DiscoveryShare(agent.view, team=order.team).start()
        conn.send(("ready", share.endpoint if share else ""))
        _, peers = conn.recv()
        for endpoint in peers:
            share.connect(endpoint)
        ok = share.wait_for_subscribers(len(peers), order.subscribe_timeout_s) if share and peers else True
        conn.send(("subscribed", ok))
        if conn.recv()[0] != "go":
            return
        report = _fly(order, world, agent, perception, matcher, share)
        report.subscribed = ok
        conn.send(("done", report))
    except BaseException:
        try:
            conn.send(("failed", traceback.format_exc(limit=4)))
        except OSError:
            pass  # the parent is gone: nobody to tell
        raise
    finally:
        if share is not None:
            share.close()


def _fly(order: VehicleOrder, world, agent, perception, matcher, share) -> VehicleReport:
    from sim.explore_episode import fix_of, observe

    node, budget = order.start, order.budget
    report = VehicleReport(order.index, order.vehicle_id, [node], [], 0, {})
    pois: set[int] = set()
    speed = order.cruise_m_s * order.time_scale
    time.sleep(order.launch_delay_s)
    t0 = time.monotonic()
    for step in range(budget + 1):
        if order.fault is not None and step == order.fault.step:
            _inject(order.fault)
        t_decide = time.monotonic()
        if share is not None:
            share.drain()
        heard = {vid: p.step for vid, p in agent.view.peers.items()}
        obs, seen = observe(world, perception, node, step, budget)
        pois |= matcher.ids(node, seen)
        fix = fix_of(world, node)
        if step == budget:
            agent.perceive(obs, fix)  # the last view counts; no move left to make
            report.steps.append(StepTiming(t_decide, time.monotonic() - t_decide, 0.0, 0.0, heard))
            break
        action = agent.act(obs, fix)
        if agent.claim is not None and agent.view.claimed_by_peer(agent.claim.waypoint):
            report.claim_clashes += 1
        if share is not None:
            share.publish(step, fix, agent.claim)
            report.published_at.append(time.monotonic())
        nxt = action.node if action.kind == "move" and action.node in world.graph.adj[node] else node
        decide_s = time.monotonic() - t_decide
        a, b = world.graph.xy[node], world.graph.xy[nxt]
        flight_s = float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5) / speed
        t_fly = time.monotonic()
        time.sleep(flight_s)
        report.steps.append(StepTiming(t_decide, decide_s, flight_s, time.monotonic() - t_fly - flight_s, heard))
        node = nxt
        report.trail.append(node)
    report.mission_s = time.monotonic() - t0
    report.pois = sorted(pois)
    if share is not None:
        report.counters = vars(share.counters) | {"refused": dict(share.counters.refused)}
    return report


def _inject(fault: Fault) -> None:
    if fault.kind == "hang":
        while True:
            time.sleep(3600)
    raise InjectedFault(f"fault drill: crash at step {fault.step}")
