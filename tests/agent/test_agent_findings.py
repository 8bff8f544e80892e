"""What an agent tells its fleet: its own fixes, signs and looks, never what the fleet told it."""

from __future__ import annotations

from onboard.agent.agent import GraphAgent
from onboard.vocab.observation import (AgentObservation, LandmarkSighting, NeighbourMove, PoiSighting, SharedFindings,
                                       SharedLandmark)


def test_findings_are_the_agents_own_and_the_fleets_are_not_echoed():
    agent = GraphAgent(gazetteer=["Kiasma", "Stockmann"])
    assert agent.findings(32) is None  # no mission yet
    agent.reset("Café Engel is about 300 m north-east of Kiasma.")
    shared = SharedFindings((SharedLandmark("Stockmann", (500.0, 0.0), 10.0, 3),), (("Kahvila", (5.0, 5.0)),),
                            ((900.0, 900.0),))
    obs = AgentObservation(0, 40, (NeighbourMove(1, 0.0, 50.0), NeighbourMove(2, 90.0, 50.0)),
                           landmarks=(LandmarkSighting("Kiasma", 0.0, 400.0),),
                           pois=(PoiSighting("Apteekki", 90.0, 30.0),), shared=shared)
    agent.act(obs)
    mine = agent.findings(32)
    assert [(m.name, m.fixes) for m in mine.landmarks] == [("Kiasma", 1)]
    assert mine.landmarks[0].xy == (0.0, 400.0)
    assert mine.signs == (("Apteekki", (30.0, 0.0)),)
    assert mine.looked_from == ((0.0, 0.0),)
    assert agent.state.static.memory.placed("Stockmann")  # the fleet's landmark is used, not passed on
