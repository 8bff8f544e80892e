"""The pieces every rig of real supervisors is built from: config files, the ground's view, `aerie fly` processes.

`make demo` (one vehicle flown twice) and `aerie fleet` (N vehicles at once)
both write a vehicle config derived from the shipped defaults, point one
ground station at the vehicles' telemetry with CurveZMQ keys, and run
`aerie fly` as child processes whose lines are echoed as they come. One copy
of each lives here so that the two rigs cannot drift apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def write_yaml(obj: Any, path: Path) -> Path:
    """A typed config (or mission) as the YAML its loader reads back."""
    import yaml

    from common.typed_config import to_dict

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(to_dict(obj), sort_keys=False), encoding="utf-8")
    return path


def vehicle_config(rig: Any, data_dir: Path, *, secret_key: Path, authorized_dir: Path, log_file: Path,
                   vehicle_id: str = "aerie-1", base: Any = None, ports: Sequence[int] | None = None) -> Any:
    """``base`` (default: the shipped defaults) pointed at ``rig``, telemetry with CurveZMQ and these keys
    (on ``ports``, the three telemetry ports, when given)."""
    from common.log_setup import LoggingConfig
    from onboard.config import AerieConfig

    cfg = rig.config(base or AerieConfig(), data_dir, curve=True, ports=ports)
    tel = replace(cfg.telemetry, server_secret_key=str(secret_key), authorized_keys_dir=str(authorized_dir))
    return replace(cfg, vehicle_id=vehicle_id, telemetry=tel, logging=LoggingConfig(level="WARNING", file=str(log_file)))


def ground_config(vehicles: Sequence[tuple[Any, Path]], folder: Path, ground_secret: Path, **over: Any) -> Any:
    """One ground station subscribed to every ``(vehicle config, its public key file)``; files under ``folder``."""
    from ground_station.settings import GroundConfig, VehicleLinkConfig

    links = [VehicleLinkConfig(vehicle_id=v.vehicle_id, pub_endpoint=v.telemetry.pub_endpoint,
                               replay_endpoint=v.telemetry.replay_endpoint, server_public_key=str(public),
                               sync_endpoint=v.telemetry.sync_endpoint) for v, public in vehicles]
    settings = dict(db_path=str(folder / "flight_log.sqlite"), vehicles=links, curve=True,
                    client_secret_key=str(ground_secret), dashboard_port=0, stats_interval_s=0.0,
                    post_flight_dir=str(folder / "post_flight"), post_flight_memory=str(folder / "ground_memory.sqlite"),
                    lesson_delivery_ledger=str(folder / "deliveries.sqlite"),
                    sync_timeout_s=10.0)
    return GroundConfig(**{**settings, **over})


@dataclass
class FlyProcess:
    """`aerie fly --config C --mission M --json J` as a child process; its lines go to ``say`` with a label."""

    config: Path
    mission: Path
    outcome_file: Path
    label: str
    say: Callable[[str], None] = print
    proc: subprocess.Popen | None = None
    lines: list[str] = field(default_factory=list)
    _echo: threading.Thread | None = None

    def start(self) -> "FlyProcess":
        cmd = [sys.executable, "-m", "aerie", "fly", "--config", str(self.config), "--mission", str(self.mission),
               "--json", str(self.outcome_file)]
        self.proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1)
        self._echo = threading.Thread(target=self._pump, name=f"echo-{self.label}", daemon=True)
        self._echo.start()
        return self

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            self.say(f"  [{self.label}] {line.rstrip()}")

    def wait(self, timeout_s: float | None = None) -> tuple[int, dict[str, Any] | None]:
        """Exit status and the flight outcome (None when the process wrote none)."""
        assert self.proc is not None
        rc = self.proc.wait(timeout_s)
        if self._echo is not None:
            self._echo.join(5.0)
        if not self.outcome_file.exists():
            return rc, None
        return rc, json.loads(self.outcome_file.read_text())

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (the supervisor lands), then kill when it does not end in time."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5.0)
