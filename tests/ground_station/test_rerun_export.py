"""A flight from a real flight log exported to a real .rrd, read back with rerun-sdk's own reader."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from firmware_bridge.vehicle_state import VehicleState
from ground_station import service
from ground_station.flight_log import FlightLog
from ground_station.rerun_export import ExportError, FlightNotFound, export_flight
from contract.envelope import decode, encode
from contract.messages import (AgentStep, Detection, Detections, Event, FlightEnd, FlightStart, MapImage, Plan, PlanStep,
                               Pose, State)

rr = pytest.importorskip("rerun", reason="rerun-sdk is not installed (pip install rerun-sdk)")
from rerun.chunk import RrdReader  # noqa: E402

STREAM = "5e1f00000000a11e"  # the vehicle journal's stream id these envelopes carry

VID = "drone-7"
T0 = 1_790_000_000_000_000_000
HOME_N, HOME_E, HOME_D = 5.0, -3.0, -1.0            # home in the autopilot's local NED frame
# Offsets from home (east, north, up) the vehicle flies through, and the battery it reports (NaN: unknown).
OFFSETS = [(0.0, 0.0, 0.0), (2.0, 10.0, 15.0), (4.0, 20.0, 15.0), (4.0, 30.0, 0.5)]
BATTERY = [99.0, 95.0, float("nan"), 90.0]
MODES = [("HOLD", False, False), ("OFFBOARD", True, True), ("OFFBOARD", True, True), ("LAND", True, False)]


def _png() -> bytes:
    import cv2

    ok, buf = cv2.imencode(".png", np.full((8, 12, 3), 200, np.uint8))
    assert ok
    return bytes(buf)


def _flight(*, with_malformed: bool) -> list[tuple[str, Any]]:
    msgs: list[tuple[str, Any]] = [("flight_start", FlightStart(mission="find the kiosk").encode()),
                                   ("event", Event.of("mission_start", {"goal": "kiosk"}).encode()),
                                   ("plan", Plan("kiosk", (PlanStep("follow the street", "navigate"),)).encode())]
    for i, ((e, n, u), battery, (mode, armed, in_air)) in enumerate(zip(OFFSETS, BATTERY, MODES)):
        state = VehicleState(lat=60.17, lon=24.94, rel_alt_m=u, north_m=HOME_N + n, east_m=HOME_E + e,
                             down_m=HOME_D - u, battery_percent=battery, battery_voltage_v=16.0 - i * 0.1,
                             flight_mode=mode, armed=armed, in_air=in_air, home_lat=60.17, home_lon=24.94,
                             home_north_m=HOME_N, home_east_m=HOME_E, home_down_m=HOME_D)
        msgs.append(("state", State.from_state(state).encode()))
        msgs.append(("agent_step", AgentStep(
            step=i, current_state=f"over block {i}", action="forward", reason=f"reason {i}",
            pose=Pose(e + 0.5, n - 0.5, u, 0.0), distance_estimate_m=100.0 - 20 * i).encode()))
    msgs.append(("detections", Detections((
        Detection("kiosk", 0.81, 12.0, 40.0, HOME_N + 70.0, HOME_E + 6.0),
        Detection("car", 0.5, -30.0))).encode()))    # not placed: text only
    msgs.append(("map", MapImage(_png(), step=2).encode()))
    msgs.append(("event", Event.of("failsafe", {"reason": "rc lost"}).encode()))
    if with_malformed:
        msgs += [("state", "not a state"), ("map", {**MapImage(_png()).encode(), "png": b"GIF89a not a png"}), ("agent_step", [1, 2]),
                 ("detections", {"detections": "kiosk"})]
    msgs.append(("flight_end", FlightEnd(reason="landed").encode()))
    return msgs


def _store(db: Path, flights: list[list[tuple[str, Any]]]) -> list[int]:
    """Store the flights back to back through the real envelope codec; returns their start seqs."""
    starts, items, seq = [], [], 0
    for msgs in flights:
        starts.append(seq + 1)
        for msg_type, payload in msgs:
            seq += 1
            frame = encode(VID, seq, msg_type, payload, t_ns=T0 + seq * 100_000_000, stream=STREAM)
            items.append((decode(frame, max_bytes=1 << 20), frame))
    with FlightLog.open(db) as fl:
        assert fl.store(items) == len(items)
    return starts


def _read_back(path: Path) -> tuple[Counter[str], dict[str, list[Any]]]:
    """Rows per entity path, and the Arrow columns of each entity's chunks (concatenated)."""
    rows: Counter[str] = Counter()
    columns: dict[str, list[Any]] = {}
    [recording] = RrdReader(path).recordings()
    assert (recording.application_id, recording.recording_id) == ("aerie", f"{VID}-flight-1")
    for chunk in RrdReader(path).stream():
        if chunk.entity_path == "/__properties":
            continue
        assert chunk.is_static or set(chunk.timeline_names) == {"seq", "time"}    # no export-time clocks
        rows[chunk.entity_path] += chunk.num_rows
        batch = chunk.to_record_batch()
        for name in batch.schema.names:
            columns.setdefault(f"{chunk.entity_path}:{name}", []).extend(batch.column(name).to_pylist())
    return rows, columns


def test_a_flight_is_exported_with_every_signal_on_its_own_timelines(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    first, second = _store(db, [_flight(with_malformed=False), _flight(with_malformed=False)])
    summary = export_flight(db, VID, first, tmp_path / "out" / "flight.rrd")
    assert summary.path.exists() and not (tmp_path / "out" / "flight.rrd.partial").exists()
    assert summary.end_seq == second - 1 and summary.messages == second - first
    assert summary.malformed == {}

    rows, cols = _read_back(summary.path)
    n = len(OFFSETS)
    assert dict(rows) == {
        "/world/vehicle/position": n, "/world/vehicle/trajectory": 1, "/vehicle/gps": n,
        "/vehicle/battery_percent": sum(1 for b in BATTERY if b == b), "/vehicle/battery_voltage_v": n,
        "/vehicle/altitude_m": n, "/log/mode": len(set(MODES)),
        "/log/agent": n, "/agent/distance_estimate_m": n, "/world/agent/pose": n,
        "/log/events": 2, "/log/flight": 2, "/log/plan": 1,
        "/log/detections": 1, "/world/detections": 1, "/map": 1,
    }
    assert dict(rows) == {f"/{k}": v for k, v in summary.rows.items()}
    # Positions are metres east/north/up of home, whatever the autopilot's local origin.
    assert np.allclose(np.array([p[0] for p in cols["/world/vehicle/position:Points3D:positions"]]), OFFSETS)
    assert np.allclose(cols["/world/vehicle/trajectory:LineStrips3D:strips"][0], OFFSETS)
    assert np.allclose(cols["/world/detections:Points3D:positions"][0], [(6.0, 70.0, 0.0)])
    assert cols["/world/detections:Points3D:labels"] == [["kiosk"]]
    # The state messages' own seqs and times index them.
    state_seqs = cols["/world/vehicle/position:seq"]
    assert state_seqs == [first + 3 + 2 * i for i in range(n)]
    times = [np.datetime64(t, "ns").astype(np.int64) for t in cols["/world/vehicle/position:time"]]
    assert times == [T0 + s * 100_000_000 for s in state_seqs]
    assert cols["/map:EncodedImage:blob"] == [[list(_png())]]
    mode_text = cols["/log/mode:TextLog:text"]
    assert mode_text[0] == ["mode HOLD, disarmed, on ground"] and mode_text[-1] == ["mode LAND, armed, on ground"]
    assert cols["/log/events:TextLog:level"] == [["INFO"], ["WARN"]]
    assert "forward: reason 1 | target ~80.0 m" in cols["/log/agent:TextLog:text"][1][0]


def test_a_flight_with_malformed_payloads_exports_what_it_can(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    [first] = _store(db, [_flight(with_malformed=True)])
    summary = export_flight(db, VID, first, tmp_path / "flight.rrd")
    assert summary.malformed == {"state": 1, "map": 1, "agent_step": 1, "detections": 1}
    rows, _ = _read_back(summary.path)
    assert rows["/world/vehicle/position"] == len(OFFSETS) and rows["/map"] == 1
    assert rows["/log/agent"] == len(OFFSETS) and rows["/log/detections"] == 1


def test_a_missing_flight_is_a_clear_error_and_exit_code_2(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "log.sqlite"
    [first] = _store(db, [_flight(with_malformed=False)])
    with pytest.raises(FlightNotFound, match=f"starts at seq 99 .*flights start at: {first}"):
        export_flight(db, VID, 99, tmp_path / "x.rrd")
    with pytest.raises(ExportError, match="no flight log yet"):
        export_flight(tmp_path / "absent.sqlite", VID, first, tmp_path / "x.rrd")

    config = tmp_path / "ground.yaml"
    config.write_text("db_path: log.sqlite\ncurve: false\n")
    out = tmp_path / "cli.rrd"
    assert service.main(["export-rrd", "--config", str(config), "nobody", "1", "--out", str(out)]) == 2
    assert "no flight of vehicle 'nobody'" in capsys.readouterr().err and not out.exists()
    assert service.main(["export-rrd", "--config", str(config), VID, str(first), "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["path"] == str(out) and report["rows"]["world/vehicle/position"] == len(OFFSETS)
    assert _read_back(out)[0]["/map"] == 1
