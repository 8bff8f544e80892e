"""Street views with shop names in perspective, and where each name truly is: bench and test frames.

Until the world's renderer draws signage, the reading bench needs frames whose
truth is known. Each frame is a camera (`CameraIntrinsics`, `CameraPose`, the
flight loop's own types) looking at building walls; each wall carries a sign
whose lettering (DejaVu, full Unicode: ä ö å é) is drawn flat with PIL and
warped onto the wall's projection, so the letters shrink and shear as a real
facade seen at an angle does. Then the camera's faults: blur, noise and JPEG.

Truth per sign: its name, the bearing and horizontal distance from the camera
to the lettering's centre, the lettering's pixel box, and how much of it a
nearer wall hides. Everything the bench scores comes from here, nothing from
the reader.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from onboard.perception.camera_model import CameraIntrinsics, CameraPose, camera_axes, project_points
from onboard.perception.types import Box

FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"),)
FONT_FILES = ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansCondensed-Bold.ttf")
# (lettering, panel) colours of shop signs: light on dark and dark on light.
COLOURS = (((245, 245, 240), (30, 60, 130)), ((20, 20, 20), (235, 225, 200)), ((250, 220, 40), (120, 20, 30)),
           ((255, 255, 255), (0, 110, 60)))


@dataclass(frozen=True)
class SignTruth:
    name: str
    bearing_deg: float
    distance_m: float  # horizontal, camera to lettering
    box: Box  # the lettering's pixel box
    visible: float  # fraction of the lettering in the frame and not hidden by a nearer wall
    letter_px: float = 0.0  # the lettering's height in the frame (its quad's mean side), accents included


@dataclass(frozen=True)
class SignFrame:
    image: np.ndarray
    intr: CameraIntrinsics
    pose: CameraPose
    # SignTruth here; `aerie bench reading` gives its own truth of the world's renderer (sim/reading_bench.Truth):
    # `evaluate_reading` reads name, bearing_deg, distance_m, visible and letter_px of either
    truths: tuple
    goal: str = ""  # the task's goal name for this frame ("" = none)


@dataclass(frozen=True)
class SignSpec:
    name: str
    bearing_deg: float  # from the camera
    distance_m: float
    letter_m: float = 0.8  # lettering height
    base_m: float = 3.0  # lettering's bottom edge above ground
    facing_deg: float = 0.0  # the wall turned away from facing the camera
    font: int = 0
    upper: bool = False


def fonts() -> list[Path]:
    """The DejaVu fonts: the system's, else matplotlib's copy."""
    found = [d / f for d in FONT_DIRS for f in FONT_FILES if (d / f).exists()]
    if not found:
        import matplotlib

        mpl = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
        found = [mpl / f for f in ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf", "DejaVuSerif-Bold.ttf") if (mpl / f).exists()]
    return found


def project(intr: CameraIntrinsics, pose: CameraPose, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixels (k, 2) and depths (k,) of NED points (k, 3): the flight loop's own projection."""
    return project_points(intr, pose, pts)


def lettering(text: str, font_path: Path, fg, bg, px: int = 64) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A sign panel (RGB) with `text`, and the ink's box in it."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(font_path), px)
    x0, y0, x1, y1 = font.getbbox(text)
    pad = px // 2
    w, h = x1 - x0 + 2 * pad, y1 - y0 + 2 * pad
    img = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(img).text((pad - x0, pad - y0), text, font=font, fill=fg)
    return np.array(img), (pad, pad, pad + x1 - x0, pad + y1 - y0)


def _paste(frame: np.ndarray, ids: np.ndarray, texture: np.ndarray, corners: np.ndarray, ident: int) -> None:
    h, w = texture.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    size = (frame.shape[1], frame.shape[0])
    warped = cv2.warpPerspective(texture, m, size, flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), m, size, flags=cv2.INTER_LINEAR) > 127
    frame[mask] = warped[mask]
    ids[mask] = ident


def _wall_texture(rng: np.random.Generator, w_m: float, h_m: float, px_per_m: int = 24) -> np.ndarray:
    w, h = int(w_m * px_per_m), int(h_m * px_per_m)
    base = rng.integers(90, 200, 3)
    wall = np.empty((h, w, 3), np.uint8)
    wall[:] = base
    win = (base * 0.35).astype(np.uint8)
    for y in range(int(5 * px_per_m), h - px_per_m, int(3.2 * px_per_m)):  # windows above the shop floor
        for x in range(px_per_m // 2, w - px_per_m, int(2.2 * px_per_m)):
            wall[y:y + int(1.5 * px_per_m), x:x + int(1.2 * px_per_m)] = win
    return wall


def render_frame(
    specs: list[SignSpec],
    *,
    rng: np.random.Generator,
    width: int = 800,
    height: int = 500,
    hfov_deg: float = 90.0,
    altitude_m: float = 30.0,
    yaw_deg: float = 0.0,
    pitch_deg: float = -15.0,
    roll_deg: float = 0.0,
    goal: str = "",
    degrade: bool = True,
) -> SignFrame:
    intr = CameraIntrinsics.from_hfov(width, height, hfov_deg)
    pose = CameraPose(0.0, 0.0, -altitude_m, yaw_deg=yaw_deg, pitch_deg=pitch_deg, roll_deg=roll_deg)
    frame = np.empty((height, width, 3), np.uint8)
    # sky above the horizon, street below (row by row along the centre column, roll aside)
    forward, _, down = camera_axes(pose)
    rows = np.arange(height)
    ray_down = forward[2] + down[2] * (rows - intr.cy) / intr.fy
    frame[ray_down <= 0] = (170, 200, 230)
    frame[ray_down > 0] = (105, 105, 100)
    ids = np.zeros((height, width), np.int32)
    font_paths = fonts()
    placed = []
    for k, s in enumerate(specs):
        b = math.radians(s.bearing_deg)
        centre = np.array([s.distance_m * math.cos(b), s.distance_m * math.sin(b)])
        along = math.radians(s.bearing_deg + 90 + s.facing_deg)
        t = np.array([math.cos(along), math.sin(along)])  # to the viewer's right along the wall
        text = s.name.upper() if s.upper else s.name
        fg, bg = COLOURS[int(rng.integers(0, len(COLOURS)))]
        panel, ink = lettering(text, font_paths[s.font % len(font_paths)], fg, bg)
        ph, pw = panel.shape[:2]
        m_per_px = s.letter_m / (ink[3] - ink[1])
        panel_w, panel_h = pw * m_per_px, ph * m_per_px
        wall_w = max(10.0, panel_w + 4.0)
        bottom = s.base_m - (ph - ink[3]) * m_per_px  # the panel's bottom, so the ink starts at base_m

        def corners(half_w: float, lo: float, hi: float, offset: float = 0.0) -> np.ndarray:
            c = centre + t * offset
            return np.array([[*(c - t * half_w), -hi], [*(c + t * half_w), -hi], [*(c + t * half_w), -lo], [*(c - t * half_w), -lo]])

        wall = corners(wall_w / 2, 0.0, 14.0)
        sign = corners(panel_w / 2, bottom, bottom + panel_h, 0.0)
        ink_lo = bottom + (ph - ink[3]) * m_per_px
        ink_hi = bottom + (ph - ink[1]) * m_per_px
        ink_off = ((ink[0] + ink[2]) / 2 - pw / 2) * m_per_px
        ink_q = corners((ink[2] - ink[0]) * m_per_px / 2, ink_lo, ink_hi, ink_off)
        placed.append((s, wall, sign, ink_q, panel, text))
    placed.sort(key=lambda p: -p[0].distance_m)  # far walls first: near ones paint over them
    truths = []
    for k, (s, wall, sign, ink_q, panel, text) in enumerate(placed, start=1):
        pw_px, zw = project(intr, pose, wall)
        ps_px, zs = project(intr, pose, sign)
        if (zw <= 0.5).any() or (zs <= 0.5).any():
            continue
        _paste(frame, ids, _wall_texture(rng, np.linalg.norm(wall[1, :2] - wall[0, :2]), 14.0), pw_px, 1000 + k)
        _paste(frame, ids, panel, ps_px, k)
    for k, (s, wall, sign, ink_q, panel, text) in enumerate(placed, start=1):
        q, z = project(intr, pose, ink_q)
        if (z <= 0.5).any():
            continue
        x0, y0 = q.min(0)
        x1, y1 = q.max(0)
        poly = np.zeros((height, width), np.uint8)
        cv2.fillPoly(poly, [np.round(q).astype(np.int32)], 1)
        inside = cv2.contourArea(q.astype(np.float32))  # off-screen ink counts as hidden
        visible = float(((ids == k) & (poly > 0)).sum()) / inside if inside > 1 else 0.0
        c = ink_q.mean(0)
        letter_px = float((np.linalg.norm(q[0] - q[3]) + np.linalg.norm(q[1] - q[2])) / 2)
        truths.append(SignTruth(s.name, math.degrees(math.atan2(c[1], c[0])) % 360.0, float(math.hypot(c[0], c[1])),
                                (float(x0), float(y0), float(x1), float(y1)), min(1.0, visible), letter_px))
    if degrade:
        frame = cv2.GaussianBlur(frame, (0, 0), float(rng.uniform(0.4, 1.0)))
        frame = np.clip(frame + rng.normal(0, 4.0, frame.shape), 0, 255).astype(np.uint8)
        ok, jpg = cv2.imencode(".jpg", frame[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(55, 86))])
        frame = np.ascontiguousarray(cv2.imdecode(jpg, cv2.IMREAD_COLOR)[:, :, ::-1])
    return SignFrame(frame, intr, pose, tuple(truths), goal)


# Goals and the names that must not be taken for them: another branch, one letter off, a chain alone.
TASKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Alepa Kallio", ("Alepa Töölö", "Alepa Kallia", "Alepa")),
    ("Café Engel", ("Café Angel", "Café Ekberg", "Engel Bar")),
    ("Kahvila Sävy", ("Kahvila Savu", "Kahvila Säde")),
    ("Apteekki Hämeentie", ("Apteekki Hämeenkatu", "Apteekki Hämeentia")),
    ("Ravintola Löyly", ("Ravintola Lyly", "Ravintola Löylö")),
    ("Stockmann", ("Stockman", "Stockholm")),
)
FILLERS = ("Kiasma", "R-Kioski", "Musiikkitalo", "Lasipalatsi", "Tavastia", "Fazer Café", "Kauppahalli",
           "Alko Kamppi", "Hotelli Torni", "Kirjakauppa Åkerlund", "Pääposti", "Ateneum")


def all_names() -> list[str]:
    """Every name a frame may show: what the bench hands the reader as its known names."""
    return sorted({n for g, ds in TASKS for n in (g, *ds)} | set(FILLERS))


def bench_frames(n_per_task: int = 8, seed: int = 0, **camera) -> list[SignFrame]:
    """Half the frames show the goal among others, half only its look-alikes and fillers.

    The camera flies 8-30 m up with the flight loop's pitch; signs sit 12-80 m
    away (drawn again until the lettering is inside the view), 0.6-1.4 m
    lettering, walls turned up to 50 degrees away, apart in bearing so that
    walls seldom hide each other.
    """
    rng = np.random.default_rng(seed)
    hfov = camera.get("hfov_deg", 90.0)
    width, height = camera.get("width", 800), camera.get("height", 500)
    pitch = camera.get("pitch_deg", -15.0)
    half_vfov = math.degrees(math.atan((height / 2) / ((width / 2) / math.tan(math.radians(hfov) / 2))))
    out = []
    for goal, decoys in TASKS:
        for i in range(n_per_task):
            names = ([goal] if i % 2 == 0 else []) + [str(x) for x in rng.choice(decoys, size=min(2, len(decoys)), replace=False)]
            names.append(str(rng.choice(FILLERS)))
            rng.shuffle(names)
            yaw = float(rng.uniform(0, 360))
            altitude = float(rng.uniform(8, 30))
            slots = np.linspace(-hfov / 2 + 10, hfov / 2 - 10, len(names))
            specs = []
            for n, b in zip(names, slots):
                letter, base = float(rng.uniform(0.6, 1.4)), float(rng.uniform(2.5, 3.5))
                for _ in range(20):
                    d = float(rng.uniform(12, 80))
                    if abs(math.degrees(math.atan2(base + letter / 2 - altitude, d)) - pitch) < half_vfov - 6:
                        break
                specs.append(SignSpec(n, (yaw + float(b) + rng.uniform(-4, 4)) % 360, d, letter_m=letter, base_m=base,
                                      facing_deg=float(rng.uniform(-50, 50)), font=int(rng.integers(0, 4)),
                                      upper=bool(rng.random() < 0.3)))
            out.append(render_frame(specs, rng=rng, yaw_deg=yaw, altitude_m=altitude, goal=goal,
                                    **{k: v for k, v in camera.items() if k != "altitude_m"}))
    return out
