"""SimVehicleProcess and the CLI: ready line, control channel, stop/kill."""

import json
import signal
import subprocess
import sys
import time

from sim.vehicle import SimVehicleProcess
from sim.vehicle.process import REPO_ROOT, free_udp_port


def test_cli_prints_ready_line_and_stops_on_sigterm():
    gcs = free_udp_port()
    p = subprocess.Popen([sys.executable, "-m", "sim.vehicle.cli", "--home", "60.17,24.94", "--gcs-port", str(gcs),
                          "--port", "0", "--seed", "3", "--param", "MPC_TKO_SPEED=2.5"],
                         cwd=str(REPO_ROOT), stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(p.stdout.readline())
        assert ready["event"] == "ready" and ready["gcs_port"] == gcs and ready["port"] > 0
        assert ready["home"][:2] == [60.17, 24.94]
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(5) == 0
        p.stdout.close()


def test_unknown_param_override_fails_cleanly():
    r = subprocess.run([sys.executable, "-m", "sim.vehicle.cli", "--port", "0", "--param", "NOPE_NOPE=1"],
                       cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=20)
    assert r.returncode == 2 and "NOPE_NOPE" in r.stderr


def test_control_channel_truth_faults_and_kill():
    v = SimVehicleProcess(home=(60.17, 24.94, 20.0), params={"MIS_TAKEOFF_ALT": 3.0}).start()
    try:
        t = v.truth()
        assert t["armed"] is False and t["landed_state"] == 1 and abs(t["lat"] - 60.17) < 1e-5
        assert t["home"]["alt"] == 20.0
        v.set_battery(33.0)
        v.set_wind(1.0, 2.0, gust=0.3)
        v.set_param("COM_OF_LOSS_T", 0.5)
        time.sleep(0.3)
        t = v.truth()
        assert abs(t["battery_pct"] - 33.0) < 0.2
        st = v.stats()
        assert st["stats"]["tx_messages"] > 0 and st["cpu_s"] >= 0
    finally:
        v.kill()
    assert v.proc.returncode == -signal.SIGKILL
