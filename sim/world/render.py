# Over 400 lines: one renderer: the camera, the projection and clipping, and the drawing of buildings, streets and signs share the frame they draw in.
"""Camera views of the world drawn with OpenCV: oblique (perspective) and top-down.

The oblique view is what the drone's camera (`Camera`, the vehicle config's
camera) sees from the drone's position, looking along the heading and pitched
down: buildings are their footprints extruded to their heights in facade
colours, lit by a fixed sun, drawn far to near (painter's algorithm) and
clipped at the near plane. Names are on the buildings as a city shows them
(`signage`): shop signs at street level and building names high on facades,
lettered with a TrueType font and warped in perspective, each drawn right
after its wall so nearer buildings hide it. Then the camera's own defocus,
noise and JPEG (`camera_effects`). Models see only that; `render_view` also
returns the ground truth of every sign in the frame (`SignTruth`), and the
labelled overlay is a debug aid for people (off by default).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, replace

import numpy as np

from onboard.map.compass import compass8
from onboard.vocab.text_fold import ascii_text
from sim.world.camera_effects import apply_camera
from sim.world.sign_texture import name_hash, texture
from sim.world.sign_view import SignTruth, sign_points, sign_truth, warp_sign
from sim.world.signage import Sign, outward_normals, place_signs
from sim.world.visibility import Occluders, visible_landmarks
from sim.world.world import World

SKY_TOP, SKY_BOTTOM = (235, 206, 160), (250, 235, 215)  # BGR
GROUND = (168, 182, 170)
STREET = (150, 150, 150)
LANDMARK = (80, 150, 235)  # orange-ish in BGR: landmarks on the top-down map (people's view only)
ROOF = (160, 160, 168)
LABEL_BG = (40, 40, 40)
# Facade colours (BGR) of central Helsinki's blocks: cream, ochre, pale grey, pink, light brown, white,
# brick, dark grey. A building takes one by a hash of its id; named buildings are not singled out.
FACADES = ((200, 220, 230), (120, 180, 215), (200, 200, 195), (185, 190, 220), (150, 170, 190), (225, 228, 230),
           (70, 85, 150), (120, 120, 115))
# The sun: south-south-west and 35 degrees up (a Helsinki summer early afternoon). Walls are lit by
# AMBIENT + (1 - AMBIENT) * the cosine between their normal and the sun.
SUN_AZIMUTH_DEG, SUN_ELEVATION_DEG, AMBIENT = 200.0, 35.0, 0.62
STREET_HALF_WIDTH_M = 2.5


@dataclass(frozen=True)
class Camera:
    """The drone camera the views are rendered for; defaults = the vehicle config's (`from_config`).

    The SIYI A8 mini gimbal camera: a 1920x1080 video stream with about 81 degrees of horizontal
    field of view, rendered at its full resolution: a shop sign 20-30 m off has 12 px lettering
    there and 6 px at half resolution, too few to read (bench/results/2026-11-26/camera_crops).
    """

    width: int = 1920
    height: int = 1080
    fov_deg: float = 81.0  # horizontal field of view
    pitch_deg: float = -15.0  # negative looks down
    max_range_m: float = 700.0
    near_m: float = 1.0
    jpeg_quality: int = 85  # 100: no JPEG round trip
    noise_sigma: float = 2.0  # sensor noise, standard deviation in 8-bit grey levels
    blur_sigma_px: float = 0.6  # defocus, Gaussian sigma in pixels
    debug_labels: bool = False  # draw sign boxes, names and a HUD over `oblique` frames (for people)

    @classmethod
    def from_config(cls, sup) -> "Camera":
        """The camera of a `SupervisorConfig` (its camera_* keys and its `world_camera` section)."""
        wc = sup.world_camera
        return cls(width=sup.camera_width, height=sup.camera_height, fov_deg=sup.camera_hfov_deg,
                   pitch_deg=sup.camera_pitch_deg, jpeg_quality=wc.jpeg_quality, noise_sigma=wc.noise_sigma,
                   blur_sigma_px=wc.blur_sigma_px, debug_labels=wc.debug_labels)

    @property
    def focal_px(self) -> float:
        return (self.width / 2) / math.tan(math.radians(self.fov_deg / 2))


def _basis(heading: float, pitch: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    h, p = math.radians(heading), math.radians(pitch)
    f = np.array([math.sin(h) * math.cos(p), math.cos(h) * math.cos(p), math.sin(p)])
    r = np.array([math.cos(h), -math.sin(h), 0.0])
    u = np.cross(r, f)
    return r, u, f


def _clip_near(poly: np.ndarray, near: float) -> np.ndarray:
    """Sutherland-Hodgman clip of a camera-space polygon (k, 3) against z >= near."""
    out = []
    n = len(poly)
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        ina, inb = a[2] >= near, b[2] >= near
        if ina:
            out.append(a)
        if ina != inb:
            t = (near - a[2]) / (b[2] - a[2])
            out.append(a + t * (b - a))
    return np.array(out) if out else np.zeros((0, 3))


def _shade(normal: np.ndarray) -> float:
    az, el = math.radians(SUN_AZIMUTH_DEG), math.radians(SUN_ELEVATION_DEG)
    sun = np.array([math.sin(az) * math.cos(el), math.cos(az) * math.cos(el)])
    return AMBIENT + (1 - AMBIENT) * max(0.0, float(normal @ sun))


_SIGNS: dict[int, tuple[weakref.ref, list[Sign], np.ndarray]] = {}


def _world_signs(world: World) -> tuple[list[Sign], np.ndarray]:
    """The world's signs and their `sign_points`, placed once per world (about half a second) however many
    renderers it gets: the world feed builds one on its first image request, episode files one per episode."""
    hit = _SIGNS.get(id(world))
    if hit is not None and hit[0]() is world:
        return hit[1], hit[2]
    signs = place_signs(world.city.buildings, world.city.pois, world.graph.xy)
    pts = np.array([sign_points(s) for s in signs]).reshape(-1, 10, 3)
    for key in [k for k, v in _SIGNS.items() if v[0]() is None]:
        del _SIGNS[key]
    _SIGNS[id(world)] = (weakref.ref(world), signs, pts)
    return signs, pts


class _Frame:
    """One view being drawn: the camera transform, the image and the sign id buffer."""

    def __init__(self, cam: Camera, eye: np.ndarray, heading: float, sky: np.ndarray):
        r, u, f = _basis(heading, cam.pitch_deg)
        self.cam, self.eye, self.fwd = cam, eye, f
        self.M = np.column_stack([r, u, f])
        self.fpx, self.cx, self.cy = cam.focal_px, cam.width / 2, cam.height / 2
        self.img = sky.copy()
        self.ids: np.ndarray | None = None  # uint16 sign numbers, made when the first sign is drawn

    def to_cam(self, pts: np.ndarray) -> np.ndarray:
        return (pts - self.eye) @ self.M

    def project_cam(self, pc: np.ndarray) -> np.ndarray:
        out = np.empty(pc.shape[:-1] + (2,))
        inv = self.fpx / pc[..., 2]
        out[..., 0] = self.cx + pc[..., 0] * inv
        out[..., 1] = self.cy - pc[..., 1] * inv
        return out

    def project(self, pts: np.ndarray) -> np.ndarray:
        return self.project_cam(self.to_cam(pts))

    def fill(self, poly_world: np.ndarray, color, outline: bool = False) -> None:
        import cv2

        pc = self.to_cam(poly_world)
        if pc[:, 2].min() < self.cam.near_m:
            pc = _clip_near(pc, self.cam.near_m)
            if len(pc) < 3:
                return
        pts = np.round(self.project_cam(pc) * 16).astype(np.int32)  # 4 fractional bits
        cv2.fillPoly(self.img, [pts], color, lineType=cv2.LINE_AA, shift=4)
        if outline:
            edge = tuple(int(0.55 * ch) for ch in color)
            cv2.polylines(self.img, [pts], True, edge, 1, cv2.LINE_AA, shift=4)
        if self.ids is not None:  # whatever is drawn over a sign hides it
            cv2.fillPoly(self.ids, [pts], 0, lineType=cv2.LINE_8, shift=4)


class ViewRenderer:
    """Renders views of one world; keeps its occluders, facades and signs between calls."""

    def __init__(self, world: World, camera: Camera = Camera()):
        self.world, self.cam = world, camera
        self.occ = Occluders.from_buildings(world.city.buildings)
        self.landmark_ids = {lm.id for lm in world.landmarks}
        blds = world.city.buildings
        self._centroids = np.array([b.centroid for b in blds])
        self._walls = []  # per building: (quads (k, 4, 3), mids (k, 2), normals (k, 2), colours)
        for b in blds:
            fp, h = b.footprint, b.height
            nxt = np.roll(fp, -1, axis=0)
            normals = outward_normals(fp)
            base = np.array(FACADES[name_hash(str(b.id), "facade") % len(FACADES)], float)
            quads = np.stack([np.column_stack([fp, np.zeros(len(fp))]), np.column_stack([nxt, np.zeros(len(fp))]),
                              np.column_stack([nxt, np.full(len(fp), h)]), np.column_stack([fp, np.full(len(fp), h)])],
                             axis=1)
            shades = [_shade(n) for n in normals]
            self._walls.append((quads, (fp + nxt) / 2, normals, shades, base))
        # every footprint vertex at the ground and at the roof, for culling whole buildings against the view
        self._vertex_start = np.cumsum([0] + [len(b.footprint) for b in blds[:-1]])
        self._ground_v = np.vstack([np.column_stack([b.footprint, np.zeros(len(b.footprint))]) for b in blds])
        self._roof_v = np.vstack([np.column_stack([b.footprint, np.full(len(b.footprint), b.height)]) for b in blds])
        g = world.graph
        edges = np.array(g.edges(), dtype=int).reshape(-1, 2)
        pa, pb = g.xy[edges[:, 0]], g.xy[edges[:, 1]]
        d = pb - pa
        n = np.column_stack([-d[:, 1], d[:, 0]]) / np.maximum(np.hypot(*d.T), 1e-6)[:, None] * STREET_HALF_WIDTH_M
        z = np.zeros(len(edges))
        self._streets = np.stack([np.column_stack([pa + n, z]), np.column_stack([pb + n, z]),
                                  np.column_stack([pb - n, z]), np.column_stack([pa - n, z])], axis=1)
        self.signs, self._sign_pts = _world_signs(world)
        self._signs_on: dict[tuple[int, int], list[int]] = {}
        for k, s in enumerate(self.signs):
            self._signs_on.setdefault((s.building_id, s.edge), []).append(k)
        t = np.linspace(0.0, 1.0, camera.height)[:, None]
        sky = np.array(SKY_TOP)[None, :] * (1 - t) + np.array(SKY_BOTTOM)[None, :] * t
        self._sky = np.repeat(sky[:, None, :], camera.width, axis=1).astype(np.uint8)

    # -- oblique -----------------------------------------------------------
    def oblique(self, node: int, heading: float, labels: bool | None = None) -> np.ndarray:
        """The drone camera's view from `node` along `heading` at cruise altitude (BGR uint8 image).

        `labels` (default: the camera's `debug_labels`) draws the debug overlay for people.
        """
        img, truths = self.render_view(node, heading)
        if self.cam.debug_labels if labels is None else labels:
            img = self.debug_overlay(img, truths, f"node {node}  heading {heading:.0f} deg ({compass8(heading)})  "
                                                  f"alt {self.world.cruise_alt:.0f} m")
        return img

    def render_view(self, node: int, heading: float, altitude: float | None = None, pitch_deg: float | None = None
                    ) -> tuple[np.ndarray, list[SignTruth]]:
        """The camera frame from `node` along `heading` at `altitude` (m; None: cruise), and its signs' truth;
        `pitch_deg` as `render_at`'s."""
        alt = self.world.cruise_alt if altitude is None else float(altitude)
        return self.render_at(np.array([*self.world.graph.xy[node], alt]), heading, pitch_deg)

    def render_at(self, eye: np.ndarray, heading: float, pitch_deg: float | None = None
                  ) -> tuple[np.ndarray, list[SignTruth]]:
        """The camera frame from `eye` (east, north, up metres) along `heading` (deg), and its signs' truth.

        `pitch_deg`: the gimbal's pitch for this frame (None: the camera's own).
        The truth lists every sign warped into the frame, nearest first, hidden ones too (visible_fraction 0:
        a reader that misses them is not at fault, one that reads them is guessing).
        """
        cam = self.cam if pitch_deg is None else replace(self.cam, pitch_deg=float(pitch_deg))
        eye = np.asarray(eye, dtype=float)
        fr = _Frame(cam, eye, heading, self._sky)
        R = cam.max_range_m * 1.5
        fr.fill(np.array([[eye[0] - R, eye[1] - R, 0], [eye[0] + R, eye[1] - R, 0],
                          [eye[0] + R, eye[1] + R, 0], [eye[0] - R, eye[1] + R, 0]]), GROUND)
        self._draw_streets(fr)
        drawn = self._draw_buildings(fr)
        truths = []
        if drawn:
            counts = np.bincount(fr.ids.ravel(), minlength=len(self.signs) + 1)
            pts = fr.project(self._sign_pts[drawn])
            truths = [sign_truth(self.signs[k], p, eye, int(counts[k + 1]), (cam.width, cam.height))
                      for k, p in zip(drawn, pts)]
        pose = f"{eye[0]:.1f},{eye[1]:.1f},{eye[2]:.1f},{heading:.1f}" + ("" if pitch_deg is None else f",{cam.pitch_deg:.1f}")
        seed = name_hash(pose, "view")
        img = apply_camera(fr.img, blur_sigma_px=cam.blur_sigma_px, noise_sigma=cam.noise_sigma,
                           jpeg_quality=cam.jpeg_quality, seed=seed)
        return img, sorted(truths, key=lambda t: t.distance_m)

    def _outside(self, fr: _Frame, pc: np.ndarray) -> np.ndarray:
        """(..., 4) per point: how far outside each side plane of the view (> 0: outside that plane)."""
        th = (self.cam.width / 2 + 2) / fr.fpx
        tv = (self.cam.height / 2 + 2) / fr.fpx
        x, y, z = pc[..., 0], pc[..., 1], pc[..., 2]
        return np.stack([x - th * z, -x - th * z, y - tv * z, -y - tv * z], axis=-1)

    def _draw_streets(self, fr: _Frame) -> None:
        import cv2

        pc = fr.to_cam(self._streets)  # (E, 4, 3)
        out = self._outside(fr, pc)
        culled = (out > 0).all(axis=1).any(axis=1) | (pc[..., 2] < fr.cam.near_m).all(axis=1)
        culled |= (np.hypot(*(self._streets[:, 0, :2] - fr.eye[:2]).T) > fr.cam.max_range_m)
        keep = ~culled
        front = keep & (pc[..., 2] >= fr.cam.near_m).all(axis=1)
        if front.any():
            for pts in np.round(fr.project_cam(pc[front]) * 16).astype(np.int32):  # one call each: overlaps
                cv2.fillPoly(fr.img, [pts], STREET, lineType=cv2.LINE_AA, shift=4)  # in one call cancel out
        for k in np.flatnonzero(keep & ~front):
            fr.fill(self._streets[k], STREET)

    def _draw_buildings(self, fr: _Frame) -> list[int]:
        """Draw the buildings in view far to near, each sign right after its wall; the signs drawn."""
        cam, eye = fr.cam, fr.eye
        starts = self._vertex_start
        pg, pr = fr.to_cam(self._ground_v), fr.to_cam(self._roof_v)
        out = np.minimum(self._outside(fr, pg), self._outside(fr, pr))  # both ends of a vertical edge outside
        behind = np.maximum(pg[:, 2], pr[:, 2]) < cam.near_m
        out_b = np.minimum.reduceat(out, starts, axis=0)  # (B, 4): every vertex beyond that plane
        behind_b = np.logical_and.reduceat(behind, starts)
        dists = np.hypot(*(self._centroids - eye[:2]).T)
        in_view = (dists <= cam.max_range_m) & ~(out_b > 0).any(axis=1) & ~behind_b
        drawn: list[int] = []
        blds = self.world.city.buildings
        for k in sorted(np.flatnonzero(in_view), key=lambda k: -dists[k]):
            bld = blds[k]
            quads, mids, normals, shades, base = self._walls[k]
            facing = np.einsum("ij,ij->i", normals, eye[:2] - mids) > 0  # back faces are hidden by the building
            roof = np.column_stack([bld.footprint, np.full(len(bld.footprint), bld.height)])
            roof_color = ROOF
            if eye[2] < bld.height:
                fr.fill(roof, roof_color, outline=True)
            wall_d = np.hypot(*(mids - eye[:2]).T)
            for i in sorted(np.flatnonzero(facing), key=lambda i: -wall_d[i]):
                fr.fill(quads[i], tuple(int(ch * shades[i]) for ch in base), outline=True)
                for s in self._signs_on.get((bld.id, int(i)), ()):
                    if self._draw_sign(fr, s, shades[i]):
                        drawn.append(s)
            if eye[2] >= bld.height:
                fr.fill(roof, roof_color, outline=True)
        return drawn

    def _draw_sign(self, fr: _Frame, k: int, shade: float) -> bool:
        """Warp sign `k` onto the frame; False where it is not in view."""
        s = self.signs[k]
        pc = fr.to_cam(self._sign_pts[k, :4])
        if pc[:, 2].min() < fr.cam.near_m or (self._outside(fr, pc) > 0).all(axis=0).any():
            return False
        if fr.ids is None:
            fr.ids = np.zeros(fr.img.shape[:2], np.uint16)
        return warp_sign(fr.img, fr.ids, k + 1, texture(s.name, s.style), fr.project_cam(pc), shade)

    def debug_overlay(self, img: np.ndarray, truths: list[SignTruth], hud: str = "") -> np.ndarray:
        """A copy of `img` with each sign's box and name (green: mostly visible, red: mostly hidden): for people."""
        import cv2

        img = img.copy()
        self._taken: list[tuple[int, int, int, int]] = []
        for t in truths:
            col = (40, 200, 40) if t.visible_fraction >= 0.5 else (40, 40, 220)
            q = np.round(np.array(t.quad) * 16).astype(np.int32)
            cv2.polylines(img, [q], True, col, 1, cv2.LINE_AA, shift=4)
            x, y = np.array(t.quad).mean(axis=0)
            if 0 <= x < img.shape[1] and 0 <= y < img.shape[0]:
                self._label(img, f"{t.name} {t.distance_m:.0f}m", int(x), int(min(t.bbox[1], y)))
        if hud:
            cv2.putText(img, hud, (8, img.shape[0] - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (20, 20, 20), 1, cv2.LINE_AA)
        return img

    def _label(self, img: np.ndarray, text: str, x: int, y: int) -> None:
        import cv2

        font, scale = cv2.FONT_HERSHEY_SIMPLEX, 0.45
        text = ascii_text(text)
        (tw, th), _ = cv2.getTextSize(text, font, scale, 1)
        x0 = int(np.clip(x - tw // 2, 2, img.shape[1] - tw - 4))
        y0 = int(np.clip(y - 6, th + 6, img.shape[0] - 4))
        taken = getattr(self, "_taken", None)
        if taken is not None:  # move up past labels already drawn, nearest landmarks first
            for _ in range(12):
                box = (x0 - 3, y0 - th - 4, x0 + tw + 3, y0 + 4)
                if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
                    break
                y0 -= th + 8
            if y0 < th + 6:
                return
            taken.append((x0 - 3, y0 - th - 4, x0 + tw + 3, y0 + 4))
        cv2.rectangle(img, (x0 - 3, y0 - th - 4), (x0 + tw + 3, y0 + 4), LABEL_BG, -1)
        cv2.putText(img, text, (x0, y0), font, scale, (255, 255, 255), 1, cv2.LINE_AA)
        cv2.line(img, (x0 + tw // 2, y0 + 4), (int(np.clip(x, 0, img.shape[1] - 1)), int(np.clip(y, 0, img.shape[0] - 1))),
                 LABEL_BG, 1, cv2.LINE_AA)

    # -- top-down ----------------------------------------------------------
    def top_down(self, node: int, heading: float, radius_m: float = 250.0, size: int = 600,
                 labels: bool = True) -> np.ndarray:
        """A north-up map around `node` with the camera wedge, heights as shades."""
        import cv2

        w = self.world
        here = w.graph.xy[node]
        scale = size / (2 * radius_m)

        def px(xy: np.ndarray) -> np.ndarray:
            p = (np.atleast_2d(xy) - here) * scale
            return np.column_stack([size / 2 + p[:, 0], size / 2 - p[:, 1]])

        img = np.full((size, size, 3), GROUND, np.uint8)
        for a, b in w.graph.edges():
            pa, pb = px(w.graph.xy[a])[0], px(w.graph.xy[b])[0]
            cv2.line(img, tuple(np.round(pa).astype(int)), tuple(np.round(pb).astype(int)), (235, 235, 235), 5, cv2.LINE_AA)
        hmax = 40.0
        for bld in w.city.buildings:
            if np.hypot(*(bld.centroid - here)) > radius_m * 1.6:
                continue
            t = min(1.0, bld.height / hmax)
            col = LANDMARK if bld.id in self.landmark_ids else tuple(int(230 - 130 * t) for _ in range(3))
            pts = np.round(px(bld.footprint) * 16).astype(np.int32)
            cv2.fillPoly(img, [pts], col, lineType=cv2.LINE_AA, shift=4)
            cv2.polylines(img, [pts], True, (70, 70, 70), 1, cv2.LINE_AA, shift=4)
        # camera wedge
        fov = self.cam.fov_deg
        wedge = [here] + [here + 120.0 * np.array([math.sin(math.radians(a)), math.cos(math.radians(a))])
                          for a in np.linspace(heading - fov / 2, heading + fov / 2, 12)]
        overlay = img.copy()
        cv2.fillPoly(overlay, [np.round(px(np.array(wedge))).astype(np.int32)], (60, 200, 255))
        img = cv2.addWeighted(overlay, 0.3, img, 0.7, 0)
        for nb in w.graph.neighbours(node):
            p = np.round(px(w.graph.xy[nb.node])[0]).astype(int)
            cv2.circle(img, tuple(p), 5, (0, 140, 0), -1, cv2.LINE_AA)
            cv2.putText(img, nb.direction, (p[0] + 6, p[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 90, 0), 1, cv2.LINE_AA)
        c = (size // 2, size // 2)
        tip = (int(c[0] + 18 * math.sin(math.radians(heading))), int(c[1] - 18 * math.cos(math.radians(heading))))
        cv2.circle(img, c, 7, (30, 30, 200), -1, cv2.LINE_AA)
        cv2.arrowedLine(img, c, tip, (30, 30, 200), 2, cv2.LINE_AA, tipLength=0.4)
        if labels:
            self._taken = []
            for j in w.visible[node]:
                lm = w.landmarks[j]
                p = px(lm.centroid)[0]
                if 0 <= p[0] < size and 0 <= p[1] < size:
                    self._label(img, lm.name, int(p[0]), int(p[1]))
        cv2.putText(img, "N", (size - 24, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (20, 20, 20), 2, cv2.LINE_AA)
        cv2.putText(img, f"{int(radius_m)} m", (10, size - 12), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (20, 20, 20), 1, cv2.LINE_AA)
        return img

    def visible_from(self, xy: np.ndarray, alt: float) -> list[int]:
        """Landmark indices visible from an arbitrary point (not just graph nodes)."""
        return visible_landmarks(np.asarray(xy, float), alt, self.world.landmarks, self.occ, self.world.view_range)
