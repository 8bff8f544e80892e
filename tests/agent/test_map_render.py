"""The agent's landmark and semantic maps, drawn from a real agent state in the toy city."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from contract.results import map_file_names
from onboard.agent import map_render as mr
from onboard.agent.agent import GraphAgent
from onboard.agent.settings import AgentConfig
from onboard.agent.step_report import anchor_graph_payload
from onboard.vocab.text_fold import ascii_text
from tests.agent.toy_city import ToyCity

TASK = "Cafe Aalto is about 140 m north-east of Tower."


def _city() -> ToyCity:
    return ToyCity(landmarks={"Tower": (200.0, 200.0), "Kiasma": (400.0, 50.0)})


def _agent() -> GraphAgent:
    agent = GraphAgent(AgentConfig(), ["Tower", "Kiasma"])
    agent.reset(TASK)
    return agent


@pytest.fixture(scope="module")
def short_flight() -> GraphAgent:
    """Five moves from the south-west corner: landmarks seen, target estimated, goal not reached."""
    agent = _agent()
    arrived, _, trail = _city().fly(agent, start=0, limit=5)
    assert not arrived and len(trail) == 6
    return agent


def _px(img: np.ndarray, view: mr.View, xy) -> tuple[int, int, int]:
    c, r = view.px(xy)
    assert 0 <= c < mr.SIZE and 0 <= r < mr.MAP_H, (xy, c, r)
    return tuple(int(v) for v in img[r, c])


def test_an_empty_state_draws_only_background_and_legend():
    agent = _agent()
    for render in (mr.render_landmark_map, mr.render_semantic_map):
        img, _ = render(agent.state, "t1")
        assert img.shape == (mr.SIZE, mr.SIZE, 3) and img.dtype == np.uint8
        assert (img[:mr.MAP_H] == mr.BACKGROUND).all()
        legend = img[mr.MAP_H + 1:]
        assert (legend != mr.LEGEND_BG).any(axis=2).mean() > 0.02  # title, entries, scale bar


def test_landmark_map_shows_landmarks_target_and_trajectory(short_flight):
    st = short_flight.state
    img, view = mr.render_landmark_map(st, "t1")
    assert _px(img, view, (200.0, 200.0)) == mr.LANDMARK_GOAL      # Tower: the description names it
    assert _px(img, view, (400.0, 50.0)) == mr.LANDMARK_OTHER      # Kiasma: seen, not named
    target = st.static.memory.target()
    assert np.hypot(*(target - (299.0, 299.0))) < 2.0
    assert _px(img, view, target) == mr.TARGET
    poses = [np.array(fr.pose[:2]) for fr in st.dynamic.trajectory_history]
    assert _px(img, view, (poses[0] + poses[1]) / 2) == mr.TRAJECTORY
    assert _px(img, view, poses[-1]) == mr.DRONE
    assert tuple(int(v) for v in img[2, 2]) == mr.BACKGROUND       # a corner far from it all
    # north-up: the Tower (north-east of take-off) is drawn up and to the right of the take-off point
    (c0, r0), (c1, r1) = view.px(poses[0]), view.px((200.0, 200.0))
    assert c1 > c0 and r1 < r0


def test_semantic_map_shows_flown_frontier_searched_anchors_and_target(short_flight):
    st = short_flight.state
    img, view = mr.render_semantic_map(st, "t1")
    streets = st.static.street_map
    flown = sorted(streets.flown)
    frontier = streets.frontier()
    assert len(flown) == 6 and frontier  # take-off and five moves; their unflown neighbours
    drone = np.array(st.dynamic.trajectory_history[-1].pose[:2])
    for n in flown:
        if np.hypot(*(streets.xy[n] - drone)) > 1.0:  # not the one under the drone
            assert _px(img, view, streets.xy[n]) in (mr.VISITED, mr.REVISITED), n
    assert all(_px(img, view, streets.xy[n]) == mr.FRONTIER for n in frontier
               if min(np.hypot(*(streets.xy[n] - streets.xy[m])) for m in flown) > 20.0)
    assert _px(img, view, (15.0, 35.0)) == mr.SEARCHED  # within arrive_within_m of flown waypoints
    assert _px(img, view, st.static.memory.target()) == mr.TARGET
    anchor = anchor_graph_payload(st).anchors[-1]
    c, r = view.px((anchor.x, anchor.y))
    assert tuple(int(v) for v in img[r - 7, c]) == mr.place_colour("waypoint 1")  # its ring, north side


def test_maps_are_written_as_documented_and_decode_losslessly(tmp_path, short_flight):
    st = short_flight.state
    landmark, semantic = mr.write_maps(st, tmp_path, "t019")
    step = st.dynamic.trajectory_history[-1].timestep
    assert step == 5
    files = sorted(p.name for p in (tmp_path / "semantic_images").iterdir())
    assert files == ["landmark_t019_step_0005.png", "semantic_t019_step_0005.png"]
    assert (tmp_path / "semantic_images" / files[1]).read_bytes() == semantic
    for png, render in ((landmark, mr.render_landmark_map), (semantic, mr.render_semantic_map)):
        decoded = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        assert np.array_equal(decoded, render(st, "t019")[0])
    assert map_file_names("run 7/b", 12) == ("landmark_run_7_b_step_0012.png", "semantic_run_7_b_step_0012.png")


def test_drawing_the_maps_every_step_changes_no_decision(tmp_path):
    plain, drawn = _agent(), _agent()
    inner = drawn.act

    def act(obs):
        action = inner(obs)
        mr.write_maps(drawn.state, tmp_path, "t1")
        return action
    drawn.act = act
    a = _city().fly(plain, start=0)
    b = _city().fly(drawn, start=0)
    assert a == b and a[0]
    assert len(list((tmp_path / "semantic_images").iterdir())) == 2 * len(drawn.state.dynamic.trajectory_history)


def test_names_outside_ascii_are_transliterated():
    assert ascii_text("Metsätalo Ö") == "Metsatalo O"
    assert mr.scene_class("waypoint 412") == "waypoint"
