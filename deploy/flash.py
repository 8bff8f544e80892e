"""The flash plan: check, copy, install, verify, activate, restart, health-check.

Order matters for safety: a release becomes ``current`` only after its own
venv passed ``aerie status --offline`` (config loads, model checksums, memory
opens). Only then is the unit verified, the service restarted and the live
supervisor asked; a failure there rolls ``current`` back to the release that
was current before, restarts it, and says why. ``dry_run`` runs only the
read-only probes and prints every step that would change the target.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from deploy.history import parse_history, rollback_target
from deploy.prereqs import blocking, has, parse_checks
from deploy.release import REPO, ReleaseError, build_wheel, stage_release
from deploy.release_map import release_map
from deploy.target import REMOTE_SCRIPT, StepOutput, Target, remote_command, run_remote
from deploy.unit import UnitSettings, autopilot_device_from_url, render_unit


@dataclass(frozen=True)
class FlashOptions:
    target: Target
    config: Path
    prefix: str = "/opt/aerie"
    dry_run: bool = False
    allow_non_jetson: bool = False
    # Install the wheel without dependencies: only where they are already
    # importable from the system site-packages (the test target); a Jetson
    # resolves them normally and builds llama-cpp-python with CUDA.
    no_deps: bool = False
    target_python: str = "python3"
    min_free_mb: int = 2048
    autopilot_device: str | None = None
    memory_max: str = "3G"
    cpu_quota: str = "300%"
    watchdog_s: int = 10
    live_health_timeout_s: int = 60
    work_dir: Path = REPO / "build" / "flash"
    manifest: Path | None = None
    model_dir: Path | None = None
    # Restart the service even while the running supervisor reports its vehicle armed (FORCE=1).
    force: bool = False


@dataclass
class Report:
    """What each step did: changed, unchanged, skipped (with why), failed, or would-do."""

    lines: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, step: str, outcome: str, detail: str = "") -> None:
        self.lines.append((step, outcome, detail))
        print(f"[flash] {step:12} {outcome:10} {detail}".rstrip(), flush=True)

    def outcomes(self) -> dict[str, str]:
        return {s: o for s, o, _ in self.lines}


class FlashFailed(RuntimeError):
    pass


def _echo_log(out: StepOutput) -> None:
    for line in out.log:
        if line.strip():
            print(f"    {line}", flush=True)


def _require(out: StepOutput, step: str) -> StepOutput:
    if out.returncode != 0:
        _echo_log(out)
        raise FlashFailed(f"{step} failed on the target (exit {out.returncode})")
    return out


def probe(target: Target, prefix: str) -> tuple[str | None, dict[str, str], list[str]]:
    """(current release, {release: state}, history lines) — read-only."""
    out = _require(run_remote(target, "probe", prefix), "probe")
    current, releases, history = None, {}, []
    for r in out.results:
        key, _, value = r.partition("=")
        if key == "current":
            current = value or None
        elif key == "release":
            rid, _, state = value.partition(" ")
            releases[rid] = state
        elif key == "history":
            history.append(value)
    return current, releases, history


def _would(report: Report, step: str, what: str, command: list[str] | str) -> None:
    report.add(step, "would", what)
    print(f"    $ {command if isinstance(command, str) else subprocess.list2cmdline(command)}", flush=True)


def _remote_display(target: Target, step: str, *args: str) -> str:
    return f"{subprocess.list2cmdline(target.ssh_argv(remote_command(step, *args)))} < {REMOTE_SCRIPT.relative_to(REPO)}"


def check_prereqs(opts: FlashOptions, report: Report):
    out = run_remote(opts.target, "prereqs", opts.target_python, opts.prefix, str(opts.min_free_mb))
    if out.returncode != 0 and not out.checks:
        _echo_log(out)
        raise FlashFailed(f"cannot run the prerequisite check on {opts.target.host} (ssh exit {out.returncode})")
    prereqs = parse_checks(out.checks, allow_non_jetson=opts.allow_non_jetson)
    for p in prereqs:
        report.add(f"prereq:{p.name}", p.status, p.detail)
    bad = blocking(prereqs)
    if bad:
        raise FlashFailed("prerequisites missing on the target: " + "; ".join(f"{p.name}: {p.detail}" for p in bad))
    return prereqs


def flash(opts: FlashOptions) -> Report:
    report = Report()
    t, prefix = opts.target, opts.prefix.rstrip("/")

    # 1. Local: wheel + staged release, named by content.
    source_cfg = yaml.safe_load(opts.config.read_text(encoding="utf-8")) or {}
    inference = source_cfg.get("inference") or {}
    manifest = opts.manifest or Path(inference.get("manifest") or REPO / "models" / "manifest.yaml")
    model_dir = opts.model_dir or Path(inference.get("model_dir") or "~/.cache/aerie/models").expanduser()
    device = opts.autopilot_device
    if device is None:
        device = autopilot_device_from_url(str((source_cfg.get("link") or {}).get("url", "")))
    unit_text = render_unit(UnitSettings(prefix=prefix, autopilot_device=device, watchdog_s=opts.watchdog_s,
                                         memory_max=opts.memory_max, cpu_quota=opts.cpu_quota))
    wheel = build_wheel(REPO, opts.work_dir)
    report.add("wheel", "ready", f"{wheel} (cached by source hash)")
    map_path, map_detail = release_map(source_cfg, opts.work_dir)
    report.add("map", "ready", map_detail)
    rel = stage_release(wheel=wheel, config_path=opts.config, manifest_path=manifest, local_model_dir=model_dir,
                        unit_text=unit_text, prefix=prefix, work_dir=opts.work_dir, map_path=map_path)
    report.add("stage", "built", f"release {rel.release_id}: models {', '.join(rel.models) or 'none'}"
               + (f"; not present locally: {', '.join(rel.models_absent)}" if rel.models_absent else ""))
    rid, rdir = rel.release_id, f"{prefix}/releases/{rel.release_id}"

    # 2. Target prerequisites and state (read-only, also in a dry run).
    prereqs = check_prereqs(opts, report)
    current, releases, history = probe(t, prefix)
    report.add("probe", "ok", f"current={current or 'none'}; releases: {', '.join(f'{k}({v})' for k, v in releases.items()) or 'none'}")
    state = releases.get(rid)
    cuda = has(prereqs, "cuda") and not opts.no_deps

    if opts.dry_run:
        _dry_run_plan(opts, report, rel, state, current, cuda)
        return report

    # 3. Copy, install, check, activate.
    out = _require(run_remote(t, "mkdirs", prefix, rid), "mkdirs")
    report.add("mkdirs", out.result, rdir)
    if state in ("installed", "healthy"):
        report.add("copy", "unchanged", f"{rdir} already complete")
    else:
        proc = subprocess.run(t.rsync_argv(rel.stage_dir, rdir), capture_output=True, text=True)
        if proc.returncode != 0:
            raise FlashFailed(f"rsync to {t.host}:{rdir} failed:\n{proc.stderr}")
        changes = [line for line in proc.stdout.splitlines() if line.strip()]
        report.add("copy", "copied" if changes else "unchanged", f"{len(changes)} changes into {rdir}")
    out = _require(run_remote(t, "install", prefix, rid, opts.target_python, str(int(opts.no_deps)), str(int(cuda))), "install")
    _echo_log(out)
    report.add("venv", out.result, f"{rdir}/venv (--system-site-packages{', --no-deps' if opts.no_deps else ''})")
    for skip in out.skips:
        name, _, why = skip.partition(" ")
        report.add(name, "skipped", why)
    out = _require(run_remote(t, "engines", prefix, rid), "engines")
    _echo_log(out)
    report.add("trt-engines", out.result, "; ".join(s.partition(" ")[2] for s in out.skips))

    out = run_remote(t, "health", prefix, rid)
    _echo_log(out)
    if out.result != "healthy":
        report.add("health", "FAILED", f"release {rid}: aerie status --offline failed (above)")
        keep = current or "none"
        report.add("rollback", "kept", f"current stays at {keep}: {rid} never became current")
        raise FlashFailed(f"release {rid} is unhealthy; current stays at {keep}")
    report.add("health", "ok", "aerie status --offline: config, model checksums, memory, map")

    refuse_if_armed(opts, report, run_remote(t, "airborne", prefix, rid).result)
    out = _require(run_remote(t, "activate", prefix, rid), "activate")
    activated = out.result.startswith("activated")
    report.add("activate", "changed" if activated else "unchanged", f"{prefix}/current -> releases/{rid}")

    out = _require(run_remote(t, "unit-verify", prefix), "unit-verify")
    _echo_log(out)
    if out.result == "invalid":
        report.add("unit-verify", "FAILED", "systemd-analyze verify rejected the unit")
        _roll_back(opts, report, rid, "the unit failed systemd-analyze verify")
    report.add("unit-verify", out.result, "systemd-analyze verify aerie.service" if out.result == "verified" else "; ".join(out.skips))

    out = _require(run_remote(t, "service", prefix, str(int(activated))), "service")
    _echo_log(out)
    report.add("service", out.result, "; ".join(s.partition(" ")[2] for s in out.skips))
    if out.result == "restarted":
        live = run_remote(t, "live-health", prefix, str(opts.live_health_timeout_s))
        _echo_log(live)
        if live.result != "healthy":
            report.add("live-health", "FAILED", "the supervisor did not report healthy")
            _roll_back(opts, report, rid, "the supervisor did not report healthy after restart")
        report.add("live-health", "ok", "aerie status over the supervisor socket")
    else:
        report.add("live-health", "skipped", "service not restarted (no systemd on target)" if out.result == "skipped" else "service unchanged")
    return report


def refuse_if_armed(opts: FlashOptions, report: Report, vehicle: str) -> None:
    """Never restart the service of an armed vehicle (its supervisor is flying it) unless forced.

    ``vehicle`` is what the running supervisor answered ("armed", "disarmed",
    "unknown" when none answers or it is too old to say). Asked just before
    ``current`` moves, so nothing on the target has changed when this refuses.
    """
    if vehicle != "armed":
        report.add("airborne", "ok", f"vehicle {vehicle}")
    elif opts.force:
        report.add("airborne", "FORCED", "vehicle armed: restarting anyway (FORCE=1); the supervisor lands it on SIGTERM")
    else:
        report.add("airborne", "REFUSED", "the running supervisor reports its vehicle armed")
        raise FlashFailed("the vehicle is armed: not restarting its supervisor (land first, or FORCE=1); "
                          "nothing was changed on the target")


def _roll_back(opts: FlashOptions, report: Report, failed: str, why: str) -> None:
    """Return ``current`` to the release before it (from the history), restart, raise."""
    t, prefix = opts.target, opts.prefix.rstrip("/")
    _require(run_remote(t, "mark-failed", prefix, failed), "mark-failed")
    current, releases, history = probe(t, prefix)
    previous = rollback_target(parse_history(history), current, releases)
    if previous:
        _require(run_remote(t, "activate", prefix, previous), "rollback activate")
        out = _require(run_remote(t, "service", prefix, "1"), "rollback service")
        report.add("rollback", "done", f"current -> {previous} ({out.result}): {why}")
    else:
        report.add("rollback", "none", f"no healthy previous release to return to; current stays at {current}: {why}")
    raise FlashFailed(f"release {failed} rolled back: {why}")


def _dry_run_plan(opts: FlashOptions, report: Report, rel, state: str | None, current: str | None, cuda: bool) -> None:
    t, prefix, rid = opts.target, opts.prefix.rstrip("/"), rel.release_id
    rdir = f"{prefix}/releases/{rid}"
    print("[flash] DRY RUN: nothing below is executed on the target", flush=True)
    _would(report, "mkdirs", f"create {rdir}" if state is None else f"{rdir} exists (unchanged)", _remote_display(t, "mkdirs", prefix, rid))
    _would(report, "copy", f"rsync {rel.stage_dir} -> {rdir}" if state not in ("installed", "healthy") else "release complete (unchanged)",
           t.rsync_argv(rel.stage_dir, rdir))
    _would(report, "venv", f"python -m venv --system-site-packages {rdir}/venv; pip install {'--no-deps ' if opts.no_deps else ''}{rel.wheel.name}"
           + (" with CMAKE_ARGS=-DGGML_CUDA=on" if cuda else ""), _remote_display(t, "install", prefix, rid, opts.target_python, str(int(opts.no_deps)), str(int(cuda))))
    _would(report, "trt-engines", "aerie models build-engine for each ONNX model (skipped without TensorRT)", _remote_display(t, "engines", prefix, rid))
    _would(report, "health", f"{rdir}/venv/bin/python -m onboard.status --offline --config {rdir}/config.yaml", _remote_display(t, "health", prefix, rid))
    _would(report, "airborne", "ask the running supervisor whether its vehicle is armed; refuse unless FORCE=1"
           + (" (FORCE=1 given)" if opts.force else ""), _remote_display(t, "airborne", prefix, rid))
    _would(report, "activate", f"{prefix}/current -> releases/{rid}" + (" (unchanged)" if current == rid else f" (was {current or 'none'})"),
           _remote_display(t, "activate", prefix, rid))
    _would(report, "unit-verify", "systemd-analyze verify the release's aerie.service", _remote_display(t, "unit-verify", prefix))
    _would(report, "service", "install/enable aerie.service, restart (skipped without systemd)", _remote_display(t, "service", prefix, "1"))
    _would(report, "live-health", "aerie status over the supervisor socket; roll back on failure", _remote_display(t, "live-health", prefix, str(opts.live_health_timeout_s)))


def rollback(target: Target, prefix: str, *, dry_run: bool = False) -> Report:
    """`make rollback`: return to the release that was current before this one."""
    report = Report()
    prefix = prefix.rstrip("/")
    current, releases, history = probe(target, prefix)
    prev = rollback_target(parse_history(history), current, releases)
    if prev is None:
        report.add("rollback", "FAILED", f"no healthy previous release recorded for current={current or 'none'}")
        raise FlashFailed("nothing to roll back to")
    if dry_run:
        _would(report, "rollback", f"{prefix}/current: {current} -> {prev}", _remote_display(target, "activate", prefix, prev))
        _would(report, "service", "restart aerie.service (skipped without systemd)", _remote_display(target, "service", prefix, "1"))
        return report
    _require(run_remote(target, "activate", prefix, prev), "activate")
    report.add("rollback", "changed", f"{prefix}/current: {current} -> {prev}")
    out = _require(run_remote(target, "service", prefix, "1"), "service")
    report.add("service", out.result, "; ".join(s.partition(" ")[2] for s in out.skips))
    return report


def print_error(exc: Exception) -> None:
    print(f"[flash] FAILED: {exc}", file=sys.stderr, flush=True)


__all__ = ["FlashOptions", "FlashFailed", "Report", "ReleaseError", "flash", "rollback", "print_error"]
