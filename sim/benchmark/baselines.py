"""Agents that need no model: a random walk and a memoryless greedy (ReAct-like) agent.

Both recognise arrival the same way: a POI read close by whose name appears in
the description (and is not one of the landmarks it mentions).
"""

from __future__ import annotations

import numpy as np

from onboard.map.compass import angle_diff, bearing_deg
from sim.benchmark.agent_api import Action, Observation
from sim.benchmark.understand import estimate_goal, parse_relations
from sim.world.perception import PoiSighting, relative_xy

ARRIVE_WITHIN_M = 45.0


def goal_sighting(description: str, pois, landmark_names: list[str]) -> PoiSighting | None:
    """The sighted POI the description names (longest matching name wins)."""
    hits = [p for p in pois if p.name in description and p.name not in landmark_names]
    return max(hits, key=lambda p: len(p.name)) if hits else None


UTURN_PENALTY_DEG = 60.0


def toward(obs: Observation, bearing: float) -> int:
    """The neighbour whose direction is closest to `bearing`, U-turns discouraged.

    Turning back (within 30 degrees of the reverse of the last move) costs
    `UTURN_PENALTY_DEG`; this reads only the current heading, not a memory,
    and keeps a memoryless agent from bouncing between two nodes at every
    corner that does not lead straight to the goal.
    """
    back = (obs.heading + 180.0) % 360.0

    def cost(n) -> float:
        c = angle_diff(n.bearing, bearing)
        if obs.step > 0 and len(obs.neighbours) > 1 and angle_diff(n.bearing, back) < 30.0:
            c += UTURN_PENALTY_DEG
        return c

    return min(obs.neighbours, key=cost).node


class RandomWalk:
    """Picks a random neighbour each step; arrives when the goal's name is in sight."""

    name = "random"

    def __init__(self, landmark_names: list[str]):
        self.landmark_names = landmark_names
        self.rng = np.random.default_rng(0)
        self.description = ""

    def reset(self, description: str, seed: int) -> None:
        self.description = description
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Observation) -> Action:
        goal = goal_sighting(self.description, obs.pois, self.landmark_names)
        if goal and goal.distance <= ARRIVE_WITHIN_M:
            return Action.arrive(f"{goal.name} is {goal.distance:.0f} m away")
        if goal:
            return Action.move(toward(obs, goal.bearing), f"{goal.name} in sight")
        n = obs.neighbours[int(self.rng.integers(len(obs.neighbours)))]
        return Action.move(n.node, "random")


class Greedy:
    """Heads for the goal as estimated from the landmarks in view right now; no memory.

    With no described landmark in view it moves at random, like a ReAct agent
    that only reasons about the current observation.
    """

    name = "greedy"

    def __init__(self, landmark_names: list[str]):
        self.landmark_names = landmark_names
        self.rng = np.random.default_rng(0)
        self.description = ""
        self.relations = []

    def reset(self, description: str, seed: int) -> None:
        self.description = description
        self.relations = parse_relations(description, self.landmark_names)
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Observation) -> Action:
        goal = goal_sighting(self.description, obs.pois, self.landmark_names)
        if goal and goal.distance <= ARRIVE_WITHIN_M:
            return Action.arrive(f"{goal.name} is {goal.distance:.0f} m away")
        if goal:
            return Action.move(toward(obs, goal.bearing), f"{goal.name} in sight")
        positions = {s.name: relative_xy(s.bearing, s.distance) for s in obs.landmarks}
        est = estimate_goal(self.relations, positions)
        if est is not None and np.hypot(*est) > 1.0:
            brg = bearing_deg(est[0], est[1])
            return Action.move(toward(obs, brg), f"goal estimated {np.hypot(*est):.0f} m at {brg:.0f} deg")
        n = obs.neighbours[int(self.rng.integers(len(obs.neighbours)))]
        return Action.move(n.node, "no landmark in view")


def make_agent(name: str, landmark_names: list[str]):
    agents = {"random": RandomWalk, "greedy": Greedy, "memory": MemoryGreedy}
    if name not in agents:
        raise ValueError(f"unknown agent {name!r}; choose one of {sorted(agents)}")
    return agents[name](landmark_names)


class MemoryGreedy:
    """A model-free reference with PReP's memory ideas, used to calibrate perception presets.

    It dead-reckons its own position from the moves it makes (bearing and
    length of each edge flown), keeps every goal estimate in that frame and
    steers to their median (robust to a false landmark or a bad distance),
    and penalises nodes it has already visited, so it neither oscillates nor
    gives up the goal when the landmarks drop out of view. Near the estimate
    it searches the unvisited nodes around it until the goal's name is read.
    """

    name = "memory"
    KEEP = 12  # goal estimates kept for the median

    def __init__(self, landmark_names: list[str]):
        self.landmark_names = landmark_names
        self.reset("", 0)

    def reset(self, description: str, seed: int) -> None:
        self.description = description
        self.relations = parse_relations(description, self.landmark_names)
        self.rng = np.random.default_rng(seed)
        self.pos = np.zeros(2)
        self.visits: dict[int, int] = {}
        self.estimates: list[np.ndarray] = []
        self.here: int | None = None

    def act(self, obs: Observation) -> Action:
        goal = goal_sighting(self.description, obs.pois, self.landmark_names)
        if goal and goal.distance <= ARRIVE_WITHIN_M:
            return Action.arrive(f"{goal.name} is {goal.distance:.0f} m away")
        positions = {s.name: relative_xy(s.bearing, s.distance) for s in obs.landmarks}
        est = estimate_goal(self.relations, positions)
        if est is not None:
            self.estimates = (self.estimates + [self.pos + est])[-self.KEEP:]
        if goal:
            target_rel = relative_xy(goal.bearing, goal.distance)
        elif self.estimates:
            target_rel = np.median(np.array(self.estimates), axis=0) - self.pos
        else:
            target_rel = None

        def cost(n) -> float:
            v = self.visits.get(n.node, 0)
            if target_rel is None:
                return 90.0 * v + angle_diff(n.bearing, obs.heading) + self.rng.random()
            dist_after = np.hypot(*(target_rel - relative_xy(n.bearing, n.distance)))
            return dist_after + 60.0 * v + self.rng.random()

        choice = min(obs.neighbours, key=cost)
        self.pos = self.pos + relative_xy(choice.bearing, choice.distance)
        self.visits[choice.node] = self.visits.get(choice.node, 0) + 1
        return Action.move(choice.node, "towards the remembered goal estimate" if target_rel is not None else "explore")
