"""The map file: round trip, and every kind of file that is not a whole map of this format is refused by name."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from onboard.map.map_file import HEADER, MapFileError, load_map, read_header, save_map, sealed, unsealed_comment
from onboard.map.onboard_map import MAP_FORMAT_VERSION, OnboardMap
from tests.map.tiny_map import tiny_map


def assert_same_map(a: OnboardMap, b: OnboardMap) -> None:
    assert (a.name, a.origin, a.header, a.bounds) == (b.name, b.origin, b.header, b.bounds)
    assert np.array_equal(a.graph.xy, b.graph.xy) and np.array_equal(a.graph.latlon, b.graph.latlon)
    assert a.graph.adj == b.graph.adj and a.graph.network_type == b.graph.network_type and a.graph.origin == b.graph.origin
    assert len(a.buildings) == len(b.buildings) and len(a.pois) == len(b.pois)
    for x, y in zip(a.buildings, b.buildings):
        assert (x.id, x.name, x.height, x.height_source, x.kind, x.aliases) == (y.id, y.name, y.height, y.height_source,
                                                                              y.kind, y.aliases)
        assert np.array_equal(x.footprint, y.footprint)
    for x, y in zip(a.pois, b.pois):
        assert (x.id, x.name, x.kind, x.lat, x.lon, x.possibly_stale) == (y.id, y.name, y.kind, y.lat, y.lon, y.possibly_stale)
        assert np.array_equal(x.xy, y.xy)


def test_helsinki_round_trip_is_equal(helsinki_map, helsinki_map_file):
    loaded = load_map(helsinki_map_file, expect_sha256=helsinki_map.header.extract_sha256)
    assert_same_map(helsinki_map, loaded)
    assert [b.name for b in loaded.landmarks] == [b.name for b in helsinki_map.landmarks]
    assert all(p.possibly_stale for p in loaded.pois)


def test_the_header_says_what_the_map_is(helsinki_map, helsinki_map_file):
    h = read_header(helsinki_map_file)
    assert h["format"] == "aerie-map" and h["format_version"] == MAP_FORMAT_VERSION
    assert h["extract"] == {"file": "Helsinki.osm.pbf", "sha256": helsinki_map.header.extract_sha256}
    assert h["build"] == {"sample_m": 5.0, "min_spacing_m": 40.0, "network": "auto", "poi_radius_m": 50.0}
    assert h["network"]["type"] == helsinki_map.graph.network_type
    assert h["counts"]["nodes"] == helsinki_map.graph.n_nodes and h["counts"]["buildings"] == len(helsinki_map.buildings)
    assert len(h["payload_sha256"]) == 64


def test_the_same_map_is_the_same_bytes(tmp_path):
    a, b = save_map(tiny_map(), tmp_path / "a.aeriemap"), save_map(tiny_map(), tmp_path / "b.aeriemap")
    assert a.read_bytes() == b.read_bytes()
    assert a.stat().st_mode & 0o777 == 0o644  # readable by the service user, not only by whoever built it
    assert_same_map(tiny_map(), load_map(a))


def test_no_member_is_a_pickle(helsinki_map_file):
    with zipfile.ZipFile(helsinki_map_file) as z:
        for name in z.namelist():
            if name != HEADER:
                np.load(io.BytesIO(z.read(name)), allow_pickle=False)  # raises on an object array


def refused(path: Path, *words: str) -> str:
    with pytest.raises(MapFileError) as exc:
        load_map(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}: "), msg
    for w in words:
        assert w in msg, msg
    return msg


def test_foreign_files_are_refused(tmp_path, helsinki_map):
    cv2 = pytest.importorskip("cv2")
    png = tmp_path / "map.aeriemap"
    png.write_bytes(cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))[1].tobytes())
    refused(png, "not an Aerie map file", "not a zip")
    empty = tmp_path / "empty.aeriemap"
    empty.write_bytes(b"")
    refused(empty, "not an Aerie map file", "empty")
    text = tmp_path / "notes.aeriemap"
    text.write_text("helsinki\n")
    refused(text, "not an Aerie map file")
    other_zip = tmp_path / "other.aeriemap"
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("readme.txt", "hello")
    refused(other_zip, "not an Aerie map file", HEADER)
    other_format = tmp_path / "format.aeriemap"
    with zipfile.ZipFile(other_format, "w") as z:
        z.writestr(HEADER, json.dumps({"format": "something-else", "format_version": 1}))
    refused(other_format, "not an Aerie map file", "aerie-map")
    refused(tmp_path / "missing.aeriemap", "no such map file")
    refused(tmp_path, "cannot read")


class _Marker:
    """Unpickling this would create a file: a pickle runs code when it is loaded."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_a_pickle_is_refused_without_being_run(tmp_path, helsinki_map):
    pickled_map = tmp_path / "map.aeriemap"
    pickled_map.write_bytes(pickle.dumps(helsinki_map))
    refused(pickled_map, "not an Aerie map file")
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.aeriemap"
    evil.write_bytes(pickle.dumps(_Marker(marker)))
    refused(evil, "not an Aerie map file")
    assert not marker.exists()


def rewrite(src: Path, dst: Path, edit, seal: bool = True) -> Path:
    """Copy a map file member by member, letting `edit(name, data) -> data` change one; sealed as save_map does."""
    buf = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zout:
        if seal:
            zout.comment = unsealed_comment()
        for name in zin.namelist():
            zout.writestr(name, edit(name, zin.read(name)))
    dst.write_bytes(sealed(buf.getvalue()) if seal else buf.getvalue())
    return dst


def test_a_repacked_file_without_its_seal_is_refused(tmp_path, helsinki_map_file):
    path = rewrite(helsinki_map_file, tmp_path / "repacked.aeriemap", lambda name, data: data, seal=False)
    refused(path, "damaged map file", "no seal")
    assert load_map(rewrite(helsinki_map_file, tmp_path / "resealed.aeriemap", lambda name, data: data)).name == "helsinki"


def test_another_format_version_is_refused(tmp_path, helsinki_map_file):
    def newer(name, data):
        if name != HEADER:
            return data
        return json.dumps({**json.loads(data), "format_version": MAP_FORMAT_VERSION + 1}).encode()

    path = rewrite(helsinki_map_file, tmp_path / "newer.aeriemap", newer)
    refused(path, f"map format version {MAP_FORMAT_VERSION + 1}", f"reads version {MAP_FORMAT_VERSION}", "aerie map build")


def test_a_map_of_another_extract_is_refused_when_asked(helsinki_map_file, helsinki_map):
    other = "0" * 64
    with pytest.raises(MapFileError) as exc:
        load_map(helsinki_map_file, expect_sha256=other)
    msg = str(exc.value)
    assert msg.startswith(f"{helsinki_map_file}: ") and "another extract" in msg and "Helsinki.osm.pbf" in msg
    assert helsinki_map.header.extract_sha256[:16] in msg and other[:16] in msg
    assert load_map(helsinki_map_file).name == "helsinki"  # not asked: loads


def test_a_changed_array_fails_the_payload_checksum(tmp_path, helsinki_map_file):
    def moved(name, data):  # a well-formed array with other numbers: only the payload checksum can tell
        if name != "graph/xy.npy":
            return data
        buf = io.BytesIO()
        np.save(buf, np.load(io.BytesIO(data)) + 1.0)
        return buf.getvalue()

    path = rewrite(helsinki_map_file, tmp_path / "moved.aeriemap", moved)
    refused(path, "damaged map file", "payload checksum mismatch")


def test_flipped_bytes_are_refused(tmp_path, helsinki_map_file):
    data = helsinki_map_file.read_bytes()
    with zipfile.ZipFile(helsinki_map_file) as z:
        header_at = z.getinfo(HEADER).header_offset + 30 + len(HEADER) + 10  # inside header.json's data
        big = max(z.infolist(), key=lambda i: i.compress_size)
        array_at = big.header_offset + 30 + len(big.filename) + big.compress_size // 2  # inside the largest array
        stamp_at = big.header_offset + 10  # the member's timestamp: nothing in a zip reads it back
    for at in (header_at, array_at, stamp_at, len(data) - 1):
        bad = bytearray(data)
        bad[at] ^= 0x10
        path = tmp_path / f"flip-{at}.aeriemap"
        path.write_bytes(bytes(bad))
        refused(path, "damaged")


def test_truncated_files_are_refused(tmp_path, helsinki_map_file):
    data = helsinki_map_file.read_bytes()
    for keep in (len(data) - 1, len(data) - 30, len(data) // 2, 100, 3):
        path = tmp_path / f"cut-{keep}.aeriemap"
        path.write_bytes(data[:keep])
        msg = refused(path)
        assert "damaged" in msg or "not an Aerie map file" in msg, msg


def test_every_damaged_byte_is_refused(tmp_path):
    """Flip a bit in every byte of a small map file in turn: every one is refused, naming the file."""
    data = save_map(tiny_map(), tmp_path / "tiny.aeriemap").read_bytes()
    path = tmp_path / "damaged.aeriemap"
    for at in range(len(data)):
        bad = bytearray(data)
        bad[at] ^= 1 << (at % 8)
        path.write_bytes(bytes(bad))
        with pytest.raises(MapFileError) as exc:
            load_map(path)
        assert str(exc.value).startswith(f"{path}: "), (at, exc.value)


def test_map_helpers(helsinki_map):
    m = helsinki_map
    positions = m.landmark_positions()
    assert len(positions) == len(m.landmarks) and all(p.shape == (2,) for p in positions.values())
    some = m.landmarks[0]
    assert np.allclose(positions[some.name], some.centroid)
    node = m.graph.n_nodes // 2
    assert np.allclose(m.to_local(*m.graph.latlon[node]), m.graph.xy[node], atol=1e-6)
    lat, lon = m.to_geo(m.graph.xy[node])
    assert (lat, lon) == pytest.approx(tuple(m.graph.latlon[node]), abs=1e-9)
    many = m.to_local(m.graph.latlon[:5, 0], m.graph.latlon[:5, 1])
    assert many.shape == (5, 2) and np.allclose(many, m.graph.xy[:5], atol=1e-6)
    lats, lons = m.to_geo(m.graph.xy[:5])
    assert np.allclose(lats, m.graph.latlon[:5, 0]) and np.allclose(lons, m.graph.latlon[:5, 1])


def test_a_map_written_before_aliases_loads_without_them(tmp_path):
    """The aliases member is optional: an older map of this format version has none, and loads."""
    from onboard.map.map_file import payload_sha256

    src = save_map(tiny_map(), tmp_path / "a.aeriemap")
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist() if n not in (HEADER, "buildings/aliases.npy")}
        header = json.loads(z.read(HEADER))
    header["payload_sha256"] = payload_sha256(members)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.comment = unsealed_comment()
        z.writestr(HEADER, json.dumps(header))
        for n, data in members.items():
            z.writestr(n, data)
    old = tmp_path / "old.aeriemap"
    old.write_bytes(sealed(buf.getvalue()))
    m = load_map(old)
    assert [b.aliases for b in m.buildings] == [(), ()]
    assert load_map(src).buildings[0].aliases == ("Tornet", "The Tall One")
