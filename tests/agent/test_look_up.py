"""The agent looks over the roofs when the described landmarks stay unseen, and only then."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from onboard.agent.agent import VARIANTS, GraphAgent, variant_config
from onboard.vocab.observation import AgentAction, AgentObservation
from tests.agent.toy_city import ToyCity

DESCRIPTION = "Cafe Aalto is about 140 m north-east of Tower."
CRUISE = 25.0


def _agent(name="geometric", **over):
    return GraphAgent(replace(variant_config(name), **over), ["Tower"], name=name)


def _fly(city, agent, start=0, limit=60, ceiling=120.0, seen_at_cruise=lambda step: False,
         seen_from_above=True, refuse=False, refuse_above=None):
    """One mission where the landmark shows from the streets only when `seen_at_cruise(step)`, and from a
    look-up's altitude when `seen_from_above`; returns (arrived, look-ups asked: (step, node, altitude), seen).
    A look-up flown keeps the drone up there (no names read) until it comes down."""
    agent.reset(DESCRIPTION)
    node, alt, looks, seen = start, None, [], []
    for step in range(limit + 1):
        base = city.observe(node, step, limit - step, see_landmarks=seen_from_above if alt else seen_at_cruise(step))
        obs = replace(base, altitude_m=alt or CRUISE, look_up_ceiling_m=ceiling, pois=() if alt else base.pois)
        seen.append(obs)
        action = agent.act(obs)
        if action.kind == "arrive":
            assert alt is None  # arrivals are declared at cruise, where the name was read
            return True, looks, seen
        if step == limit:
            break
        if action.kind == "look_up":  # straight up here, or on the way to a neighbour; while up, only higher
            looks.append((step, node, action.altitude_m))
            allowed = refuse_above is None or action.altitude_m <= refuse_above  # the vehicle's own refusal
            if not refuse and allowed and ceiling is not None and (alt or CRUISE) < action.altitude_m <= ceiling:
                alt = action.altitude_m
                if action.node is not None:
                    assert action.node in {m.node for m in city.moves(node)}
                    node = action.node
            continue
        if action.kind == "come_down":  # to cruise, or part of the way down on the way to a neighbour
            assert alt is not None  # only ever asked for up there
            assert action.altitude_m is None or (action.node is not None and CRUISE < action.altitude_m < alt)
            alt = action.altitude_m
            if action.node is not None:
                assert action.node in {m.node for m in city.moves(node)}
                node = action.node
            continue
        assert action.node in {m.node for m in city.moves(node)}
        node = action.node
    return False, looks, seen


def test_looks_up_when_the_landmark_stays_unseen_then_finds_the_goal():
    city = ToyCity()
    agent = _agent()
    cfg = agent.config
    arrived, looks, seen = _fly(city, agent)
    assert arrived
    assert len(looks) == 1  # the landmark seen from above: no second look-up
    step, _, alt = looks[0]
    # the first of `vertical_legs` legs: the landmark shows from there, so no further climb
    half_way = CRUISE + (cfg.look_up_alt_m - CRUISE) / cfg.vertical_legs
    assert cfg.vertical_legs == 2 and step == cfg.look_up_after_steps and alt == half_way
    frames = agent.state.dynamic.trajectory_history
    climb = frames[step].movement  # flown on the way to the next waypoint (agent.look_up_on_the_way)
    assert climb["kind"] == "look_up" and climb["altitude_m"] == half_way and climb["node"] is not None
    assert "Tower" in agent.state.static.memory.fixes  # the sighting from above fixed it
    # from above no name is readable: those views do not count as places looked from
    up = [o for o in seen if o.altitude_m > CRUISE]
    assert len(up) >= 2  # it flew on up there, then came down to read names
    assert len(agent.state.static.memory.looked_from) == len(seen) - len(up)
    kinds = [f.movement["kind"] for f in frames]
    assert kinds.count("come_down") == 1 and kinds.index("come_down") > step + 1


def test_no_look_up_when_the_landmark_is_fixed():
    city = ToyCity()
    arrived, looks, _ = _fly(city, _agent(), seen_at_cruise=lambda step: True)
    assert arrived and looks == []
    # seen once early, then hidden: the fix stands, no look-up either
    arrived, looks, _ = _fly(city, _agent(look_up_after_steps=3), seen_at_cruise=lambda step: step == 2)
    assert arrived and looks == []


def test_ablation_never_looks_up():
    assert VARIANTS["geometric-no-look-up"] == {"use_look_up": False}
    city = ToyCity()
    _, looks, _ = _fly(city, _agent("geometric-no-look-up"), limit=40)
    assert looks == []


def test_no_look_up_unless_the_vehicle_offers_one():
    city = ToyCity()
    _, looks, _ = _fly(city, _agent(), limit=40, ceiling=None)  # the flight supervisor names no ceiling
    assert looks == []


def test_altitude_is_kept_under_the_ceiling():
    city = ToyCity()
    _, looks, _ = _fly(city, _agent(look_up_alt_m=90.0), ceiling=50.0)
    assert looks and looks[0][2] == 37.5 and all(alt <= 50.0 for _, _, alt in looks)  # half way to the ceiling
    _, looks, _ = _fly(city, _agent(look_up_alt_m=90.0), ceiling=50.0, seen_from_above=False, limit=20)
    assert [alt for _, _, alt in looks] == [37.5, 50.0]  # and on to it, never above
    _, looks, _ = _fly(city, _agent(), limit=30, ceiling=CRUISE)  # nothing above cruise on offer
    assert looks == []


def test_one_look_up_is_flown_on_while_the_landmark_stays_unseen():
    city = ToyCity(size=15)
    agent = _agent(look_up_after_steps=4, max_look_ups=3, look_up_spacing_m=150.0)
    _, looks, seen = _fly(city, agent, limit=80, seen_from_above=False)  # the landmark shows from nowhere
    assert [s for s, _, _ in looks] == [4, 5]  # one climb in two legs: it flies on up there, never back down
    assert all(o.altitude_m > CRUISE for o in seen[5:])
    d = agent.state.dynamic
    assert d.up_m == agent.config.look_up_alt_m
    # every waypoint flown up there is a place looked from over the roofs (the spacing of a next look-up)
    moves = sum(1 for f in d.trajectory_history[4:] if f.movement.get("node") is not None)  # the climb's, the rest
    assert [f.movement["kind"] for f in d.trajectory_history[4:6]] == ["look_up"] * 2
    assert len(d.looked_up_from) == 1 + moves - 1  # the climb's place, each arrival (the last one unobserved)
    assert "come_down" not in [f.movement["kind"] for f in d.trajectory_history]


def test_a_refused_further_climb_leaves_the_agent_up_where_it_is():
    city = ToyCity(size=15)
    agent = _agent()
    half_way = CRUISE + (agent.config.look_up_alt_m - CRUISE) / agent.config.vertical_legs
    _, looks, seen = _fly(city, agent, limit=12, seen_from_above=False, refuse_above=half_way)
    assert [alt for _, _, alt in looks] == [half_way, agent.config.look_up_alt_m]  # the second refused, not again
    assert all(o.altitude_m == half_way for o in seen[1:])  # so every view after is from half way up
    assert agent.state.dynamic.up_m == half_way  # and the agent knows it: up there, not at cruise
    kinds = [f.movement["kind"] for f in agent.state.dynamic.trajectory_history]
    assert "come_down" not in kinds


def test_refused_look_ups_do_not_loop():
    city = ToyCity(size=15)
    agent = _agent(look_up_after_steps=2, look_up_spacing_m=100.0)
    _, looks, seen = _fly(city, agent, limit=60, refuse=True)
    assert 1 <= len(looks) <= agent.config.max_look_ups
    assert agent.state.static.memory.fixes == {}  # a refused look-up shows nothing from above
    assert not agent.state.dynamic.from_above


def test_benchmark_episodes_record_the_climb():
    from sim.benchmark.runner import run_tasks
    from sim.benchmark.tasks import load_tasks, resolve_all
    from tests.sim._world_fixture import helsinki

    w = helsinki()
    city, tasks = load_tasks("bench/tasks/helsinki_ordinary_dev.json")
    rts = resolve_all(city, tasks[:8], w)
    with_look = run_tasks(w, rts, "geometric", "perfect", progress=False)["records"]
    without = run_tasks(w, rts, "geometric-no-look-up", "perfect", progress=False)["records"]
    assert all(r["look_ups"] == 0 and r["climb_m"] == 0 for r in without)
    assert sum(r["look_ups"] for r in with_look) > 0
    on_the_way = 0
    for r in with_look:
        assert r["refused_look_ups"] == 0
        # a look-up's climb and its come-down, each in legs: [step, node, to, from] / [step, node, from, to]
        legs_m = [to - fro for _, _, to, fro in r["look_up_at"]] + [fro - to for _, _, fro, to in r["come_down_at"]]
        assert r["climb_m"] == pytest.approx(sum(legs_m), abs=0.2)
        assert all(m > 0 for m in legs_m)
        ups = sum(to - fro for _, _, to, fro in r["look_up_at"])
        downs = sum(fro - to for _, _, fro, to in r["come_down_at"])
        assert downs == pytest.approx(ups, abs=0.2) or not r["success"]  # arrivals are at cruise
        tr = r["trajectory"]
        legs = {s: w.graph.edge_length(tr[s - 1], tr[s]) for s in range(1, len(tr)) if tr[s - 1] != tr[s]}
        expected = sum(legs.values())
        for s, _, a, b in r["look_up_at"] + r["come_down_at"]:  # straight up or down, or one sloped leg
            drop = abs(a - b)
            leg = s + 1  # recorded at the step the agent chose it; the trajectory's entry after it
            sloped = leg in legs
            on_the_way += sloped
            expected += float(np.hypot(legs[leg], drop)) - legs[leg] if sloped else drop
        assert abs(r["path_m"] - expected) < 0.5
    assert on_the_way > 0  # the experts climb and come down on the way where they move on


def test_a_climb_or_come_down_on_the_way_flies_one_sloped_leg_and_a_refused_one_none():
    from sim.benchmark.agent_api import Action
    from sim.benchmark.episode import run_episode
    from sim.benchmark.tasks import load_tasks, resolve_all
    from tests.sim._world_fixture import helsinki

    w = helsinki()
    city, tasks = load_tasks("bench/tasks/helsinki_ordinary_dev.json")
    rt = resolve_all(city, tasks[:1], w)[0]
    a = rt.start_node
    b = next(iter(w.graph.adj[a]))

    class Scripted:
        name = "scripted"

        def __init__(self, actions):
            self.actions = list(actions)

        def reset(self, description, seed):
            pass

        def act(self, obs):
            self.seen = obs
            return self.actions.pop(0) if self.actions else Action.arrive()

    agent = Scripted([Action.come_down("", b), Action.look_up(80.0), Action.come_down("", b)])
    r = run_episode(w, rt, agent)
    # the first is refused (nothing to come down from): the vehicle's rule, as in flight
    assert r["refused_look_ups"] == 1 and r["invalid_moves"] == 0 and r["trajectory"] == [a, a, a, b]
    drop = 80.0 - w.cruise_alt
    assert r["path_m"] == pytest.approx(drop + np.hypot(w.graph.edge_length(a, b), drop), abs=0.1)
    assert r["climb_m"] == pytest.approx(2 * drop, abs=0.1) and r["come_down_at"] == [[2, a, 80.0, w.cruise_alt]]
    assert agent.seen.altitude_m == w.cruise_alt  # at cruise over b

    # Up on the way (above the ceiling: refused, nothing flown), then down on the way back.
    agent = Scripted([Action.look_up(500.0, "", b), Action.look_up(80.0, "", b), Action.come_down("", a)])
    r = run_episode(w, rt, agent)
    assert r["refused_look_ups"] == 1 and r["trajectory"] == [a, a, b, a]
    assert r["look_up_at"] == [[1, a, 80.0, w.cruise_alt]] and r["come_down_at"] == [[2, b, 80.0, w.cruise_alt]]
    assert r["path_m"] == pytest.approx(2 * np.hypot(w.graph.edge_length(a, b), drop), abs=0.1)

    # In legs: half way up on the way, the rest straight up, part of the way down straight (refused: only on the
    # way), then half way down on the way and the rest on the way back; a further "climb" to the same altitude
    # is refused.
    mid = (80.0 + w.cruise_alt) / 2
    agent = Scripted([Action.look_up(mid, "", b), Action.look_up(mid), Action.look_up(80.0),
                      Action.come_down("", None, mid), Action.come_down("", a, mid), Action.come_down("", b)])
    r = run_episode(w, rt, agent)
    assert r["refused_look_ups"] == 2 and r["invalid_moves"] == 0 and r["trajectory"] == [a, b, b, b, b, a, b]
    assert r["look_ups"] == 1 and r["look_up_at"] == [[0, a, mid, w.cruise_alt], [2, b, 80.0, mid]]
    assert r["come_down_at"] == [[4, b, 80.0, mid], [5, a, mid, w.cruise_alt]]
    half = 80.0 - mid
    e = w.graph.edge_length(a, b)
    assert r["path_m"] == pytest.approx(3 * np.hypot(e, half) + half, abs=0.1)
    assert r["climb_m"] == pytest.approx(4 * half, abs=0.1)


def _placed(description, names, gazetteer=("Tower", "Mast")):
    from onboard.vocab.observation import LandmarkSighting

    agent = GraphAgent(variant_config("geometric"), list(gazetteer), name="geometric")
    agent.reset(description)
    sightings = tuple(LandmarkSighting(n, 45.0 * i, 200.0) for i, n in enumerate(names))
    agent.state.static.memory.observe(0, np.zeros(2), sightings)
    return agent.state


def test_one_end_of_a_between_is_worth_a_look_up_for_the_other():
    from onboard.agent.exploring import between_end_missing

    between = "Cafe Aalto is between Tower and Mast."
    assert between_end_missing(_placed(between, ["Tower"]))
    assert not between_end_missing(_placed(between, ["Tower", "Mast"]))
    assert not between_end_missing(_placed(between, []))  # nothing placed: the plain rule looks up
    # a distance from a placed landmark bounds the goal: no climb for the other end
    assert not between_end_missing(_placed("Cafe Aalto is 140 m north-east of Tower and between Tower and Mast.",
                                           ["Tower"]))
    assert not between_end_missing(_placed(DESCRIPTION, ["Tower"]))


def test_after_look_ups_in_vain_exploring_heads_past_what_they_covered():
    from onboard.agent.exploring import explore_target, frontier_target

    state = _placed(DESCRIPTION, [])
    d = state.dynamic
    seen = {"Near": np.array([100.0, 0.0]), "Far": np.array([0.0, 900.0]), "Mid": np.array([400.0, 0.0])}
    assert frontier_target(state, seen) is None  # no look-up yet: the streets' sightings lead
    d.looked_up_from = [np.array([300.0, 0.0])]
    assert frontier_target(state, seen) is None  # one look-up in vain is not enough (the public tasks' lesson)
    d.looked_up_from = [np.array([300.0, 0.0]), np.array([0.0, 200.0])]
    assert np.allclose(frontier_target(state, seen), [0.0, 900.0])  # 700 m from the nearest place looked from
    from onboard.vocab.observation import LandmarkSighting

    state.static.memory.observe(1, np.zeros(2), (LandmarkSighting("Near", 90.0, 100.0),  # the expert's reading
                                                 LandmarkSighting("Far", 0.0, 900.0),
                                                 LandmarkSighting("Mid", 90.0, 400.0)))
    d.position = np.array([10.0, 10.0])
    target, why = explore_target(state)
    assert np.allclose(target, [0.0, 900.0]) and "looked over the roofs" in why
    # everything seen lies within look_up_spacing_m of a place looked from: nothing beyond to head for
    d.looked_up_from = [np.array([300.0, 0.0]), np.array([0.0, 800.0])]
    assert frontier_target(state, {k: seen[k] for k in ("Near", "Mid")} | {"Far": np.array([0.0, 900.0])}) is None
    assert frontier_target(replace_state_config(state, explore_frontier_after_look_ups=0), seen) is None


def replace_state_config(state, **over):
    from dataclasses import replace as dc_replace

    state.static.config = dc_replace(state.static.config, **over)
    return state


def test_with_one_end_of_a_between_placed_the_drone_explores_for_the_other_and_searches_once_both_are():
    """The known end is no place to search round: the goal lies towards the other end, however far."""
    city = ToyCity(landmarks={"Tower": (200.0, 200.0)}, pois={"Cafe Aalto": (400.0, 400.0)})
    agent = GraphAgent(variant_config("geometric"), ["Tower", "Mast"], name="geometric")
    agent.reset("Cafe Aalto is between Tower and Mast.")
    city.fly(agent, start=city.node(4, 4), limit=12)  # Mast is never in view
    frames = agent.state.dynamic.trajectory_history
    assert agent.state.static.memory.placed("Tower") and not agent.state.static.memory.placed("Mast")
    assert [f.strategy for f in frames if f.movement.get("kind") == "move"] and \
        all(f.strategy == "navigate" for f in frames), [f.strategy for f in frames]
    assert all("exploring" in f.reason for f in frames if f.movement.get("kind") == "move")
    # both ends placed: their midpoint is the estimate, and the drone searches there
    city2 = ToyCity(landmarks={"Tower": (200.0, 200.0), "Mast": (400.0, 200.0)}, pois={"Cafe Aalto": (300.0, 350.0)})
    agent.reset("Cafe Aalto is between Tower and Mast.")
    city2.fly(agent, start=city2.node(4, 4), limit=12)
    assert any(f.strategy == "search" for f in agent.state.dynamic.trajectory_history)
