"""Flight log bookkeeping and the `aerie ground` command."""

from __future__ import annotations

from contract.messages import Event, FlightStart

import json
from pathlib import Path

import pytest

from ground_station import service
from ground_station.flight_log import FlightLog
from ground_station.settings import load_ground_config
from contract.envelope import decode, encode
from common.typed_config import ConfigError

STREAM = "5e1f00000000a11e"  # the vehicle journal's stream id these envelopes carry


def _env(seq: int, msg_type: str = "state", payload: object = None, vid: str = "u"):
    frame = encode(vid, seq, msg_type, payload if payload is not None else {"seq": seq}, t_ns=seq,
                   stream=STREAM)
    return decode(frame, max_bytes=1 << 20), frame


def test_out_of_order_storage_flights_and_missing_ranges(log_target: str | Path) -> None:
    with FlightLog.open(log_target) as fl:
        # The end of the flight and a middle part arrive before its start (replay order).
        assert fl.store([_env(6, "flight_end", {}), _env(4), _env(5)]) == 3
        assert fl.advance("u", STREAM, seen=6) == 0
        assert fl.missing("u", STREAM, 1, 8) == [(1, 3), (7, 8)]
        assert fl.flights("u") == []
        assert fl.store([_env(1, "flight_start", FlightStart(mission="m").encode()), _env(2),
                         _env(3, "event", Event.of("failsafe", "rc").encode())]) == 3
        assert fl.store([_env(2)]) == 0          # idempotent
        assert fl.advance("u", STREAM) == 6
        [flight] = fl.flights("u")
        assert (flight.start_seq, flight.end_seq, flight.info) == (1, 6, FlightStart(mission="m").body())
        assert [m["seq"] for m in fl.flight_messages(flight)] == [1, 2, 3, 4, 5, 6]
        assert fl.events("u") == [(3, "failsafe", {"value": "rc"})]


def test_pruned_seqs_are_skipped_and_counted_as_unrecoverable(log_target: str | Path) -> None:
    with FlightLog.open(log_target) as fl:
        fl.store([_env(2), _env(9)])
        assert fl.advance("u", STREAM, first_available=8) == 7   # 8 is still held by the vehicle
        fl.store([_env(8)])
        assert fl.advance("u", STREAM, first_available=8) == 9
        row = fl._conn.execute("SELECT unrecoverable FROM vehicles WHERE vehicle_id='u'").fetchone()
        assert row[0] == 6   # 1, 3..7 gone for good (2 was stored)


def test_ground_config_rejects_unknown_keys_and_resolves_paths(tmp_path: Path) -> None:
    path = tmp_path / "ground.yaml"
    path.write_text("db_path: log.sqlite\nvehicles:\n  - vehicle_id: a\n    pub_endpont: tcp://x:1\n")
    with pytest.raises(ConfigError, match="vehicles\\[0\\].pub_endpont"):
        load_ground_config(path)
    path.write_text("db_path: log.sqlite\nvehicles: [{vehicle_id: a}, {vehicle_id: a}]\n")
    with pytest.raises(ConfigError, match="twice"):
        load_ground_config(path)
    path.write_text("db_path: log.sqlite\n")
    cfg, base = load_ground_config(path)
    assert base == tmp_path.resolve() and cfg.db_path == "log.sqlite" and cfg.curve


def test_service_runs_for_a_duration_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ground.yaml"
    path.write_text("db_path: log.sqlite\ncurve: false\nvehicles:\n  - vehicle_id: a\n"
                    "    pub_endpoint: tcp://127.0.0.1:1\n    replay_endpoint: tcp://127.0.0.1:2\n")
    assert service.main(["--config", str(path), "--duration", "0.3", "--log-level", "WARNING"]) == 0
    assert json.loads(capsys.readouterr().out)["counters"] == {"a": {}}
    assert (tmp_path / "log.sqlite").exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text("nonsense: 1\n")
    assert service.main(["--config", str(bad)]) == 1
    missing_keys = tmp_path / "keys.yaml"
    missing_keys.write_text("db_path: log2.sqlite\n")   # curve on, key files absent
    assert service.main(["--config", str(missing_keys), "--duration", "0.1"]) == 1


def test_aerie_ground_migrate_and_a_server_that_is_behind(tmp_path: Path, pg_cluster,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from ground_station import migrations
    from ground_station.flight_log import FlightLogError

    url = pg_cluster.new_database(migrate=False)
    with pytest.raises(FlightLogError, match="run `aerie ground migrate"):
        FlightLog.open(url)                                  # never migrated by a ground process itself
    cfg = tmp_path / "ground.yaml"
    cfg.write_text(f"database: '{url}'\n")
    latest = len(migrations.available())
    assert service.main(["migrate", "--config", str(cfg)]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["version"] == latest and len(done["applied"]) == latest
    assert service.main(["migrate", "--config", str(cfg)]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == []   # each file once
    with FlightLog.open(url) as fl:
        assert fl.summary() == {}
    assert service.main(["show", "--config", str(cfg)]) == 0
    assert json.loads(capsys.readouterr().out)["vehicles"] == {}
    cfg.write_text("database: mysql://x/y\n")
    assert service.main(["migrate", "--config", str(cfg)]) == 1
    assert "postgresql://" in capsys.readouterr().err
    cfg.write_text("database: 'postgresql://nobody:secret@/none?host=/nonexistent'\n")
    assert service.main(["migrate", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert "cannot connect" in err and "secret" not in err  # the password never printed


def test_a_database_newer_than_this_aerie_is_refused(pg_cluster) -> None:
    from ground_station.flight_log import FlightLogError
    from ground_station.log_db import open_postgres

    url = pg_cluster.new_database()
    db = open_postgres(url)
    db.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
    db.close()
    with pytest.raises(FlightLogError, match="newer than this ground station"):
        FlightLog.open(url)
