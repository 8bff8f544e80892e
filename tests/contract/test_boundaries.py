"""Which package may import which: the process boundaries, checked on the source.

``contract`` is what crosses between processes and depends on none of them;
``firmware_bridge`` sits below every model and imports no agent or simulator;
``onboard`` never imports the simulator or the ground station. Imports inside
functions count: a lazy import crosses the boundary as surely as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "contract": {"onboard", "ground_station", "sim", "firmware_bridge", "aerie"},
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
