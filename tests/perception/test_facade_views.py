"""Facades warped to face the camera: the homography is the wall's, bad input gives no piece, never an error."""

import math

import numpy as np
import pytest

from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.facade_views import RectifySettings, facade_pieces
from onboard.perception.text_range import FootprintRanger
from sim.sign_frames import project

INTR = CameraIntrinsics.from_hfov(1280, 720, 81.0)
# A block 40 m east-west, 12 m deep, 14 m tall; its south wall runs along north = 20 m from east = -20 to 20.
BLOCK = np.array([[-20.0, 20.0], [20.0, 20.0], [20.0, 32.0], [-20.0, 32.0]])  # (east, north)


def _walls(*rings, heights=None) -> FootprintRanger:
    return FootprintRanger(list(rings), heights if heights is not None else [14.0] * len(rings))


def _south_wall(pieces):
    # the south wall is edge 0 (from (-20, 20) to (20, 20))
    return [p for p in pieces if p.edge == 0]


def test_a_rectangle_on_a_wall_seen_aslant_is_a_rectangle_in_the_picture():
    """Seen 60+ degrees off square-on, a 6 m x 1 m rectangle on the wall comes back square-cornered and to scale."""
    pose = CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=60.0, pitch_deg=-10.0)
    pieces = _south_wall(facade_pieces(_walls(BLOCK), INTR, pose, RectifySettings(min_angle_deg=50.0)))
    assert pieces, "the south wall is in view and aslant"
    piece = max(pieces, key=lambda p: p.size[0])
    assert piece.angle_deg >= 50.0
    # corners of a rectangle on the wall (east -12..-6, 2.5..3.5 m up), in NED, through the camera
    rect = np.array([[20.0, e, -z] for e, z in ((-12, 3.5), (-6, 3.5), (-6, 2.5), (-12, 2.5))])
    px, depth = project(INTR, pose, rect)
    assert (depth > 0).all()
    squash = np.linalg.norm(px[1] - px[0]) / np.linalg.norm(px[3] - px[0])
    assert squash < 3.0, f"the rectangle (6:1) is seen aslant in the frame: {squash:.2f}:1"
    inv = np.linalg.inv(piece.homography)
    q = np.column_stack([px, np.ones(4)]) @ inv.T
    q = q[:, :2] / q[:, 2:3]
    tol = 0.01 * piece.px_per_m * 6  # 1 % of the rectangle's width
    assert abs(q[0, 1] - q[1, 1]) < tol and abs(q[2, 1] - q[3, 1]) < tol, q  # top and bottom level
    assert abs(q[0, 0] - q[3, 0]) < tol and abs(q[1, 0] - q[2, 0]) < tol, q  # sides upright
    width, height = q[1, 0] - q[0, 0], q[3, 1] - q[0, 1]
    assert width > 0 and height > 0, "left to right and top to bottom as read from the street"
    assert width / height == pytest.approx(6.0, rel=0.01)
    assert width == pytest.approx(6 * piece.px_per_m, rel=0.01)
    # the band's top (6 m up) is the picture's top row
    top = project(INTR, pose, np.array([[20.0, -9.0, -6.0]]))[0]
    t = np.append(top[0], 1.0) @ inv.T
    assert t[1] / t[2] == pytest.approx(0.0, abs=tol)


def test_a_wall_seen_square_on_is_left_to_the_frame():
    pose = CameraPose(north=-20.0, east=0.0, down=-12.0, yaw_deg=0.0, pitch_deg=-10.0)
    assert not _south_wall(facade_pieces(_walls(BLOCK), INTR, pose, RectifySettings(min_angle_deg=50.0)))


@pytest.mark.parametrize("pose", [
    CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=240.0, pitch_deg=-10.0),  # looking away: the wall is behind
    CameraPose(north=20.0, east=-60.0, down=-12.0, yaw_deg=90.0, pitch_deg=-10.0),  # in the wall's plane: edge-on
    CameraPose(north=40.0, east=0.0, down=-12.0, yaw_deg=180.0, pitch_deg=-10.0),  # north of the block: its back
    CameraPose(north=float("nan"), east=-40.0, down=-12.0, yaw_deg=60.0),
    CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=float("nan")),
    CameraPose(north=5.0, east=-40.0, down=float("inf"), yaw_deg=60.0),
    CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=60.0, pitch_deg=-90.0),  # straight down: no wall aslant
])
def test_walls_out_of_sight_or_a_bad_pose_give_no_south_wall_piece(pose):
    assert not _south_wall(facade_pieces(_walls(BLOCK), INTR, pose))


@pytest.mark.parametrize("rings", [
    [np.zeros((0, 2))],
    [np.array([[1.0, 2.0]])],  # one point
    [np.array([[0.0, 30.0], [0.0, 30.0], [0.0, 30.0]])],  # all edges of zero length
    [np.array([[0.0, 30.0], [10.0, 30.0], [20.0, 30.0]])],  # collinear: no inside, no outside
    [np.array([[np.nan, 30.0], [10.0, 30.0], [10.0, 40.0]])],  # NaN corner
    [np.array([1.0, 2.0, 3.0])],  # not a ring of points
])
def test_degenerate_footprints_are_skipped(rings):
    pose = CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=60.0, pitch_deg=-10.0)
    walls = FootprintRanger(rings, [14.0] * len(rings))
    for p in facade_pieces(walls, INTR, pose):
        assert np.isfinite(p.homography).all() and min(p.size) >= 16


def test_a_nearer_building_hides_the_wall_behind_it():
    """A tall block between the camera and the wall: the hidden stretch is not warped."""
    pose = CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=60.0, pitch_deg=-10.0)
    alone = _south_wall(facade_pieces(_walls(BLOCK), INTR, pose))
    # a 30 m tower in front, across every sight line from the camera to the wall's band
    tower = np.array([[-34.0, 6.0], [-30.0, 6.0], [-30.0, 30.0], [-34.0, 30.0]])
    hidden = _south_wall(facade_pieces(_walls(BLOCK, tower, heights=[14.0, 30.0]), INTR, pose))
    assert alone and not hidden


def test_the_pixel_budget_keeps_the_nearest_pieces():
    pose = CameraPose(north=5.0, east=-40.0, down=-12.0, yaw_deg=60.0, pitch_deg=-10.0)
    every = facade_pieces(_walls(BLOCK), INTR, pose)
    assert every
    first = every[0].size[0] * every[0].size[1] * 0.36
    few = facade_pieces(_walls(BLOCK), INTR, pose, RectifySettings(max_pixels=int(first) + 1))
    assert [p.near_m for p in few] == [every[0].near_m]
    assert facade_pieces(_walls(BLOCK), INTR, pose, RectifySettings(max_pixels=0)) == []


def test_a_long_wall_running_away_is_cut_into_pieces_each_at_its_own_scale():
    street = np.array([[0.0, 10.0], [0.0, 200.0], [12.0, 200.0], [12.0, 10.0]])  # its west wall runs north
    pose = CameraPose(north=0.0, east=-6.0, down=-12.0, yaw_deg=20.0, pitch_deg=-10.0)
    pieces = [p for p in facade_pieces(FootprintRanger([street], [14.0]), INTR, pose) if p.edge == 0]
    assert len(pieces) >= 2
    for p in pieces:
        assert p.far_m <= 2.5 * p.near_m + 6.0 * 1.01 or p.far_m - p.near_m <= 12.0 * 1.01
    scales = [p.px_per_m for p in sorted(pieces, key=lambda p: p.near_m)]
    assert scales == sorted(scales, reverse=True), "farther pieces are drawn at fewer pixels a metre"
    assert max(p.far_m for p in pieces) <= RectifySettings().max_range_m + 12.0 + 1e-6
    assert math.isfinite(sum(scales))


def test_the_settings_refuse_an_empty_band_and_switch_off():
    from onboard.inference.settings import InferenceConfig
    from onboard.perception.text_reader import rectify_settings

    with pytest.raises(ValueError, match="text_rectify_band_low_m"):
        InferenceConfig(text_rectify_band_low_m=6.0, text_rectify_band_high_m=6.0)
    assert rectify_settings(InferenceConfig(text_rectify=False)) is None
    s = rectify_settings(InferenceConfig(text_rectify_min_angle_deg=40.0))
    assert s.min_angle_deg == 40.0 and s.band_m == (InferenceConfig().text_rectify_band_low_m,
                                                    InferenceConfig().text_rectify_band_high_m)


def test_a_config_file_with_an_angle_past_square_is_refused(tmp_path):
    from common.typed_config import load_file
    from onboard.config import AerieConfig

    bad = tmp_path / "bad.yaml"
    bad.write_text("inference:\n  text_rectify_min_angle_deg: 95\n")
    with pytest.raises(Exception, match="text_rectify_min_angle_deg"):
        load_file(AerieConfig, bad)


def test_a_sign_the_world_renderer_drew_aslant_comes_back_a_rectangle_of_its_size():
    """Against the renderer's own projection: a shop sign down a street, its panel's corners in the frame
    map back through its wall's piece to an upright rectangle with the panel's metres."""
    from dataclasses import replace

    from onboard.config import load_config
    from sim.world.render import Camera, ViewRenderer
    from tests.sim._world_fixture import helsinki

    world = helsinki()
    cam = replace(Camera.from_config(load_config(None).supervisor), width=1920, height=1080)
    rnd = ViewRenderer(world, cam)
    node, heading = 171, 164.4  # waypoint 171 looking down a street of shop fronts
    _, truths = rnd.render_view(node, heading)
    sign = next(s for s in rnd.signs if s.name == "Din Sko")
    truth = next(t for t in truths if t.name == "Din Sko" and t.visible_fraction > 0.9)
    assert truth.squash < 0.3, "seen aslant"
    xy = world.graph.xy[node]
    pose = CameraPose(north=float(xy[1]), east=float(xy[0]), down=-world.cruise_alt, yaw_deg=heading,
                      pitch_deg=cam.pitch_deg)
    intr = CameraIntrinsics.from_hfov(1920, 1080, cam.fov_deg)
    walls = FootprintRanger([b.footprint for b in world.city.buildings], [b.height for b in world.city.buildings])
    quad = np.array(truth.panel_quad)
    found = []
    for p in facade_pieces(walls, intr, pose, RectifySettings(max_pixels=10**9)):
        q = np.column_stack([quad, np.ones(4)]) @ np.linalg.inv(p.homography).T
        q = q[:, :2] / q[:, 2:3]
        if (q >= -2).all() and (q[:, 0] <= p.size[0] + 2).all() and (q[:, 1] <= p.size[1] + 2).all():
            found.append((p, q))
    assert found, "the sign's wall is warped"
    p, q = found[0]
    tol = 0.02 * (q[1, 0] - q[0, 0])
    assert abs(q[0, 1] - q[1, 1]) < tol and abs(q[3, 1] - q[2, 1]) < tol and abs(q[0, 0] - q[3, 0]) < tol
    assert (q[1, 0] - q[0, 0]) / p.px_per_m == pytest.approx(sign.width_m, rel=0.02)
    assert (q[3, 1] - q[0, 1]) / p.px_per_m == pytest.approx(sign.height_m, rel=0.02)
