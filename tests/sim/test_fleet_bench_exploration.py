"""`aerie bench fleet`'s exploration figure: N vehicle processes sharing vs not, judged by the world's POIs."""

from __future__ import annotations

import pytest

from sim.fleet_bench import exploration


def test_the_exploration_figure_counts_distinct_places_for_both_teams():
    pytest.importorskip("pyrosm")
    x = exploration(2, starts=1, budget=4)
    assert x["starts"] == 1 and x["failed_vehicles"] == 0
    assert x["distinct_places_sharing"] > 0 and x["distinct_places_independent"] > 0
    assert x["frames"]["merged"] > 0 and x["frames"]["refused"] == 0  # the sharing team's link carried frames
    assert x["command"].startswith("aerie bench explore --processes --vehicles 2")
