"""An exploration team as N vehicle processes in real time (the parent half of `sim.explore_vehicle`).

Two ways to fly the same team exist on purpose. `sim.explore_episode.run_team`
flies the vehicles in lock-step in one process, each waiting for its peers'
frames every round: the run is deterministic, so it is the regression that
says whether a change to the explorer or the link helps. Here every vehicle
is its own process on its own clock and nobody waits: frames arrive late,
in bursts or not at all, a starved vehicle falls behind, a crashed one just
goes silent, as in a fleet. Its figures vary from run to run, and whether
sharing still pays under those conditions is what this mode is for.

The parent only starts the processes, tells each its peers' endpoints (each
child binds its own PUB on a free port), gives one common "go" and collects
the reports. Every wait has a deadline; a vehicle that dies is reported with
its exit code, one that wedges is killed, and the others' results stand.
"""

from __future__ import annotations

import bisect
import multiprocessing as mp
import time
from dataclasses import dataclass
from multiprocessing.connection import wait

from sim.explore_episode import TeamResult
from sim.explore_vehicle import Fault, VehicleOrder, VehicleReport, run


@dataclass
class VehicleOutcome:
    """One process: its report, or why there is none (`error`) and how it ended (`exitcode`)."""

    index: int
    exitcode: int | None
    report: VehicleReport | None
    error: str = ""
    timed_out: bool = False  # silent past a deadline: killed, not waited for

    @property
    def failed(self) -> bool:
        return self.report is None


@dataclass
class FleetTeamResult:
    """A team flown as processes; `team` holds what the lock-step bench reports, for the same metrics."""

    team: TeamResult
    outcomes: list[VehicleOutcome]
    setup_s: float  # spawn, world load and handshake, before the common take-off
    wall_s: float  # the whole run, processes ended

    @property
    def failed(self) -> list[int]:
        return [o.index for o in self.outcomes if o.failed]

    @property
    def reports(self) -> list[VehicleReport]:
        return [o.report for o in self.outcomes if o.report is not None]

    def news_lag(self) -> tuple[list[float], list[int]]:
        """At each decision, per peer still flying: age of its newest merged frame, and frames it sent not yet merged.

        One machine, one clock (`time.monotonic`). A peer publishes once per leg, so even a perfect
        link gives ages up to one of its legs; what exceeds that, and any frame sent but not yet
        merged, is the link or a starved process. A peer that has landed (sends nothing after this
        decision) or failed (no report) is left out: its silence is not lateness.
        """
        sent = {r.vehicle_id: r.published_at for r in self.reports}
        ages, behind = [], []
        for r in self.reports:
            for s in r.steps:
                for vid, times in sent.items():
                    if vid == r.vehicle_id or not times or times[-1] <= s.at:
                        continue
                    out = bisect.bisect_left(times, s.at)  # frames this peer had sent by the decision
                    got = s.heard.get(vid, -1) + 1
                    behind.append(max(out - got, 0))
                    if got:
                        ages.append(s.at - times[got - 1])
        return ages, behind


@dataclass(frozen=True)
class Pace:
    """The real-time clock: a leg of L metres takes L / (cruise_m_s * time_scale) seconds."""

    cruise_m_s: float = 10.0
    time_scale: float = 15.0  # Helsinki legs average 52 m: a 40-step mission takes ~14 s
    # Vehicle i takes off i * stagger_s after the first, as from one pad. 0 (all at once, as in the
    # lock-step bench) gave more coverage than 0.5 s on 2026-11-26: the first vehicle's early legs are
    # then chosen knowing nothing of the others (bench/results/2026-11-26/explore_fleet/).
    stagger_s: float = 0.0


def run_fleet_team(start: int, budget: int, vehicles: int, sharing: bool, seed: int, *,
                   noise: str = "perfect", pace: Pace = Pace(), team: str = "bench",
                   world_pbf: str | None = None, world_dir: str | None = None,
                   faults: dict[int, Fault] | None = None, setup_timeout_s: float = 120.0,
                   mission_timeout_s: float | None = None) -> FleetTeamResult:
    """Fly `vehicles` explorer processes from `start` for `budget` moves each; seeds as `run_team`'s."""
    faults = faults or {}
    if mission_timeout_s is None:
        mission_timeout_s = 60.0 + budget * 2.0  # a hang guard, ~10x a 40-step mission's flight time
    ctx = mp.get_context("spawn")
    orders = [VehicleOrder(i, f"v{i}", start, budget, seed * 7919 + i, seed * 7919 + 101 + i, sharing, team,
                           noise, pace.cruise_m_s, pace.time_scale, i * pace.stagger_s, world_pbf, world_dir,
                           fault=faults.get(i)) for i in range(vehicles)]
    t0 = time.monotonic()
    procs, conns = [], []
    outcomes = {i: VehicleOutcome(i, None, None) for i in range(vehicles)}
    try:
        for o in orders:
            parent_end, child_end = ctx.Pipe()
            p = ctx.Process(target=run, args=(o, child_end), name=f"explore-{o.vehicle_id}", daemon=True)
            p.start()
            child_end.close()  # the child's death now reads as EOF here
            procs.append(p)
            conns.append(parent_end)
        live = set(range(vehicles))
        ready = _gather(conns, live, "ready", t0 + setup_timeout_s, outcomes)
        live = set(ready)
        for i in live:
            conns[i].send(("peers", [ready[j] for j in sorted(live) if j != i] if sharing else []))
        subscribed = _gather(conns, live, "subscribed", t0 + setup_timeout_s, outcomes)
        live = set(subscribed)
        for i in live:
            conns[i].send(("go",))
        setup_s = time.monotonic() - t0
        done = _gather(conns, live, "done", time.monotonic() + mission_timeout_s, outcomes)
        for i, rep in done.items():
            outcomes[i].report = rep
    finally:
        for i, p in enumerate(procs):
            _end(p, outcomes[i])
        for c in conns:
            c.close()
    reports = {i: o.report for i, o in outcomes.items() if o.report is not None}
    result = TeamResult(start, vehicles, sharing,
                        [set(reports[i].pois) if i in reports else set() for i in range(vehicles)],
                        [reports[i].trail if i in reports else [] for i in range(vehicles)])
    result.claim_clashes = sum(r.claim_clashes for r in reports.values())
    result.counters = [r.counters for r in reports.values() if r.counters]
    result.refused_frames = sum(sum(c.get("refused", {}).values()) for c in result.counters)
    result.wall_s = time.monotonic() - t0
    return FleetTeamResult(result, [outcomes[i] for i in range(vehicles)], setup_s, result.wall_s)


def _gather(conns, waiting: set[int], want: str, deadline: float, outcomes: dict[int, VehicleOutcome]) -> dict:
    """Each waiting child's `want` message by `deadline`; a child that fails or stays silent drops out."""
    got: dict = {}
    pending = {conns[i]: i for i in waiting}
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            for i in pending.values():
                outcomes[i].error = outcomes[i].error or f"no {want!r} within the deadline"
                outcomes[i].timed_out = True
            break
        for c in wait(list(pending), timeout=left):
            i = pending.pop(c)
            try:
                kind, payload = c.recv()
            except (EOFError, OSError):
                outcomes[i].error = outcomes[i].error or f"process ended before {want!r}"
                continue
            if kind == want:
                got[i] = payload
            else:
                outcomes[i].error = payload if kind == "failed" else f"sent {kind!r}, expected {want!r}"
    return got


def _end(p, outcome: VehicleOutcome, grace_s: float = 5.0) -> None:
    """Join, then terminate, then kill: a wedged vehicle never holds the bench."""
    p.join(0.0 if outcome.timed_out else grace_s)
    if p.is_alive():
        p.terminate()
        p.join(grace_s)
    if p.is_alive():
        p.kill()
        p.join()
    outcome.exitcode = p.exitcode
