"""``aerie status``: is this vehicle's install healthy, and is its supervisor?

`make flash` runs this on the Jetson before it points ``current`` at a new
release and again after restarting the service, and rolls back when it fails,
so every check here must be one that can honestly fail. Two groups:

* offline checks, which need no running supervisor: the config loads, every
  model file present verifies against its checksum (the same rule as
  ``aerie models verify``), the models the config selects are present, the
  memory file opens (created and migrated if absent, as the supervisor would),
  and the configured map file loads whole (``map.path``; none configured passes);
* the supervisor's own report, read from its local status socket: bridge
  connected, models loaded, memory open. The supervisor (``aerie fly``,
  issue #6) is what serves that socket; until it runs there is nothing to ask,
  and ``--offline`` says not to ask.

The socket protocol is deliberately tiny so the supervisor can serve it from
any thread: connect to the Unix socket, read one JSON line, close. The line is
a ``contract.status_report.StatusReport``: each live check with ``ok`` and
``detail``, and the vehicle's typed ``armed`` flag, which ``--armed`` prints
for `make flash`.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from contract.status_report import MAX_REPORT_BYTES, StatusReport, reports

STATUS_SOCKET_NAME = "supervisor.sock"
SUPERVISOR_CHECKS = ("bridge", "models", "memory")
# Reported by the supervisor but not part of health: its vehicle, with the typed `armed` flag that
# `make flash` asks for (`--armed`) before restarting the service.
VEHICLE_CHECK = "vehicle"


@dataclass(frozen=True)
class Check:
    """One named health check and why it passed or failed."""

    name: str
    ok: bool
    detail: str


def check_config(config_path: str | None) -> tuple[Check, Any]:
    """Load the config; return the check and the config (None when it failed)."""
    from onboard.config import load_config
    from common.typed_config import ConfigError

    try:
        cfg = load_config(config_path)
    except ConfigError as exc:
        return Check("config", False, str(exc)), None
    return Check("config", True, f"{config_path or 'built-in defaults'} loads"), cfg


def selected_models(inference: Any) -> list[str]:
    """Manifest names the config will load at start-up (must be present)."""
    names = [inference.llm_model]
    if inference.detector == "ssdlite":
        names.append(inference.ssdlite_model)
    elif inference.detector == "grounding_dino":
        names.append(inference.grounding_dino_model)
    if inference.segmenter == "sam":
        names += [inference.sam_encoder_model, inference.sam_decoder_model]
    if inference.vlm_model:
        names.append(inference.vlm_model)
    return [n for n in names if n]


def check_models(cfg: Any, manifest_override: str | None = None) -> Check:
    """Every present model file verifies; every selected one is present."""
    from onboard.inference.manifest import ManifestError, load_manifest, model_dir, verify_model

    try:
        manifest = load_manifest(manifest_override or cfg.inference.manifest or None)
    except ManifestError as exc:
        return Check("models", False, str(exc))
    directory = model_dir(cfg.inference.model_dir)
    wanted = set(selected_models(cfg.inference))
    problems, ok = [], []
    for name, spec in manifest.models.items():
        r = verify_model(spec, directory)
        if r.status == "mismatch":
            problems.append(f"{name}: {r.path} sha256 {r.actual} != expected {r.expected}")
        elif r.status == "absent" and name in wanted:
            problems.append(f"{name}: {r.path} is absent but the config selects it")
        elif r.status in ("ok", "unpinned"):
            ok.append(f"{name}({r.status})")
    if problems:
        return Check("models", False, "; ".join(problems))
    return Check("models", True, f"{directory}: {', '.join(ok) or 'no model files'}")


def check_memory(cfg: Any) -> Check:
    """The memory file opens, integrity-checked and migrated, with sqlite-vec loaded."""
    from onboard.memory.embedder import MINILM_DIM
    from onboard.memory.schema import SchemaError, open_memory_file
    from onboard.memory.settings import memory_file_path
    from onboard.memory.sqlite_vec_db import SqliteVecUnavailable, find_backend

    path = memory_file_path(cfg.data_dir, cfg.memory)
    try:
        backend = find_backend()
        conn, report = open_memory_file(
            path, backend, dim=MINILM_DIM, timeout_s=cfg.memory.writer_timeout_s,
            full_check=cfg.memory.full_integrity_check_on_open, move_aside_corrupt=cfg.memory.move_aside_corrupt,
        )
    except (SchemaError, SqliteVecUnavailable, OSError) as exc:
        return Check("memory", False, f"{path}: {exc}")
    conn.close()
    return Check("memory", True, f"{path} opens (schema v{report.to_version})")


def check_map(cfg: Any) -> Check:
    """The configured map file loads: this format, undamaged, and of `map.extract_sha256`'s extract if set."""
    import time

    from onboard.map.map_file import MapFileError, load_map
    from onboard.map.settings import map_file_path

    path = map_file_path(cfg.data_dir, cfg.map)
    if path is None:
        return Check("map", True, "no map configured (map.path is empty)")
    t0 = time.perf_counter()
    try:
        m = load_map(path, expect_sha256=cfg.map.extract_sha256 or None, max_inflated_bytes=cfg.map.max_inflated_bytes)
    except MapFileError as exc:
        return Check("map", False, str(exc))
    return Check("map", True, f"{path}: {m.name}, {m.graph.n_nodes} waypoints, {len(m.landmarks)} landmarks, "
                              f"extract {m.header.extract_sha256[:12]}; loads in {1e3 * (time.perf_counter() - t0):.0f} ms")


def default_socket(cfg: Any) -> Path:
    """Where the supervisor serves its status: next to the vehicle's other files."""
    return Path(cfg.data_dir).expanduser() / STATUS_SOCKET_NAME


def ask_supervisor(sock_path: Path, timeout_s: float = 2.0) -> StatusReport:
    """The running supervisor's report; OSError when none answers, PayloadError for an answer that is no report."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        s.connect(str(sock_path))
        data = b""
        while not data.endswith(b"\n") and len(data) <= MAX_REPORT_BYTES:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return reports().unpack(data.rstrip(b"\n"))


def read_supervisor(sock_path: Path, timeout_s: float = 2.0) -> list[Check]:
    """Ask the running supervisor; a missing or silent socket is a failed check."""
    return supervisor_checks(sock_path, *_read_report(sock_path, timeout_s))


def _read_report(sock_path: Path, timeout_s: float) -> tuple[StatusReport | None, str]:
    """The report, or None and why there is none."""
    if not sock_path.exists():
        return None, f"not running (no status socket at {sock_path}; `aerie fly` serves it, issue #6)"
    try:
        return ask_supervisor(sock_path, timeout_s), ""
    except (OSError, ValueError) as exc:   # PayloadError is a ValueError
        return None, f"{sock_path}: no valid answer ({exc})"


def supervisor_checks(sock_path: Path, report: StatusReport | None, why: str = "") -> list[Check]:
    if report is None:
        return [Check("supervisor", False, why)]
    checks = [Check("supervisor", True, f"answering on {sock_path}")]
    if report.vehicle is not None:
        checks.append(Check(VEHICLE_CHECK + " (live)", True, report.vehicle.detail))
    for name in SUPERVISOR_CHECKS:
        item = report.check(name)
        checks.append(Check(name + " (live)", bool(item and item.ok), item.detail if item else "not reported"))
    return checks


def vehicle_armed(report: StatusReport | None) -> str:
    """"armed", "disarmed" or "unknown" (no supervisor answering, or one that cannot tell), from the typed flag."""
    armed = None if report is None or report.vehicle is None else report.vehicle.armed
    return "unknown" if armed is None else ("armed" if armed else "disarmed")


def run_checks(config_path: str | None, *, offline: bool, manifest: str | None = None,
               sock_path: str | None = None) -> list[Check]:
    checks: list[Check] = []
    cfg_check, cfg = check_config(config_path)
    checks.append(cfg_check)
    if cfg is None:
        return checks
    checks.append(check_models(cfg, manifest))
    checks.append(check_memory(cfg))
    checks.append(check_map(cfg))
    if not offline:
        checks += read_supervisor(Path(sock_path) if sock_path else default_socket(cfg))
    return checks


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie status", description="Health of this vehicle's install and its supervisor")
    parser.add_argument("--config", default=None, help="config file (default: built-in defaults)")
    parser.add_argument("--manifest", default=None, help="override inference.manifest")
    parser.add_argument("--offline", action="store_true", help="do not ask the supervisor (it need not be running)")
    parser.add_argument("--socket", default=None, help=f"supervisor status socket (default: data_dir/{STATUS_SOCKET_NAME})")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    parser.add_argument("--armed", action="store_true",
                        help="only ask the running supervisor whether its vehicle is armed: prints armed, disarmed or unknown")
    args = parser.parse_args(argv)
    if args.armed:
        from onboard.config import load_config

        sock = Path(args.socket) if args.socket else default_socket(load_config(args.config))
        report, why = _read_report(sock, 2.0)
        if report is None:
            print(why, file=sys.stderr)
        print(vehicle_armed(report))
        return 0
    checks = run_checks(args.config, offline=args.offline, manifest=args.manifest, sock_path=args.socket)
    healthy = all(c.ok for c in checks)
    if args.json:
        print(json.dumps({"healthy": healthy, "checks": [asdict(c) for c in checks]}))
    else:
        for c in checks:
            print(f"{'OK  ' if c.ok else 'FAIL'} {c.name}: {c.detail}")
        print("healthy" if healthy else "UNHEALTHY")
    return 0 if healthy else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
