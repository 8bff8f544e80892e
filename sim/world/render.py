"""Camera views of the world drawn with OpenCV: oblique (perspective) and top-down.

The oblique view is a pinhole camera at the drone's position and cruise
altitude, looking along the heading and pitched down; buildings are their
footprints extruded to their heights, drawn far to near (painter's
algorithm) with flat shading, and clipped at the near plane. Landmarks that
are visible by the line-of-sight rule get their name drawn over them, so the
perception and captioning paths get real pictures of the same world the
oracle reasons about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onboard.map.compass import compass8
from sim.world.visibility import Occluders, visible_landmarks
from sim.world.world import World

SKY_TOP, SKY_BOTTOM = (235, 206, 160), (250, 235, 215)  # BGR
GROUND = (168, 182, 170)
STREET = (150, 150, 150)
BUILDING = (205, 200, 195)
LANDMARK = (80, 150, 235)  # orange-ish in BGR
ROOF = (160, 160, 168)
LABEL_BG = (40, 40, 40)


def _signed_area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0


def ascii_label(text: str) -> str:
    """OpenCV's Hershey fonts are ASCII only: Töölö -> Toolo."""
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


@dataclass(frozen=True)
class Camera:
    width: int = 800
    height: int = 500
    fov_deg: float = 90.0  # horizontal field of view
    pitch_deg: float = -15.0  # negative looks down
    max_range_m: float = 700.0
    near_m: float = 1.0


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


class ViewRenderer:
    """Renders views of one world; keeps its occluder arrays between calls."""

    def __init__(self, world: World, camera: Camera = Camera()):
        self.world, self.cam = world, camera
        self.occ = Occluders.from_buildings(world.city.buildings)
        self.landmark_ids = {lm.id for lm in world.landmarks}
        self._centroids = np.array([b.centroid for b in world.city.buildings])
        # +1 for counter-clockwise footprints: outward wall normals are then (e_y, -e_x)
        self._ccw = np.array([1.0 if _signed_area(b.footprint) > 0 else -1.0 for b in world.city.buildings])
        t = np.linspace(0.0, 1.0, camera.height)[:, None]
        sky = np.array(SKY_TOP)[None, :] * (1 - t) + np.array(SKY_BOTTOM)[None, :] * t
        self._sky = np.repeat(sky[:, None, :], camera.width, axis=1).astype(np.uint8)

    # -- oblique -----------------------------------------------------------
    def oblique(self, node: int, heading: float, labels: bool = True) -> np.ndarray:
        """The drone camera's view from `node` along `heading` (BGR uint8 image)."""
        import cv2

        w = self.world
        cam = self.cam
        pos = np.array([*w.graph.xy[node], w.cruise_alt])
        r, u, f = _basis(heading, cam.pitch_deg)
        fpx = (cam.width / 2) / math.tan(math.radians(cam.fov_deg / 2))
        cx, cy = cam.width / 2, cam.height / 2
        img = self._sky.copy()

        def to_cam(pts: np.ndarray) -> np.ndarray:
            d = pts - pos
            return np.column_stack([d @ r, d @ u, d @ f])

        def project(pc: np.ndarray) -> np.ndarray:
            return np.column_stack([cx + fpx * pc[:, 0] / pc[:, 2], cy - fpx * pc[:, 1] / pc[:, 2]])

        def fill(poly_world: np.ndarray, color, outline: bool = False) -> None:
            pc = _clip_near(to_cam(poly_world), cam.near_m)
            if len(pc) >= 3:
                pts = np.round(project(pc) * 16).astype(np.int32)  # 4 fractional bits
                cv2.fillPoly(img, [pts], color, lineType=cv2.LINE_AA, shift=4)
                if outline:
                    edge = tuple(int(0.55 * ch) for ch in color)
                    cv2.polylines(img, [pts], True, edge, 1, cv2.LINE_AA, shift=4)

        R = cam.max_range_m * 1.5
        ground = np.array([[pos[0] - R, pos[1] - R, 0], [pos[0] + R, pos[1] - R, 0],
                           [pos[0] + R, pos[1] + R, 0], [pos[0] - R, pos[1] + R, 0]])
        fill(ground, GROUND)
        g = w.graph
        ahead = (g.xy - pos[:2]) @ f[:2]  # forward distance of every node (ground plane)
        near_enough = np.hypot(*(g.xy - pos[:2]).T) <= cam.max_range_m
        for a, b in g.edges():  # streets as thin ground strips
            if max(ahead[a], ahead[b]) < -10.0 or not (near_enough[a] or near_enough[b]):
                continue
            pa, pb = g.xy[a], g.xy[b]
            d = pb - pa
            n = np.array([-d[1], d[0]]) / max(np.hypot(*d), 1e-6) * 2.5
            fill(np.array([[*(pa + n), 0], [*(pb + n), 0], [*(pb - n), 0], [*(pa - n), 0]]), STREET)

        light = np.array([0.5, 0.8])
        light /= np.linalg.norm(light)
        todo = []
        dists = np.hypot(*(self._centroids - pos[:2]).T)
        for k in np.flatnonzero(dists <= cam.max_range_m):
            bld = w.city.buildings[k]
            ground = np.column_stack([bld.footprint, np.zeros(len(bld.footprint))])
            top = np.column_stack([bld.footprint, np.full(len(bld.footprint), bld.height)])
            if np.all(to_cam(np.vstack([ground, top]))[:, 2] < cam.near_m):
                continue  # wholly behind the camera
            todo.append((dists[k], bld))
        for dist, bld in sorted(todo, key=lambda t: -t[0]):
            base = LANDMARK if bld.id in self.landmark_ids else BUILDING
            fp, h = bld.footprint, bld.height
            walls = []
            for i in range(len(fp)):
                a, b = fp[i], fp[(i + 1) % len(fp)]
                mid = (a + b) / 2
                e = b - a
                normal = self._ccw[bld.id] * np.array([e[1], -e[0]]) / max(np.hypot(*e), 1e-6)
                if normal @ (pos[:2] - mid) <= 0:
                    continue  # faces away: hidden behind the building's own walls and roof
                shade = 0.5 + 0.5 * max(0.0, float(normal @ light)) + 0.15 * abs(float(normal @ light))
                shade = min(shade, 1.0)
                quad = np.array([[*a, 0.0], [*b, 0.0], [*b, h], [*a, h]])
                walls.append((np.hypot(*(mid - pos[:2])), quad, tuple(int(ch * shade) for ch in base)))
            roof = np.column_stack([fp, np.full(len(fp), h)])
            roof_color = tuple(int(0.8 * ch) for ch in base) if bld.id in self.landmark_ids else ROOF
            if pos[2] < h:
                fill(roof, roof_color, outline=True)
            for _, quad, col in sorted(walls, key=lambda t: -t[0]):
                fill(quad, col, outline=True)
            if pos[2] >= h:
                fill(roof, roof_color, outline=True)

        if labels:
            vis = sorted(w.visible[node], key=lambda j: np.hypot(*(w.landmarks[j].centroid - pos[:2])))
            self._taken: list[tuple[int, int, int, int]] = []
            for j in vis:
                lm = w.landmarks[j]
                top = np.array([[*lm.centroid, lm.height + 2.0]])
                pc = to_cam(top)
                if pc[0, 2] <= cam.near_m:
                    continue
                x, y = project(pc)[0]
                if 0 <= x < cam.width and 0 <= y < cam.height:
                    self._label(img, lm.name, int(x), int(y))
        hud = f"node {node}  heading {heading:.0f} deg ({compass8(heading)})  alt {w.cruise_alt:.0f} m"
        cv2.putText(img, hud, (8, cam.height - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (20, 20, 20), 1, cv2.LINE_AA)
        return img

    def _label(self, img: np.ndarray, text: str, x: int, y: int) -> None:
        import cv2

        font, scale = cv2.FONT_HERSHEY_SIMPLEX, 0.45
        text = ascii_label(text)
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
