"""Fault 36.10: a sealed map with NaN graph coordinates passed `load_map` (`aerie fly --map` then died at
step 1 naming no file); a 1.5 MB zip-bomb map inflated to 3.1 GB before its checksum was looked at.

A seal proves a file whole, not harmless: anyone can seal one. Real parts: map files written by
`save_map` (or its own zip writer and seal) on disk, read by `load_map` and by `aerie map info` as a
process; the bombs are real deflate streams.
"""

from __future__ import annotations

import dataclasses
import io
import struct
import subprocess
import sys
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from onboard.map.map_file import HEADER, MapFileError, load_map, map_bytes, read_header, save_map, sealed, unsealed_comment
from tests.map.tiny_map import tiny_map

ROOT = Path(__file__).resolve().parents[2]


def _with_nan_waypoint():
    m = tiny_map()
    xy = m.graph.xy.copy()
    xy[1, 0] = np.nan
    return dataclasses.replace(m, graph=dataclasses.replace(m.graph, xy=xy))


def test_a_sealed_map_with_nan_coordinates_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = save_map(_with_nan_waypoint(), tmp_path / "nan.aeriemap")
    with pytest.raises(MapFileError, match=rf"^{path}: damaged map file .*waypoint positions are not all finite"):
        load_map(path)
    done = subprocess.run([sys.executable, "-m", "aerie", "map", "info", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and str(path) in done.stderr + done.stdout and "finite" in done.stderr + done.stdout

    for field, value in (("latlon", np.inf), ("latlon", 91.0)):
        m = tiny_map()
        arr = getattr(m.graph, field).copy()
        arr[0, 0] = value
        bad = save_map(dataclasses.replace(m, graph=dataclasses.replace(m.graph, **{field: arr})), tmp_path / "b.aeriemap")
        with pytest.raises(MapFileError, match="finite places on Earth"):
            load_map(bad)
    m = tiny_map()
    b = m.buildings[0]
    bad = save_map(dataclasses.replace(m, buildings=[dataclasses.replace(b, height=float("nan")), m.buildings[1]]),
                   tmp_path / "h.aeriemap")
    with pytest.raises(MapFileError, match="heights are not all finite"):
        load_map(bad)
    assert load_map(save_map(tiny_map(), tmp_path / "ok.aeriemap")).graph.n_nodes == 3


def _bomb(inflated: int, *, declare: int | None = None) -> bytes:
    """A sealed archive of a real map's members plus one member of `inflated` zero bytes (deflated), whose
    central directory declares `declare` bytes for it when given (a lying archive)."""
    good = zipfile.ZipFile(io.BytesIO(map_bytes(tiny_map())))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.comment = unsealed_comment()
        for name in good.namelist():
            z.writestr(name, good.read(name), compress_type=zipfile.ZIP_DEFLATED)
        info = zipfile.ZipInfo("graph/zz.npy", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=False) as f:
            step = bytes(1 << 22)
            for _ in range(inflated // len(step)):
                f.write(step)
    data = bytearray(buf.getvalue())
    if declare is not None:
        at = data.find(b"PK\x01\x02")
        while at >= 0:
            name_len = struct.unpack_from("<H", data, at + 28)[0]
            if data[at + 46:at + 46 + name_len] == b"graph/zz.npy":
                struct.pack_into("<I", data, at + 24, declare)
            at = data.find(b"PK\x01\x02", at + 4)
    return sealed(bytes(data))


def test_a_zip_bomb_is_refused_before_it_inflates(tmp_path: Path) -> None:
    honest = tmp_path / "honest.aeriemap"
    honest.write_bytes(_bomb(1 << 23, declare=3_100_000_000))   # declares what the bomb inflated to
    with pytest.raises(MapFileError, match=r"would inflate to 31\d+ bytes, more than the 268435456 allowed"):
        load_map(honest)
    with pytest.raises(MapFileError, match="would inflate"):
        read_header(honest)

    lying = tmp_path / "lying.aeriemap"
    lying.write_bytes(_bomb(256 << 20, declare=1000))   # 256 MiB of zeros declared as 1000 bytes
    assert lying.stat().st_size < 2 << 20
    tracemalloc.start()
    try:
        with pytest.raises(MapFileError, match="damaged"):
            load_map(lying)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"loading the lying bomb allocated {peak} bytes"


def test_the_limit_is_the_configured_one(tmp_path: Path) -> None:
    path = save_map(tiny_map(), tmp_path / "m.aeriemap")
    with zipfile.ZipFile(path) as z:
        total = sum(i.file_size for i in z.infolist())
    with pytest.raises(MapFileError, match="map.max_inflated_bytes"):
        load_map(path, max_inflated_bytes=total - 1)
    assert load_map(path, max_inflated_bytes=total).name == "tiny"
    assert HEADER in zipfile.ZipFile(path).namelist()
