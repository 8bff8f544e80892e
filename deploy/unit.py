"""Render the systemd unit for the supervisor from deploy/aerie.service.in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).with_name("aerie.service.in")


@dataclass(frozen=True)
class UnitSettings:
    prefix: str
    # The autopilot link's device node (e.g. /dev/ttyTHS1); empty for UDP links.
    autopilot_device: str = ""
    watchdog_s: int = 10
    memory_max: str = "3G"
    cpu_quota: str = "300%"


def device_unit(device: str) -> str:
    """systemd's name for a device node's unit: /dev/ttyTHS1 -> dev-ttyTHS1.device."""
    parts = [p.replace("-", "\\x2d") for p in device.strip("/").split("/") if p]
    return "-".join(parts) + ".device"


def autopilot_device_from_url(url: str) -> str:
    """The device node of a MAVSDK serial URL (serial:///dev/ttyTHS1:921600), else ''."""
    for scheme in ("serial://", "serialflow://"):
        if url.startswith(scheme):
            return url[len(scheme):].rsplit(":", 1)[0]
    return ""


def render_unit(s: UnitSettings) -> str:
    dev = device_unit(s.autopilot_device) if s.autopilot_device else ""
    text = TEMPLATE.read_text(encoding="utf-8")
    for key, value in {
        "PREFIX": s.prefix.rstrip("/"),
        "AFTER_DEVICE": dev,
        # BindsTo: unplugging the autopilot link stops the supervisor cleanly.
        "REQUIRES_DEVICE": f"BindsTo={dev}" if dev else "# (UDP autopilot link: no device to wait for)",
        "WATCHDOG_S": str(s.watchdog_s),
        "MEMORY_MAX": s.memory_max,
        "CPU_QUOTA": s.cpu_quota,
    }.items():
        text = text.replace(f"@{key}@", value)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
