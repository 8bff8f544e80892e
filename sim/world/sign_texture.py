"""What a sign looks like: its colours and face, and its lettering as a texture.

A text reader that only ever saw white-on-black Hershey labels would learn
that style, not reading; real streets mix dark letters on light panels with
light letters on dark ones, serif with sans. Each name gets its style from a
seeded hash, so the same shop looks the same from every view and in every run.

The lettering is rasterised once per (name, style) at a fixed cap height and
kept with a small mip pyramid: the renderer warps whichever level is nearest
above the size the sign will cover, so far signs are filtered the way a lens
and sensor average them instead of aliasing into noise.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np

from sim.world.fonts import FACES, load_font

# Cap height (height of "H") of the lettering in texture pixels: as large as the closest signs are ever
# drawn at the benchmark's resolution (a 2 m letter at 30 m is ~37 px), so near signs stay sharp.
TEXTURE_CAP_PX = 32
# Margin around the lettering inside the panel, in cap heights.
PANEL_PAD_CAPS = 0.45

# (panel, ink) pairs in BGR: dark on light, then light on dark.
_DARK_ON_LIGHT = (((238, 240, 242), (30, 30, 30)), ((200, 232, 245), (60, 35, 25)), ((150, 220, 240), (25, 25, 25)),
                  ((220, 225, 220), (35, 35, 130)), ((232, 236, 240), (45, 85, 30)))
_LIGHT_ON_DARK = (((35, 35, 35), (245, 245, 245)), ((95, 45, 20), (235, 240, 245)), ((40, 30, 110), (220, 235, 245)),
                  ((45, 80, 30), (240, 245, 245)), ((30, 30, 30), (70, 195, 235)))


@dataclass(frozen=True)
class SignStyle:
    """Panel and letter colours (BGR) and the font face of one sign."""

    face: str
    panel: tuple[int, int, int]
    ink: tuple[int, int, int]


def name_hash(name: str, salt: str = "") -> int:
    """A stable 64-bit hash of a name (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(f"{salt}|{name}".encode(), digest_size=8).digest(), "little")


def unit_hash(name: str, salt: str) -> float:
    """A stable number in [0, 1) for `name`; `salt` makes independent draws (letter size, mount height, ...)."""
    return name_hash(name, salt) / 2.0**64


def style_for(name: str) -> SignStyle:
    h = name_hash(name, "style")
    pairs = _DARK_ON_LIGHT if h & 1 else _LIGHT_ON_DARK
    panel, ink = pairs[(h >> 1) % len(pairs)]
    return SignStyle(FACES[(h >> 8) % len(FACES)], panel, ink)


@functools.lru_cache(maxsize=16)
def _metrics(face: str) -> tuple[int, int, int, int]:
    """(font size px, cap height px, ascent, descent) for lettering TEXTURE_CAP_PX high in `face`."""
    probe = 100
    f = load_font(face, probe)
    cap = f.getbbox("H", anchor="ls")
    size = round(probe * TEXTURE_CAP_PX / (cap[3] - cap[1]))
    f = load_font(face, size)
    cap = f.getbbox("H", anchor="ls")
    ascent, descent = f.getmetrics()
    return size, cap[3] - cap[1], ascent, descent


@dataclass(frozen=True)
class TextLayout:
    """Where the lettering sits in the panel texture (pixels of the full-size level)."""

    width: int
    height: int
    text_box: tuple[int, int, int, int]  # x0, y0, x1, y1: cap top to descender bottom, first to last glyph
    cap_px: int


@functools.lru_cache(maxsize=4096)
def layout(name: str, face: str) -> TextLayout:
    """The panel's size and the lettering's box, without rasterising (placement needs only this)."""
    size, cap, ascent, descent = _metrics(face)
    f = load_font(face, size)
    pad = round(PANEL_PAD_CAPS * cap)
    x0, _, x1, _ = f.getbbox(name, anchor="ls")
    width = (x1 - x0) + 2 * pad
    top = pad + ascent - cap  # cap top; accents above it sit in the ascent, inside the panel
    height = pad + ascent + descent + pad
    return TextLayout(int(width), int(height), (pad, top, pad + (x1 - x0), top + cap + descent), cap)


@dataclass(frozen=True)
class SignTexture:
    layout: TextLayout
    levels: tuple[np.ndarray, ...]  # BGRA uint8, full size first, each next one half the previous


@functools.lru_cache(maxsize=1024)
def texture(name: str, style: SignStyle) -> SignTexture:
    """The sign's panel with its lettering, rasterised with FreeType (any Unicode the face covers)."""
    import cv2
    from PIL import Image, ImageDraw

    lay = layout(name, style.face)
    size, cap, ascent, _ = _metrics(style.face)
    font = load_font(style.face, size)
    img = Image.new("RGB", (lay.width, lay.height), style.panel[::-1])
    draw = ImageDraw.Draw(img)
    x0 = font.getbbox(name, anchor="ls")[0]
    baseline = lay.text_box[1] + cap
    draw.text((lay.text_box[0] - x0, baseline), name, font=font, fill=style.ink[::-1], anchor="ls")
    edge = tuple(int(0.6 * p + 0.4 * i) for p, i in zip(style.panel[::-1], style.ink[::-1]))
    draw.rectangle((0, 0, lay.width - 1, lay.height - 1), outline=edge, width=max(1, cap // 12))
    levels = [cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGRA)]  # opaque alpha: the warp's coverage mask
    while min(levels[-1].shape[:2]) >= 8:
        levels.append(cv2.pyrDown(levels[-1]))
    return SignTexture(lay, tuple(levels))
