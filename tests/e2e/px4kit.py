"""A real PX4 SITL (the SIH quadrotor, no Gazebo) as a test's vehicle, with SimRig's vehicle interface.

Shared by the ``sitl`` tests. ``AERIE_PX4_SITL`` names the PX4 binary
(``…/build/px4_sitl_sih/bin/px4``); without it the tests skip. Instance N
(``px4 -i N``) is MAVLink system id N+1 and sends its API link to UDP 14540+N on
loopback (PX4's POSIX start scripts); each instance runs in a working folder of
its own (parameters, logs, dataman), so no run inherits another's parameters.
PX4's own state is read with its client tools (``px4-listener``), not from what
the supervisor under test believes.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

PX4_BIN = os.environ.get("AERIE_PX4_SITL", "")
# The first instance number the tests use (then +1 for a second vehicle): another PX4 on this host may hold
# 0 and 1 (their ports 14540/14541 and 14580/14581).
FIRST_INSTANCE = int(os.environ.get("AERIE_PX4_INSTANCE", "0"))
needs_px4 = [pytest.mark.sitl,
             pytest.mark.skipif(not PX4_BIN, reason="set AERIE_PX4_SITL to a PX4 SITL binary (px4_sitl_sih/bin/px4)")]

# vehicle_status.nav_state values (PX4 msg/versioned/VehicleStatus.msg)
NAV_LOITER, NAV_RTL, NAV_OFFBOARD, NAV_LAND = 4, 5, 14, 18


class PX4Sitl:
    """A PX4 SITL process (real PX4; SIH simulates the airframe inside it)."""

    def __init__(self, binary: str, lat: float, lon: float, log: Path, instance: int = FIRST_INSTANCE,
                 workdir: Path | None = None) -> None:
        env = dict(os.environ, PX4_HOME_LAT=f"{lat:.7f}", PX4_HOME_LON=f"{lon:.7f}", PX4_HOME_ALT="10.0",
                   PX4_SIM_MODEL="sihsim_quadx")
        self.binary = binary
        self.instance = instance
        self.log = log
        self.mavsdk_url = f"udpin://0.0.0.0:{14540 + instance}"
        workdir = workdir or log.parent / f"px4_{instance}"
        workdir.mkdir(parents=True, exist_ok=True)
        etc = Path(binary).resolve().parent.parent / "etc"
        self._out = open(log, "w")
        self.proc = subprocess.Popen([binary, "-i", str(instance), "-d", str(etc)], cwd=workdir, env=env,
                                     stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True)

    def console(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "Ready for takeoff" in self.console():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        raise AssertionError(f"PX4 did not become ready:\n{self.console()[-3000:]}")

    def tool(self, name: str, *args: str) -> str:
        """A PX4 client command (``px4-listener``, ``px4-commander``) against this instance; its output."""
        exe = Path(self.binary).with_name(f"px4-{name}")
        out = subprocess.run([str(exe), "--instance", str(self.instance), *args], capture_output=True, text=True,
                             timeout=30)
        return out.stdout + out.stderr

    def topic(self, name: str) -> dict[str, str]:
        """The last message of a uORB topic, read from PX4 itself (``px4-listener``).

        Why not the console or MAVLink: a test must know PX4's own navigation state,
        position and clock, not a text PX4 may word differently next release.
        """
        fields: dict[str, str] = {}
        for line in self.tool("listener", name, "-n", "1").splitlines():
            key, sep, value = line.strip().partition(":")
            if sep and key and " " not in key and key not in fields:
                fields[key] = value.strip().split(" ")[0]
        return fields

    def position(self) -> tuple[float, float, float]:
        """PX4's own estimate: (lat, lon, alt AMSL) from vehicle_global_position."""
        g = self.topic("vehicle_global_position")
        return float(g.get("lat", "nan")), float(g.get("lon", "nan")), float(g.get("alt", "nan"))

    def landed(self) -> bool:
        """Disarmed and on the ground by PX4's own land detector and arming state."""
        return self.topic("vehicle_land_detected").get("landed") == "True" \
            and self.topic("vehicle_status").get("arming_state") == "1"

    def wait(self, predicate, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.5)
        raise AssertionError(f"PX4 instance {self.instance}: {what} not within {timeout_s:.0f} s\n"
                             f"{self.console()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._out.close()

    def close(self) -> None:
        self.stop()


def finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)
