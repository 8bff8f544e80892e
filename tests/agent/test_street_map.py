import numpy as np

from onboard.vocab.observation import NeighbourMove
from onboard.agent.street_map import StreetMap


def test_routes_frontier_and_rename():
    m = StreetMap()
    m.observe(-1, (NeighbourMove(1, 90.0, 50.0), NeighbourMove(2, 0.0, 50.0)))
    assert np.allclose(m.xy[1], [50.0, 0.0]) and set(m.frontier()) == {1, 2}
    m.rename(-1, 7)  # from waypoint 1 the take-off waypoint shows up under its real id, 7
    m.observe(1, (NeighbourMove(7, 270.0, 50.0), NeighbourMove(3, 90.0, 50.0)))
    dist, first = m.routes_from(1)
    assert dist[2] == 100.0 and first[2] == 7 and first[3] == 3
    assert 7 in m.flown and -1 not in m.xy
