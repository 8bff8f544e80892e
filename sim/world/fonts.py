"""TrueType faces for the lettering on simulated signs.

OpenCV's Hershey fonts are ASCII only, so a sign reading "Pääposti" drawn
with them would say "Paaposti" and a text reader could never be tested on the
letters Helsinki's names are full of. DejaVu covers all of Latin (and Greek,
Cyrillic), and matplotlib ships it with every install (the `bench` extra
brings matplotlib), as do most Linux systems; FreeType rasterises it through
Pillow. A few faces of the family give signs some typographic variety, the
way a street has more than one shop-front style.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

# The faces signs are lettered in; a sign picks one by a hash of its name.
FACES = ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansMono-Bold.ttf")
_SYSTEM_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"),
                Path("/usr/share/fonts/dejavu"))


class FontMissing(RuntimeError):
    """No DejaVu TrueType file was found: install matplotlib (`pip install -e .[bench]`) or fonts-dejavu."""


def _font_dirs() -> list[Path]:
    dirs = []
    spec = importlib.util.find_spec("matplotlib")  # its data path without importing it (that takes ~0.2 s)
    if spec is not None and spec.submodule_search_locations:
        dirs += [Path(p) / "mpl-data" / "fonts" / "ttf" for p in spec.submodule_search_locations]
    return dirs + list(_SYSTEM_DIRS)


@functools.lru_cache(maxsize=None)
def font_path(face: str) -> Path:
    """The file of `face`, or of DejaVuSans-Bold where this install lacks that face."""
    for name in (face, FACES[0]):
        for d in _font_dirs():
            if (d / name).is_file():
                return d / name
    raise FontMissing(f"no {face} (nor {FACES[0]}) in {', '.join(map(str, _font_dirs()))}; "
                      "install matplotlib (pip install -e .[bench]) or the fonts-dejavu package")


@functools.lru_cache(maxsize=64)
def load_font(face: str, size_px: int):
    """A Pillow FreeType font of `face` at `size_px` pixels per em."""
    from PIL import ImageFont

    return ImageFont.truetype(str(font_path(face)), size_px)
