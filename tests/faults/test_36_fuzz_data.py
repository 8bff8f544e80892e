"""Issue 36, deliverable 2: every decoder that takes bytes from outside either decodes or raises its own
error type — never another exception.

Property tests (Hypothesis) over: the telemetry envelope and its payloads (`contract/envelope.py`,
`contract/messages.py`), fleet frames (`contract/fleet_frame.py`), lesson bundles
(`contract/bundle.py`), map files and their header (`onboard/map/map_file.py`), world-feed requests
(`sim/world/observation_server.py`) and memory-sync requests (`onboard/telemetry/memory_sync.py`).
Each is fed three kinds of input: arbitrary bytes, arbitrary msgpack trees (NaN, infinities, huge
integers, nesting, every type where another is expected), and a valid message with one field
replaced by such a value, which is where range checks live. Bounded: a fixed number of examples
each, no deadline (the suite's whole time is the bound, a few seconds on a busy machine).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.bundle import BundleError, BundleItem, bundle_items, write_bundle
from contract.envelope import EnvelopeError, decode, encode
from contract.fleet_discovery import FleetDiscovery, LandmarkFinding, LookedFrom, SignRead
from contract.fleet_frame import unpack
from contract.fleet_report import FleetReport
from contract.messages import Event, decode_payload
from contract.payloads.base import PayloadError
from contract.records import COLLECTIONS, STRATEGIC_PLAN, StrategicPlan, content_uid, text_fields
from onboard.map.map_file import HEADER, MapFileError, load_map, map_bytes, read_header, sealed, unsealed_comment
from onboard.telemetry.memory_sync import NotADelivery, decode_delivery
from contract.world_feed import REQUESTS, GazetteerRequest, ObserveRequest
from tests.map.tiny_map import tiny_map

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# What msgpack can carry, with the values range checks exist for.
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0]),
    st.text(max_size=40), st.binary(max_size=40))
trees = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)), max_leaves=20)


def packed(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


@st.composite
def mutations(draw: st.DrawFn, docs: list[dict]) -> dict:
    """One of ``docs`` with one key (at the top or one level down) set to an arbitrary tree, or removed."""
    doc = _copy(draw(st.sampled_from(docs)))
    target = doc
    nested = [k for k, v in doc.items() if isinstance(v, dict) or (isinstance(v, list) and v and isinstance(v[0], dict))]
    if nested and draw(st.booleans()):
        k = draw(st.sampled_from(nested))
        target = doc[k] if isinstance(doc[k], dict) else doc[k][draw(st.integers(0, len(doc[k]) - 1))]
    key = draw(st.sampled_from(sorted(target)))
    if draw(st.integers(0, 9)) == 0:
        del target[key]
    else:
        target[key] = draw(trees)
    return doc


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_copy(x) for x in v]
    return v


def inputs(valid: list[dict]) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes, arbitrary msgpack, and the valid documents each with one field changed."""
    return st.one_of(st.binary(max_size=300), trees.map(packed),
                     mutations(valid).map(packed))


# -- telemetry envelope and payloads ---------------------------------------------------------------------------

ENVELOPES = [msgpack.unpackb(encode("uav-1", 7, "event", Event.of("armed", {"x": 1}).encode(),
                                    stream="0123456789abcdef"), raw=False)]


@FUZZ
@given(inputs(ENVELOPES))
def test_the_envelope_decodes_or_raises_envelope_error(frame: bytes) -> None:
    try:
        env = decode(frame, max_bytes=4096)
    except EnvelopeError:
        return
    try:
        decode_payload(env.type, env.payload)
    except PayloadError:
        pass


# -- fleet frames ----------------------------------------------------------------------------------------------

FLEET = [{"type": "fleet_report", **FleetReport(7, 3, 60.17, 24.94, 40.0, 1.0, 0.0, 0.0, 0.0).encode()},
         {"type": "fleet_discovery", **FleetDiscovery(
             3, 5, "f1", landmarks=(LandmarkFinding("Postitalo", 60.1719, 24.9413, 12.0, 4),),
             signs=(SignRead("Kahvila", 60.1702, 24.9410),), looked_from=(LookedFrom(60.1701, 24.9402),)).encode()}]


@FUZZ
@given(inputs(FLEET))
def test_a_fleet_frame_decodes_or_raises_payload_error(frame: bytes) -> None:
    try:
        payload = unpack(frame, max_bytes=16384)
    except PayloadError:
        return
    assert isinstance(payload, (FleetReport, FleetDiscovery))


# -- lesson bundles --------------------------------------------------------------------------------------------

def _bundle_doc() -> dict:
    record = StrategicPlan("Inspect the tower", '{"sub_goals": []}', "fly high", "{}", "success")
    spec = COLLECTIONS[STRATEGIC_PLAN]
    item = BundleItem(content_uid(spec.name, spec.level, text_fields(record), None, None), spec.name, spec.level,
                      None, "ground", 1.7e9, record)
    with tempfile.TemporaryDirectory() as d:
        write_bundle(Path(d) / "b.msgpack", [item], vehicle_id="ground", embedding_model="m/384")
        return msgpack.unpackb((Path(d) / "b.msgpack").read_bytes(), raw=False)


BUNDLES = [_bundle_doc()]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(data=inputs(BUNDLES))
def test_a_bundle_reads_or_raises_bundle_error(scratch: Path, data: bytes) -> None:
    path = scratch / "bundle.msgpack"
    path.write_bytes(data)
    try:
        _, items = bundle_items(path, max_text_chars=1000)
    except BundleError:
        return
    assert all(len(v) <= 1000 for it in items for v in text_fields(it.record).values())


@FEW
@given(mutations(BUNDLES[0]["experiences"]))
def test_a_bundle_whose_experience_is_mutated_reads_or_raises_bundle_error(scratch: Path, item: dict) -> None:
    doc = {**BUNDLES[0], "experiences": [item]}
    path = scratch / "mutated.msgpack"
    path.write_bytes(packed(doc))
    try:
        bundle_items(path)
    except BundleError:
        pass


# -- map files -------------------------------------------------------------------------------------------------

TINY = map_bytes(tiny_map())


def _with_header(header: dict) -> bytes:
    """A sealed map whose header is ``header`` (the arrays of the tiny map)."""
    good = zipfile.ZipFile(io.BytesIO(TINY))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.comment = unsealed_comment()
        for name in good.namelist():
            body = json.dumps(header).encode() if name == HEADER else good.read(name)
            z.writestr(name, body, compress_type=zipfile.ZIP_DEFLATED)
    return sealed(buf.getvalue())


def _json_safe(tree: Any) -> Any:
    if isinstance(tree, bytes):
        return tree.hex()
    if isinstance(tree, dict):
        return {str(k): _json_safe(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_json_safe(v) for v in tree]
    return tree


TINY_HEADER = json.loads(zipfile.ZipFile(io.BytesIO(TINY)).read(HEADER))


@FEW
@given(mutations([TINY_HEADER]))
def test_a_sealed_map_with_a_mutated_header_loads_or_raises_map_file_error(scratch: Path, header: dict) -> None:
    header = _json_safe(header)
    path = scratch / "m.aeriemap"
    path.write_bytes(_with_header(header))
    for read in (read_header, load_map):
        try:
            read(path)
        except MapFileError:
            pass


@FEW
@given(st.binary(max_size=600), st.integers(0, len(TINY) - 1))
def test_arbitrary_or_damaged_map_bytes_raise_map_file_error(scratch: Path, junk: bytes, at: int) -> None:
    path = scratch / "j.aeriemap"
    cut = min(at, len(TINY) - 100)   # damage inside the archive, resealed: only the content checks are left
    resealed = sealed(TINY[:cut] + junk[:8] + TINY[cut + len(junk[:8]):])
    for data in (junk, TINY[:at] + junk + TINY[at + len(junk):], resealed):
        path.write_bytes(data)
        try:
            load_map(path)
        except MapFileError:
            pass


# -- world-feed and memory-sync requests -----------------------------------------------------------------------

WORLD = [{"type": "observe", "v": 1, "lat": 60.17, "lon": 24.94, "heading": 10.0, "node": 3, "image": False,
          "altitude": 40.0, "sightings": True, "camera_alt": 30.0, "camera_pitch": -20.0},
         {"type": "gazetteer", "v": 1}]


@FUZZ
@given(inputs(WORLD))
def test_a_world_feed_request_decodes_or_raises_payload_error(raw: bytes) -> None:
    try:
        req = REQUESTS.unpack(raw)
    except PayloadError:
        return
    assert isinstance(req, (ObserveRequest, GazetteerRequest))
    if isinstance(req, ObserveRequest):
        assert -90 <= req.lat <= 90 and -180 <= req.lon <= 180 and math.isfinite(req.heading)


@pytest.fixture(scope="module")
def world_server():
    from sim.world.cache import load_world
    from sim.world.observation_server import WorldObservationServer

    return WorldObservationServer(load_world(None), noise="perfect")


@FEW
@given(mutations(WORLD[:1]))
def test_a_checked_world_request_is_served(world_server, req: dict) -> None:
    """What passes the check never fails the server's handling of it (images off: rendering is slow)."""
    raw = packed({**req, "image": False})
    try:
        req = REQUESTS.unpack(raw)
    except PayloadError:
        return
    assert world_server.handle(req).MSG_TYPE == "observation"


SYNC = [{"type": "bundle_delivery", "v": 1, "sha256": hashlib.sha256(b"abc").hexdigest(), "bundle": b"abc"}]


@FUZZ
@given(inputs(SYNC))
def test_a_sync_request_decodes_or_raises_not_a_delivery(body: bytes) -> None:
    try:
        sha, data = decode_delivery(body)
    except NotADelivery:
        return
    assert isinstance(data, bytes) and len(sha) == 64
