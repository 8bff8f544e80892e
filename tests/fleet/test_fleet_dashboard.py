"""`aerie fleet` serves the ground station's dashboard and says where (issue 36.16: it was off, no URL said).

Real parts: the rig's simulated vehicle, world feed and `aerie ground` process; the URL
the rig says is fetched over HTTP. Nothing flies: the dashboard is up before any supervisor.
"""

from __future__ import annotations

import urllib.request

from sim.fleet_rig import FleetRig


def test_the_fleet_rig_says_its_dashboard_url_and_the_dashboard_answers(tmp_path) -> None:
    said: list[str] = []
    rig = FleetRig(1, tmp_path / "fleet", say=said.append, dashboard=True)
    try:
        rig.start()
        assert rig.dashboard_url.startswith("http://127.0.0.1:"), (said, (tmp_path / "fleet" / "ground.log").read_text())
        assert f"dashboard: {rig.dashboard_url}" in said
        with urllib.request.urlopen(rig.dashboard_url, timeout=30) as reply:
            assert reply.status == 200 and b"<html" in reply.read(4096).lower()
    finally:
        rig.close()
    assert rig.ground_config.dashboard_enabled

