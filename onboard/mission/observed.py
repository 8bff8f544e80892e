"""What the vehicle perceives at one waypoint, and the waypoints it may fly to from there.

The mission runner (`onboard.mission.runner`) acts on these whichever sensor made them: the
simulator's world feed or the onboard map with the camera (`aerie fly`), or the benchmark's
oracle (`aerie bench nav`). Waypoint ids are opaque handles for the moves on offer; each move
carries its position, so the vehicle can fly there without knowing the map.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from onboard.vocab.observation import AgentObservation, LandmarkSighting, NeighbourMove, PoiSighting, SharedFindings


@dataclass(frozen=True)
class MoveOption:
    node: int
    bearing: float
    length: float
    lat: float
    lon: float


@dataclass(frozen=True)
class WorldObservation:
    """What the drone perceives at one waypoint, with the waypoints' positions for flying there."""

    node: int
    lat: float
    lon: float
    snap_m: float
    moves: tuple[MoveOption, ...]
    landmarks: tuple[LandmarkSighting, ...]
    pois: tuple[PoiSighting, ...]
    image_png: bytes | None = None
    altitude_m: float | None = None  # the camera altitude of the sightings (a look-up); None: the cruise view

    def for_agent(self, step: int, steps_left: int, *, cruise_alt_m: float | None = None,
                  look_up_ceiling_m: float | None = None, look_low_floor_m: float | None = None,
                  shared: SharedFindings | None = None, heading: float = 0.0) -> AgentObservation:
        """The agent's view of it: sightings at `altitude_m` (else `cruise_alt_m`), a look-up up to the ceiling,
        a look-low down to the floor, and what the fleet found (`shared`)."""
        return AgentObservation(step=step, steps_left=steps_left,
                                moves=tuple(NeighbourMove(m.node, m.bearing, m.length) for m in self.moves),
                                landmarks=self.landmarks, pois=self.pois,
                                altitude_m=self.altitude_m if self.altitude_m is not None else cruise_alt_m,
                                look_up_ceiling_m=look_up_ceiling_m, look_low_floor_m=look_low_floor_m,
                                shared=shared, heading=heading)

    def offers(self, node: int | None) -> bool:
        return node is not None and any(m.node == node for m in self.moves)

    def move(self, node: int) -> MoveOption:
        for m in self.moves:
            if m.node == node:
                return m
        raise KeyError(f"waypoint {node} is not on offer from waypoint {self.node}")

    def without(self, refused: set[int] | frozenset[int]) -> "WorldObservation":
        """This observation with the refused waypoints taken out of the moves on offer."""
        return replace(self, moves=tuple(m for m in self.moves if m.node not in refused)) if refused else self
