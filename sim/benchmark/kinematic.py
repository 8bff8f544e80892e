"""The benchmark's kinematic vehicle: straight legs at constant speed, vertical legs and turns by the clock.

`KinematicMover` flies straight between node positions at cruise speed and returns
the flight time, so hundreds of episodes run in minutes; `look_seconds` and
`vertical_seconds` time the looks of a mover that has no vertical legs of its own.
Both the episode (`episode.py`) and its vehicle port (`episode_ports.py`) use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sim.world.world import World

# A look-up climbs and descends at this speed (m/s) and turns a full circle at the top in this time (s).
LOOK_UP_VERTICAL_SPEED_M_S = 3.0
LOOK_UP_TURN_S = 10.0

class Mover(Protocol):
    def fly_to(self, node: int) -> float:
        """Fly from the current node to the neighbouring `node`; returns seconds taken."""

    # Optional (`KinematicMover`): `look_from(altitude_m) -> seconds` descends at the current
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
