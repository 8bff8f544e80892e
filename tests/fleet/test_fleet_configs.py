"""`aerie fleet configs`: member configs for N PX4 SITL instances that load, do not collide, and talk.

Issue 36.16: set up by hand, member 2 died "Address already in use", the fleet channel had
no keys and the world feed listened elsewhere. Here the command runs as its own process;
every file it writes is read back with the typed loaders the services use, every port and
folder is checked distinct, every socket on loopback, and members 1 and 2 run their real
fleet channels from the generated files (CurveZMQ with the generated keys) until each hears
the other. Timeouts are hang guards only.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from contract.curve_keys import load_public, load_secret
from common.typed_config import ConfigError
from firmware_bridge.fleet_picture import TrafficReport
from ground_station.settings import load_ground_config
from onboard.config import load_config
from onboard.fleet.channel import FleetChannel
from sim.vehicle.process import free_ports

REPO = Path(__file__).resolve().parents[2]
N = 3
HANG_GUARD_S = 30.0


def _generate(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aerie", "fleet", "configs", "--out", str(out), *extra], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fleet")
    done = _generate(out, "--members", str(N), "--tasks", "t019")
    assert done.returncode == 0, done.stderr
    return out


def _port(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1])


def test_each_member_loads_and_has_its_own_instance_folder_and_ports(fleet: Path) -> None:
    cfgs = [load_config(fleet / f"vehicle{m}.yaml") for m in range(1, N + 1)]
    assert [c.link.url for c in cfgs] == [f"udpin://127.0.0.1:{14540 + i}" for i in range(N)]  # PX4 instance i
    assert [c.fleet.member_id for c in cfgs] == list(range(1, N + 1)) and all(c.fleet.enabled for c in cfgs)
    assert len({c.vehicle_id for c in cfgs}) == N and len({c.data_dir for c in cfgs}) == N
    assert all(Path(c.data_dir).is_dir() and Path(c.data_dir).is_absolute() for c in cfgs)
    endpoints = [e for c in cfgs for e in (c.telemetry.pub_endpoint, c.telemetry.replay_endpoint,
                                           c.telemetry.sync_endpoint, c.fleet_channel.pub_endpoint)]
    assert len({_port(e) for e in endpoints}) == 4 * N, endpoints          # no two sockets on one port
    assert all(e.startswith("tcp://127.0.0.1:") for e in endpoints)
    assert len({c.supervisor.world_endpoint for c in cfgs}) == 1            # one world feed for all
    assert "0.0.0.0" not in "".join((fleet / f"vehicle{m}.yaml").read_text() for m in range(1, N + 1))


def test_keys_pair_up_members_with_each_other_and_with_the_ground(fleet: Path) -> None:
    cfgs = [load_config(fleet / f"vehicle{m}.yaml") for m in range(1, N + 1)]
    ground, _ = load_ground_config(fleet / "ground.yaml")
    publics = {c.fleet.member_id: load_secret(c.fleet_channel.secret_key)[0] for c in cfgs}
    assert len(set(publics.values())) == N
    for c in cfgs:
        assert c.telemetry.curve and c.fleet_channel.curve
        assert load_secret(c.telemetry.server_secret_key)[0] == publics[c.fleet.member_id]
        peers = {p.member_id: p for p in c.fleet_channel.peers}
        assert set(peers) == set(publics) - {c.fleet.member_id}
        mine = {m: c2.fleet_channel.pub_endpoint for m, c2 in zip(publics, cfgs)}
        for m, p in peers.items():
            assert load_public(p.public_key) == publics[m] and p.endpoint == mine[m]
        admitted = {load_public(k) for k in Path(c.fleet_channel.authorized_keys_dir).glob("*.key")}
        assert admitted == set(publics.values())
        ground_keys = {load_public(k) for k in Path(c.telemetry.authorized_keys_dir).glob("*.key")}
        assert ground_keys == {load_secret(ground.client_secret_key)[0]}
    assert [v.vehicle_id for v in ground.vehicles] == [c.vehicle_id for c in cfgs]
    for v, c in zip(ground.vehicles, cfgs):
        assert (v.pub_endpoint, v.replay_endpoint, v.sync_endpoint) == \
               (c.telemetry.pub_endpoint, c.telemetry.replay_endpoint, c.telemetry.sync_endpoint)
        assert load_public(v.server_public_key) == publics[c.fleet.member_id]
    assert ground.dashboard_enabled and ground.dashboard_host == "127.0.0.1"


def test_missions_and_homes_are_written_per_instance(fleet: Path) -> None:
    homes = [tuple(float(x) for x in (fleet / f"home{m}.txt").read_text().split(",")) for m in range(1, N + 1)]
    assert len(set(homes)) == N  # one task for all: the homes are spread, not stacked
    for i, (lat, lon, alt) in enumerate(homes):
        env = dict(kv.split("=") for kv in (fleet / f"px4_instance{i}.env").read_text().split())
        assert (float(env["PX4_HOME_LAT"]), float(env["PX4_HOME_LON"]), float(env["PX4_HOME_ALT"])) == (lat, lon, alt)
        mission = yaml.safe_load((fleet / f"mission{i + 1}.yaml").read_text())
        assert mission["name"] == f"t019-v{i + 1}" and mission["instruction"]


def test_an_unknown_key_in_a_generated_config_is_refused(fleet: Path, tmp_path: Path) -> None:
    bad = tmp_path / "v.yaml"
    bad.write_text((fleet / "vehicle1.yaml").read_text().replace("fleet_channel:\n", "fleet_channel:\n  typo: 1\n"))
    with pytest.raises(ConfigError, match="typo"):
        load_config(bad)


def test_members_hear_each_other_over_the_generated_curve_channel(tmp_path: Path) -> None:
    base = free_ports(1)[0] // 10 * 10 - 10   # free-ish here; a taken port fails start() loudly, never silently
    done = _generate(tmp_path, "--members", "2", "--port-base", str(base))
    assert done.returncode == 0, done.stderr
    cfgs = [load_config(tmp_path / f"vehicle{m}.yaml") for m in (1, 2)]
    heard = [threading.Event(), threading.Event()]

    def inbox(i: int):
        def deliver(batch):
            if any(r.member_id == 2 - i for r in batch):
                heard[i].set()
            return ()
        return deliver

    channels = [FleetChannel(replace(c.fleet_channel, share_findings=False), c.fleet.member_id,
                             lambda c=c: TrafficReport(c.fleet.member_id, 60.17, 24.94, 40.0, 0.0, 0.0, 0.0, 0.0),
                             inbox(i), data_dir=c.data_dir) for i, c in enumerate(cfgs)]
    try:
        for ch in channels:
            ch.start()
        assert heard[0].wait(HANG_GUARD_S) and heard[1].wait(HANG_GUARD_S), [ch.counters() for ch in channels]
    finally:
        for ch in channels:
            ch.close()


def test_one_member_is_one_vehicle_with_keys_and_no_fleet(tmp_path: Path) -> None:
    done = _generate(tmp_path, "--members", "1")
    assert done.returncode == 0, done.stderr
    cfg = load_config(tmp_path / "vehicle1.yaml")
    assert not cfg.fleet.enabled and cfg.telemetry.curve and cfg.link.url == "udpin://127.0.0.1:14540"
    assert load_ground_config(tmp_path / "ground.yaml")[0].vehicles[0].vehicle_id == cfg.vehicle_id


@pytest.mark.parametrize("argv, said", [
    (["--members", "11"], "1..10"),
    (["--members", "0"], "1..10"),
    (["--members", "2", "--px4-port", "80"], "ports out of range"),
    (["--members", "2", "--tasks", "t999"], "t999"),
])
def test_bad_arguments_are_said_not_written(tmp_path: Path, argv: list[str], said: str) -> None:
    done = _generate(tmp_path / "out", *argv)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / "out" / "vehicle1.yaml").exists()
