import numpy as np

from onboard.agent.goal_description import parse_goal_description
from onboard.agent.geometry import offset
from onboard.vocab.observation import LandmarkSighting
from onboard.agent.working_memory import WorkingMemory, robust_position


def _memory(text: str, names=("Kiasma", "Stockmann")) -> WorkingMemory:
    return WorkingMemory(parse_goal_description(text, list(names)))


def sighting(name, frm, lm_xy):
    v = np.asarray(lm_xy) - np.asarray(frm)
    return LandmarkSighting(name, float(np.degrees(np.arctan2(v[0], v[1])) % 360), float(np.hypot(*v)))


def test_goal_is_landmark_fix_plus_described_offset():
    wm = _memory("Café Engel is about 300 m north-east of Kiasma.")
    assert wm.target() is None  # nothing seen yet: no estimate
    wm.observe(0, np.array([0.0, 0.0]), (sighting("Kiasma", (0, 0), (100, 400)),))
    expected = np.array([100.0, 400.0]) + offset(45.0, 300.0)
    assert np.allclose(wm.target(), expected, atol=1e-6)


def test_estimate_is_kept_and_dead_reckoned_when_no_landmark_is_visible():
    wm = _memory("Café Engel is about 300 m north-east of Kiasma.")
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (100, 400)),))
    before = wm.target().copy()
    wm.observe(1, np.array([50.0, 0.0]), ())  # moved east, landmark hidden
    assert np.allclose(wm.target(), before)  # the target stays put in the own frame ...
    rel = wm.target() - np.array([50.0, 0.0])  # ... so its bearing from the drone follows the drone's motion
    assert np.allclose(rel, before - np.array([50.0, 0.0]))


def test_reappearing_landmark_re_evaluates_and_outliers_are_rejected():
    wm = _memory("Café Engel is about 300 m north-east of Kiasma.")
    rng = np.random.default_rng(0)
    truth = np.array([100.0, 400.0])
    for step in range(12):
        pos = np.array([10.0 * step, 0.0])
        noisy = truth + rng.normal(0, 10, 2)
        wm.observe(step, pos, (sighting("Kiasma", pos, noisy),))
    wm.observe(12, np.zeros(2), (sighting("Kiasma", (0, 0), (-350, 90)),))  # a false detection
    lm, spread = wm.landmark("Kiasma")
    assert np.hypot(*(lm - truth)) < 15.0
    assert spread < 30.0


def test_robust_position_is_not_pulled_by_one_short_range_fix():
    pts = [np.array([0.0, 0.0]), np.array([10.0, 0.0]), np.array([-10.0, 5.0]), np.array([300.0, -60.0])]
    p, spread = robust_position(pts)
    assert np.hypot(*p) < 10.0 and spread < 20.0


def test_two_rays_meet():
    wm = _memory("Arthur is east of Kiasma and north of Stockmann.")
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)), sighting("Stockmann", (0, 0), (300, 0))))
    assert np.allclose(wm.target(), [300.0, 200.0], atol=1e-6)


def test_between_uses_one_end_until_both_are_seen():
    wm = _memory("Ihana is between Kiasma and Stockmann.")
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)),))
    assert np.allclose(wm.target(), [0.0, 200.0])
    wm.observe(1, np.zeros(2), (sighting("Stockmann", (0, 0), (400, 200)),))
    assert np.allclose(wm.target(), [200.0, 200.0])
    assert wm.estimate().complete


def test_read_goal_overrides_the_description():
    wm = _memory("Café Engel is about 300 m north-east of Kiasma.")
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (100, 400)),))
    wm.see_goal(np.array([10.0, 10.0]), 90.0, 30.0)
    assert np.allclose(wm.target(), [40.0, 10.0])


def test_unseen_region_shrinks_where_the_drone_looked_and_reading_range_is_measured():
    wm = _memory("Café Engel is about 400 m east of Kiasma.")
    assert wm.unseen_region(45.0) is None  # no estimate: nothing to say
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)),))
    whole = wm.unseen_region(45.0)
    assert len(whole) > 0
    spot = np.array([400.0, 200.0])  # the estimate, the arc's middle
    wm.looked(spot, [20.0, 58.0])  # names read up to 58 m there, not the goal's
    assert wm.read_range(45.0) == 58.0
    left = wm.unseen_region(45.0)
    assert 0 < len(left) < len(whole)
    assert np.min(np.hypot(*(left - spot).T)) > 58.0
    for b in np.radians(np.arange(60.0, 121.0, 3.0)):  # fly the whole arc, 400 m from Kiasma
        wm.looked(np.array([0.0, 200.0]) + 400.0 * np.array([np.sin(b), np.cos(b)]), [])
    assert len(wm.unseen_region(45.0)) == 0  # all looked at: the search falls back on the estimate


def test_two_distances_meet_where_their_arcs_cross_not_at_the_mean_of_their_points():
    # the café is truly at (200, 300): 361 m from each landmark, at 34 and 326 degrees, which
    # the words round to NE and NW; the two offset points are 45 m below it, either side
    wm = _memory("Café Engel is 360 m north-east of Kiasma and 360 m north-west of Stockmann.")
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 0.5)), sighting("Stockmann", (0, 0), (400, 0))))
    mean = (np.array([0.0, 0.5]) + offset(45.0, 360.0) + np.array([400.0, 0.0]) + offset(315.0, 360.0)) / 2
    assert np.hypot(*(mean - [200.0, 300.0])) > 40.0
    assert np.hypot(*(wm.target() - [200.0, 300.0])) < 15.0


# -- the fleet's findings ----------------------------------------------------------------------------

def _shared(marks=(), signs=(), looked=()):
    from onboard.vocab.observation import SharedFindings, SharedLandmark

    return SharedFindings(tuple(SharedLandmark(n, xy, spread, fixes) for n, xy, spread, fixes in marks),
                          tuple(signs), tuple(looked))


def test_a_landmark_another_vehicle_placed_gives_the_estimate_until_this_one_fixes_it():
    wm = _memory("Café Engel is about 300 m north-east of Kiasma.")
    assert wm.share(_shared(marks=[("Kiasma", (110.0, 390.0), 5.0, 4)]), spread_floor_m=25.0)
    assert wm.placed("Kiasma") and wm.landmark("Kiasma", live_only=True) is None
    assert np.allclose(wm.target(), np.array([110.0, 390.0]) + offset(45.0, 300.0), atol=1e-6)
    assert wm.landmark("Kiasma")[1] == 25.0  # its spread is at least the floor: another vehicle's odometry
    assert not wm.share(_shared(marks=[("Kiasma", (110.0, 390.0), 5.0, 4)]), spread_floor_m=25.0)  # no news
    wm.observe(3, np.zeros(2), (sighting("Kiasma", (0, 0), (100, 400)),))  # its own sighting wins
    assert np.allclose(wm.target(), np.array([100.0, 400.0]) + offset(45.0, 300.0), atol=1e-6)


def test_a_sign_of_the_goal_another_vehicle_read_is_the_target_until_the_estimate_contradicts_it():
    wm = _memory("Café Engel is about 300 m north-east of Kiasma.")
    wm.prior_conflict_m = 250.0
    wm.share(_shared(signs=[("Kahvila Kulma", (0.0, 50.0)), ("Café Engel", (330.0, 610.0))]), spread_floor_m=25.0)
    assert np.allclose(wm.prior, [330.0, 610.0]) and np.allclose(wm.target(), [330.0, 610.0])
    assert wm.goal_fix is None  # it is a lead, not a reading: this vehicle must read the name itself
    wm.observe(1, np.zeros(2), (sighting("Kiasma", (0, 0), (-800, -400)),))  # the description says elsewhere
    assert wm.prior is None and "remembered position" in wm.prior_dropped


def test_places_other_vehicles_looked_from_hold_no_goal():
    wm = _memory("Café Engel is about 400 m east of Kiasma.")
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)),))
    whole = len(wm.unseen_region(45.0))
    wm.share(_shared(looked=[(400.0, 200.0)]), spread_floor_m=25.0)
    left = wm.unseen_region(45.0)
    assert 0 < len(left) < whole and np.min(np.hypot(*(left - (400.0, 200.0)).T)) > 45.0


def _looked_round(wm: WorkingMemory, centre, radius: float) -> None:
    for x in np.arange(-radius, radius + 1, 30.0):
        for y in np.arange(-radius, radius + 1, 30.0):
            wm.looked(np.asarray(centre) + [x, y], [])


def test_a_lone_ray_reaches_further_once_the_ground_round_its_point_was_looked_at():
    wm = WorkingMemory(parse_goal_description("Arthur is east of Kiasma.", ["Kiasma"]), ray_default_m=150.0,
                       ray_max_m=450.0)
    wm.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)),))
    assert np.allclose(wm.target(), [150.0, 200.0])
    assert not wm.extend_ray(45.0, 0.25)  # nothing looked at yet: the point stays
    _looked_round(wm, (150.0, 200.0), 200.0)
    assert wm.extend_ray(45.0, 0.25)
    assert np.allclose(wm.target(), [300.0, 200.0])  # one default reach further along the ray
    assert wm.extend_ray(45.0, 0.25) is False  # the new point's ground is not looked at yet
    _looked_round(wm, (300.0, 200.0), 200.0)
    assert wm.extend_ray(45.0, 0.25) and np.allclose(wm.target(), [450.0, 200.0])
    _looked_round(wm, (450.0, 200.0), 200.0)
    assert not wm.extend_ray(45.0, 0.25)  # never past ray_max_m
    assert np.allclose(wm.target(), [450.0, 200.0])


def test_a_ray_with_a_crossing_or_a_distance_never_reaches_further():
    two = WorkingMemory(parse_goal_description("Arthur is east of Kiasma and north of Stockmann.",
                                               ["Kiasma", "Stockmann"]), ray_max_m=600.0)
    two.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)), sighting("Stockmann", (0, 0), (300, 0))))
    _looked_round(two, (300.0, 200.0), 300.0)
    assert not two.extend_ray(45.0, 1.0) and np.allclose(two.target(), [300.0, 200.0])
    offset_task = WorkingMemory(parse_goal_description("Arthur is 300 m east of Kiasma.", ["Kiasma"]), ray_max_m=600.0)
    offset_task.observe(0, np.zeros(2), (sighting("Kiasma", (0, 0), (0, 200)),))
    _looked_round(offset_task, (300.0, 200.0), 300.0)
    assert not offset_task.extend_ray(45.0, 1.0)
