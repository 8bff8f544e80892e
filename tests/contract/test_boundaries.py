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
}


def imported_roots(path: Path) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((alias.name.split(".")[0], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module.split(".")[0], node.lineno))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_what_it_may(package):
    offences = [f"{path.relative_to(ROOT)}:{line} imports {root}"
                for path in sorted((ROOT / package).rglob("*.py"))
                for root, line in sorted(imported_roots(path)) if root in FORBIDDEN[package]]
    assert not offences, "\n".join(offences)


def test_the_check_sees_lazy_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from sim.world import cache\n    import onboard.agent\n")
    assert {root for root, _ in imported_roots(probe)} == {"sim", "onboard"}
