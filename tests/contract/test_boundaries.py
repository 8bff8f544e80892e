"""Which package may import which: the process boundaries, checked on the source.

``contract`` is what crosses between processes and depends on none of them;
``common`` (config loading, logging, geodesy) sits above it and below them;
``firmware_bridge`` sits below every model and imports no agent or simulator;
``onboard`` never imports the simulator or the ground station. Imports inside
functions count: a lazy import crosses the boundary as surely as a top-level one.

Every socket between processes speaks a ``contract`` module's typed, versioned
messages: both sides of each boundary import it, none packs its own msgpack,
and no map keyed by ``"op"`` or ``"cmd"`` (the untyped requests these sockets
spoke before) is built anywhere outside the tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "contract": {"common", "onboard", "ground_station", "sim", "firmware_bridge", "aerie", "deploy"},
    "common": {"onboard", "ground_station", "sim", "firmware_bridge", "aerie", "deploy"},
    "firmware_bridge": {"onboard", "sim", "ground_station", "aerie"},
    "onboard": {"sim", "ground_station"},
    "ground_station": {"onboard", "sim", "firmware_bridge", "aerie"},
}

# Vehicle code the ground station genuinely runs, each named with its reason in docs/ARCHITECTURE.md
# ("What the ground station runs of the vehicle's code"); anything else it needs comes from contract/.
ALLOWED = {
    "ground_station": {
        "onboard.memory.experience_store",  # lessons are built in a store of the vehicle's own format
        "onboard.memory.embedder",          # ... embedded by the vehicle's own model, so vectors match
        "onboard.memory.bundle",            # ... and exported from that store as the vehicles import them
        "onboard.map.map_file",             # the city under the dashboard map: the vehicles' own map file
    },
}


# Each process boundary: the modules on its sides and the contract module whose messages they exchange.
BOUNDARIES = {
    "telemetry": (("onboard/telemetry/publisher.py", "ground_station/ingest.py"), "contract.envelope"),
    "world feed": (("sim/world/observation_server.py", "onboard/supervisor/world_link.py"), "contract.world_feed"),
    "replay and ack": (("onboard/telemetry/replay_server.py", "ground_station/ingest.py"), "contract.replay"),
    "memory sync": (("onboard/telemetry/memory_sync.py", "ground_station/memory_sync.py"), "contract.memory_sync"),
    "simulator control": (("sim/vehicle/vehicle.py", "sim/vehicle/process.py"), "contract.sim_control"),
    "status socket": (("onboard/supervisor/status_server.py", "onboard/status.py"), "contract.status_report"),
    "fleet channel": (("onboard/fleet/channel.py", "sim/team_search.py"), "contract.fleet_frame"),
    "exploration share": (("sim/exploration/discovery_wire.py",), "contract.exploration_discovery"),
}
SOURCE_PACKAGES = ("onboard", "firmware_bridge", "sim", "ground_station", "aerie", "deploy")


def imported_modules(path: Path) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module, node.lineno))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_what_it_may(package):
    allowed = ALLOWED.get(package, set())
    offences = [f"{path.relative_to(ROOT)}:{line} imports {module}"
                for path in sorted((ROOT / package).rglob("*.py"))
                for module, line in sorted(imported_modules(path))
                if module.split(".")[0] in FORBIDDEN[package] and module not in allowed]
    assert not offences, "\n".join(offences)


def test_every_allowed_crossing_is_named_in_the_architecture():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [m for modules in ALLOWED.values() for m in modules if f"`{m}`" not in text]
    assert not missing, f"docs/ARCHITECTURE.md does not name {missing}"


def test_the_check_sees_lazy_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from sim.world import cache\n    import onboard.agent\n")
    assert {module for module, _ in imported_modules(probe)} == {"sim.world", "onboard.agent"}


@pytest.mark.parametrize("boundary", sorted(BOUNDARIES))
def test_every_boundary_speaks_its_contract_module(boundary):
    sides, contract_module = BOUNDARIES[boundary]
    for side in sides:
        modules = {module for module, _ in imported_modules(ROOT / side)}
        assert contract_module in modules, f"{side} ({boundary}) does not import {contract_module}"
        assert "msgpack" not in modules, f"{side} ({boundary}) packs its own msgpack instead of the contract's frames"


def untyped_requests(path: Path) -> list[int]:
    """Lines building a map keyed by "op" or "cmd": the untyped requests of the sockets before contract/."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Dict)
            and any(isinstance(k, ast.Constant) and k.value in ("op", "cmd") for k in node.keys)]


def test_no_untyped_request_is_built_outside_the_tests(tmp_path):
    offences = [f"{path.relative_to(ROOT)}:{line}" for pkg in SOURCE_PACKAGES
                for path in sorted((ROOT / pkg).rglob("*.py")) for line in untyped_requests(path)]
    assert not offences, "maps keyed by op/cmd: " + ", ".join(offences)
    probe = tmp_path / "probe.py"
    probe.write_text('def f(sock):\n    sock.send({"op": "status"})\n')
    assert untyped_requests(probe) == [2]
