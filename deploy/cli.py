"""Command line of `make flash` / `make rollback` (``python -m deploy ...``)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from deploy.flash import FlashFailed, FlashOptions, ReleaseError, flash, print_error, rollback
from deploy.release import REPO
from deploy.target import Target


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="user@host of the Jetson")
    p.add_argument("--port", type=int, default=22)
    p.add_argument("--ssh-opts", default="", help="extra ssh options, one shell-quoted string (e.g. '-i key -o UserKnownHostsFile=kh')")
    p.add_argument("--prefix", default="/opt/aerie", help="install prefix on the target (default /opt/aerie)")
    p.add_argument("--dry-run", action="store_true", help="print every step, change nothing on the target")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy", description="Deploy Aerie to a Jetson over SSH")
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("flash", help="build, copy, install, health-check, activate; roll back on failure")
    _common(f)
    f.add_argument("--config", default=str(REPO / "config.yaml"))
    f.add_argument("--allow-non-jetson", action="store_true", help="flash a target that is not a Jetson (warnings, not errors)")
    f.add_argument("--no-deps", action="store_true", help="pip install --no-deps: dependencies come from the system site-packages")
    f.add_argument("--target-python", default="python3", help="Python >= 3.10 on the target used for the venv")
    f.add_argument("--min-free-mb", type=int, default=2048)
    f.add_argument("--autopilot-device", default=None, help="device node of the autopilot link (default: from link.url)")
    f.add_argument("--memory-max", default="3G", help="systemd MemoryMax= of the supervisor")
    f.add_argument("--cpu-quota", default="300%", help="systemd CPUQuota= of the supervisor")
    f.add_argument("--watchdog-s", type=int, default=10, help="systemd WatchdogSec= (the supervisor feeds it)")
    f.add_argument("--model-dir", default=None, help="local model dir (default: the config's inference.model_dir)")
    f.add_argument("--work-dir", default=str(REPO / "build" / "flash"))
    f.add_argument("--force", action="store_true", help="restart the service even while its vehicle is armed (FORCE=1)")
    r = sub.add_parser("rollback", help="point current back at the previous release and restart")
    _common(r)
    args = parser.parse_args(argv)
    target = Target(args.target, args.port, tuple(shlex.split(args.ssh_opts)))
    try:
        if args.cmd == "rollback":
            rollback(target, args.prefix, dry_run=args.dry_run)
            return 0
        flash(FlashOptions(
            target=target, config=Path(args.config), prefix=args.prefix, dry_run=args.dry_run,
            allow_non_jetson=args.allow_non_jetson, no_deps=args.no_deps, target_python=args.target_python,
            min_free_mb=args.min_free_mb, autopilot_device=args.autopilot_device,
            memory_max=args.memory_max, cpu_quota=args.cpu_quota, watchdog_s=args.watchdog_s,
            work_dir=Path(args.work_dir), force=args.force, model_dir=Path(args.model_dir).expanduser() if args.model_dir else None,
        ))
    except (FlashFailed, ReleaseError) as exc:
        print_error(exc)
        return 1
    return 0
