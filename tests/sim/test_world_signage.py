"""Signs in the rendered views: where they land in the picture, what hides them, what the truth says.

A street of three waypoints along the x axis and one shop ("Café Ääni") on the street-facing
(south) front of a block north of it; the camera geometry is checked against the onboard camera
model, so the pixels the text reader will turn into bearings are the ones the renderer drew.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from common.geodesy import GeoPoint
from common.typed_config import ConfigError
from onboard.map.build_params import BuildParams
from onboard.map.city import Building, Poi
from onboard.map.corridors import StreetGraph
from onboard.map.onboard_map import MAP_FORMAT_VERSION, MapHeader, OnboardMap
from onboard.perception.camera_model import CameraIntrinsics, CameraPose, camera_axes
from sim.world.render import Camera, ViewRenderer
from sim.world.signage import MIN_SHRINK, POI_LETTER_M
from sim.world.world import build_world

SHOP = "Café Ääni"
CLEAN = Camera(jpeg_quality=100, noise_sigma=0.0, blur_sigma_px=0.0)  # pixel-exact comparisons
BLOCK = np.array([[40.0, 10.0], [60.0, 10.0], [60.0, 30.0], [40.0, 30.0]])  # its south front faces the street
WALL = np.array([[40.0, -20.0], [60.0, -20.0], [60.0, -10.0], [40.0, -10.0]])  # a taller block across the street


def street_world(*, shop: bool = True, wall: bool = False):
    origin = GeoPoint(60.17, 24.94)
    xy = np.array([[0.0, 0.0], [100.0, 0.0], [200.0, 0.0]])
    graph = StreetGraph(xy=xy, latlon=np.array([[60.17, 24.94], [60.17, 24.942], [60.17, 24.944]]),
                        adj=[[1], [0, 2], [1]], network_type="walking", origin=origin)
    buildings = [Building(0, None, BLOCK, 12.0, "height")]
    if wall:
        buildings.append(Building(1, None, WALL, 20.0, "height"))
    pois = [Poi(0, SHOP, "cafe", np.array([50.0, 9.0]), 60.17008, 24.9409)] if shop else []
    header = MapHeader(MAP_FORMAT_VERSION, "street.osm.pbf", "cd" * 32, BuildParams(), "walking", {}, {})
    return build_world(OnboardMap("street", origin, graph, buildings, pois, header, (0.0, -20.0, 200.0, 30.0)))


def expected_pixel(cam: Camera, eye: np.ndarray, heading: float, point: np.ndarray) -> tuple[float, float]:
    """Where the onboard camera model (NED, camera_model.py) puts an ENU world point."""
    intr = CameraIntrinsics.from_hfov(cam.width, cam.height, cam.fov_deg)
    pose = CameraPose(north=eye[1], east=eye[0], down=-eye[2], yaw_deg=heading, pitch_deg=cam.pitch_deg)
    fwd, right, down = camera_axes(pose)
    d = np.array([point[1] - eye[1], point[0] - eye[0], -(point[2] - eye[2])])
    return intr.cx + intr.fx * (d @ right) / (d @ fwd), intr.cy + intr.fy * (d @ down) / (d @ fwd)


def shop_truth(truths):
    found = [t for t in truths if t.name == SHOP]
    assert len(found) <= 1
    return found[0] if found else None


def test_sign_lands_at_its_bearing_column() -> None:
    eye, heading = np.array([20.0, -40.0, 8.0]), 0.0
    with_sign, truths = ViewRenderer(street_world(), CLEAN).render_at(eye, heading)
    without, _ = ViewRenderer(street_world(shop=False), CLEAN).render_at(eye, heading)
    t = shop_truth(truths)
    assert t is not None and t.kind == "poi" and t.category == "cafe" and t.visible_fraction > 0.95
    centre = np.array(t.world_xyz)
    u, v = expected_pixel(CLEAN, eye, heading, centre)
    cols = np.flatnonzero(np.abs(with_sign.astype(int) - without.astype(int)).sum(axis=(0, 2)) > 0)
    rows = np.flatnonzero(np.abs(with_sign.astype(int) - without.astype(int)).sum(axis=(1, 2)) > 0)
    assert len(cols) > 10
    # the drawn panel is centred on the column the camera model gives its centre (the facade is square on)
    assert abs((cols[0] + cols[-1]) / 2 - u) <= 1.5
    assert abs((rows[0] + rows[-1]) / 2 - v) <= 1.5
    px = np.array(t.panel_quad)
    assert cols[0] - 1 <= px[:, 0].min() and px[:, 0].max() <= cols[-1] + 1
    # the truth's bearing and range are the camera's to the sign
    d = centre - eye
    assert t.bearing_deg == pytest.approx(math.degrees(math.atan2(d[0], d[1])) % 360, abs=0.01)
    assert t.distance_m == pytest.approx(math.hypot(d[0], d[1]), abs=0.01)
    x0, y0, x1, y1 = t.bbox
    assert cols[0] - 1 <= x0 < x1 <= cols[-1] + 2 and rows[0] - 1 <= y0 < y1 <= rows[-1] + 2


def test_sign_behind_a_nearer_block_is_reported_hidden_and_not_seen() -> None:
    eye, heading = np.array([50.0, -40.0, 8.0]), 0.0
    img, truths = ViewRenderer(street_world(wall=True), CLEAN).render_at(eye, heading)
    bare, _ = ViewRenderer(street_world(shop=False, wall=True), CLEAN).render_at(eye, heading)
    t = shop_truth(truths)
    assert t is not None and t.visible_fraction == 0.0
    assert np.array_equal(img, bare)  # not one of its pixels survives
    open_img, open_truths = ViewRenderer(street_world(), CLEAN).render_at(eye, heading)
    assert shop_truth(open_truths).visible_fraction > 0.95  # the same sign without the block in front


def test_sign_facing_away_is_not_drawn() -> None:
    img, truths = ViewRenderer(street_world(), CLEAN).render_at(np.array([50.0, 80.0, 8.0]), 180.0)
    bare, _ = ViewRenderer(street_world(shop=False), CLEAN).render_at(np.array([50.0, 80.0, 8.0]), 180.0)
    assert shop_truth(truths) is None and np.array_equal(img, bare)


def test_letter_height_in_pixels_shrinks_with_distance() -> None:
    r = ViewRenderer(street_world(), CLEAN)
    sizes = []
    for back in (30.0, 60.0, 120.0):
        t = shop_truth(r.render_at(np.array([50.0, -back, 6.0]), 0.0)[1])
        sizes.append(t.letter_px)
        # a pinhole camera: cap height in pixels ~ focal length x letter height / distance (pitch aside)
        assert t.letter_px == pytest.approx(CLEAN.focal_px * t.letter_m / t.slant_m, rel=0.15)
        assert POI_LETTER_M[0] * MIN_SHRINK <= t.letter_m <= POI_LETTER_M[1]
    assert sizes[0] > sizes[1] > sizes[2]


def test_non_ascii_name_is_lettered_not_folded() -> None:
    from sim.world.sign_texture import style_for, texture

    style = style_for(SHOP)
    accented = texture("Pääposti", style).levels[0]
    folded = texture("Paaposti", style).levels[0]
    assert accented.shape == folded.shape  # the same advances: only the umlauts differ
    diff = np.abs(accented.astype(int) - folded.astype(int)).sum(axis=2) > 60
    assert diff.sum() > 20
    # and the umlaut is a glyph of the face, not the missing-glyph box
    assert not np.array_equal(texture("ä", style).levels[0], texture("\ue000", style).levels[0])


def test_models_get_no_overlay_unless_asked() -> None:
    w = street_world()
    r = ViewRenderer(w, CLEAN)
    img, _ = r.render_view(0, 80.0)
    assert np.array_equal(r.oblique(0, 80.0), img)
    assert not np.array_equal(r.oblique(0, 80.0, labels=True), img)


@pytest.mark.parametrize("yaml", ["supervisor:\n  world_camera:\n    jpeg_qualty: 80\n",
                                  "supervisor:\n  camera_fov_deg: 80\n"])
def test_unknown_camera_key_is_refused(tmp_path, yaml) -> None:
    from onboard.config import load_config

    f = tmp_path / "c.yaml"
    f.write_text(yaml)
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(f)


def test_world_camera_effects_come_from_config(tmp_path) -> None:
    from onboard.config import load_config

    f = tmp_path / "c.yaml"
    f.write_text("supervisor:\n  camera_width: 640\n  world_camera:\n    jpeg_quality: 40\n    noise_sigma: 0\n")
    cam = Camera.from_config(load_config(f).supervisor)
    assert (cam.width, cam.jpeg_quality, cam.noise_sigma) == (640, 40, 0.0)
