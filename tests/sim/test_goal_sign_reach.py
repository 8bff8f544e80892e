"""Which goals a camera on the corridor graph can read at all (the renderer's truth, no model)."""

from dataclasses import replace

from sim.goal_sign_reach import RESOLVABLE_ADVANCE_PX, goal_reach, reach_report
from tests.sim._world_fixture import helsinki


def _renderer(pitch):
    from sim.world.render import Camera, ViewRenderer

    return ViewRenderer(helsinki(), replace(Camera(), width=1920, height=1080, pitch_deg=pitch))


class _Task:
    def __init__(self, id, goal_name):
        self.id, self.goal_name = id, goal_name


def test_a_sign_in_front_of_a_waypoint_is_reachable_and_a_missing_one_is_not():
    world, rnd = helsinki(), _renderer(-15.0)
    r = goal_reach(world, rnd, "d001", "Stadin Piste", 60.0, 10.0)
    assert r.status == "reachable" and r.readable_from and r.best_advance_px >= RESOLVABLE_ADVANCE_PX
    assert goal_reach(world, rnd, "x", "No Such Shop Anywhere", 60.0, 10.0).status == "no_sign"
    # the same sign with an impossible size limit is seen but unreadable
    assert goal_reach(world, rnd, "d001", "Stadin Piste", 60.0, 500.0).status == "unreadable"


def test_a_goal_is_reachable_when_any_pitch_reads_it():
    world = helsinki()
    tasks = [_Task("d001", "Stadin Piste"), _Task("x", "No Such Shop Anywhere")]
    rep = reach_report(world, _renderer(-15.0), [-15.0, -45.0], tasks, 60.0, 10.0)
    assert rep["any_pitch"] == {"reachable": 1, "unreadable": 0, "no_sign": 1}
    assert set(rep["per_pitch"]) == {"-15.0", "-45.0"}
    assert all(v["reachable"] <= 1 and v["no_sign"] == 1 for v in rep["per_pitch"].values())


def test_the_views_are_taken_at_the_altitude_asked():
    """Lower down, the same sign is bigger in the frame; the report says from how high."""
    world, rnd = helsinki(), _renderer(-15.0)
    cruise = goal_reach(world, rnd, "d001", "Stadin Piste", 60.0, 10.0)
    low = goal_reach(world, rnd, "d001", "Stadin Piste", 60.0, 10.0, altitude_m=12.0)
    assert low.best_letter_px > cruise.best_letter_px
    rep = reach_report(world, rnd, [-15.0], [_Task("d001", "Stadin Piste")], 60.0, 10.0, 12.0)
    assert rep["altitude_m"] == 12.0
    assert reach_report(world, rnd, [-15.0], [], 60.0, 10.0)["altitude_m"] == world.cruise_alt
