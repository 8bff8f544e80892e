"""The layers inside ``onboard/``, no import circles, and no file over 400 lines without a reason.

The onboard packages, bottom to top (a package imports only from layers below its own):

1. ``vocab``: the shared vocabulary (folded text, landmark and goal names, compass words,
   spoken numbers, the observation and sighting types); imports no other onboard package.
2. ``map``, ``memory``, ``inference``, ``telemetry``, ``fleet``: the vehicle's own parts,
   independent of one another.
3. ``perception``, ``agent``: what the camera reads (on inference and the map) and how the
   agent decides (on the map, memory and inference), independent of each other: the agent
   never knows how a sighting was made, and perception takes the agent's rule for a goal's
   name as an argument.
4. ``mission``: the one mission runner, over the agent.
5. ``supervisor``, ``status``, ``config`` (``onboard/config.py``, ``config_reference.py``,
   ``field_comments.py``): the composition roots, which read every package's settings and
   wire the vehicle together; they may import one another (the circle check still holds).

A command module (``cli.py``, ``*_cli.py``, ``__main__.py``) is an entry point on top of
everything: it may import the configuration and any package, and nothing imports it.

Every import counts: at module level, inside a function, and under ``TYPE_CHECKING``. A
function-local import runs back up as surely as a top-level one, and a type named from above
ties the lower module to the upper one's meaning. Relative imports are resolved.

Circles: no module of ``onboard/``, ``sim/`` or ``deploy/`` may reach itself again through
imports (the same count of imports as above).

Size: no source file (``.py``, ``.js``) outside ``tests/`` is over 400 lines unless a line
near its top says ``Over 400 lines: <why>``; and a file that carries that line is over 400.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"vocab"}),
    frozenset({"map", "memory", "inference", "telemetry", "fleet"}),
    frozenset({"perception", "agent"}),
    frozenset({"mission"}),
    frozenset({"supervisor", "status", "config"}),
)
COMPOSITION_ROOTS = LAYERS[-1]
PLACED = frozenset().union(*LAYERS)
# Modules directly under onboard/ and the unit of the order they belong to.
TOP_MODULES = {"config": "config", "config_reference": "config", "field_comments": "config", "config_cli": "config",
               "status": "status"}
CIRCLE_FREE = ("onboard", "sim", "deploy")
SOURCE_PACKAGES = ("aerie", "common", "contract", "deploy", "firmware_bridge", "ground_station", "onboard", "sim")
MAX_LINES = 400
REASON = re.compile(r"Over 400 lines: \S+(\s+\S+){2,}")
REASON_WITHIN_LINES = 25


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules(root: Path, packages=SOURCE_PACKAGES) -> dict[str, Path]:
    return {module_name(p, root): p for pkg in packages if (root / pkg).is_dir()
            for p in sorted((root / pkg).rglob("*.py"))}


def imports_of(path: Path, name: str, known: set[str]) -> list[tuple[str, int]]:
    """(module, line) for every import in `path` that names one of `known`: module level, inside
    functions, under TYPE_CHECKING alike; ``from pkg import mod`` names the module ``pkg.mod``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            candidates = [[alias.name] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            candidates = [[f"{base}.{alias.name}", base] for alias in node.names]
        else:
            continue
        for options in candidates:
            target = next((m for opt in options for m in _enclosing(opt) if m in known), None)
            if target is not None and target != name:
                found.append((target, node.lineno))
    return found


def _enclosing(dotted: str):
    """`a.b.c`, then `a.b`, then `a`: the longest name that is a module wins."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        yield ".".join(parts[:n])


def import_graph(root: Path = ROOT, packages=SOURCE_PACKAGES) -> dict[str, list[tuple[str, int]]]:
    modules = source_modules(root, packages)
    known = set(modules)
    return {name: imports_of(path, name, known) for name, path in modules.items()}


def onboard_unit(module: str) -> str | None:
    """The unit of the layer order a module of onboard/ belongs to (None: not in onboard/)."""
    parts = module.split(".")
    if parts[0] != "onboard" or len(parts) < 2:
        return None
    return TOP_MODULES.get(parts[1], parts[1]) if len(parts) == 2 else parts[1]


def is_entry_point(module: str) -> bool:
    last = module.split(".")[-1]
    return last in ("cli", "__main__") or last.endswith("_cli")


def layer_of(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise KeyError(unit)


def upward_imports(graph: dict[str, list[tuple[str, int]]], paths: dict[str, Path] | None = None) -> list[str]:
    """Every import inside onboard/ that the layer order forbids, as 'file:line module -> module (why)'."""
    offences = []
    for module, targets in sorted(graph.items()):
        unit = onboard_unit(module)
        if unit is None or is_entry_point(module):
            continue
        for target, line in targets:
            other = onboard_unit(target)
            if other is None or other == unit:
                continue
            where = f"{paths[module].relative_to(ROOT)}:{line}" if paths else module
            if is_entry_point(target):
                offences.append(f"{where} {module} imports the command module {target}")
                continue
            unplaced = [u for u in (unit, other) if u not in PLACED]
            if unplaced:
                offences.append(f"{where} {module} -> {target}: {unplaced[0]} is in no layer (add it to LAYERS)")
                continue
            mine, theirs = layer_of(unit), layer_of(other)
            if theirs < mine or (theirs == mine and unit in COMPOSITION_ROOTS):
                continue
            why = "a peer in the same layer" if theirs == mine else "a layer above"
            offences.append(f"{where} {module} -> {target} ({unit} imports {other}, {why})")
    return offences


def circles(graph: dict[str, list[tuple[str, int]]], prefixes=CIRCLE_FREE) -> list[list[str]]:
    """The strongly connected groups of more than one module (or a module importing itself) among `prefixes`."""
    nodes = sorted(m for m in graph if m.split(".")[0] in prefixes)
    inside = set(nodes)
    edges = {m: sorted({t for t, _ in graph[m] if t in inside}) for m in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in nodes:  # Tarjan's algorithm, iteratively (deep import chains would overflow recursion)
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    group.append(m)
                    if m == node:
                        break
                if len(group) > 1 or node in edges[node]:
                    found.append(sorted(group))
    return found


def oversized(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(files over 400 lines with no reason at the top, files with a reason that are not over 400)."""
    unexplained, stale = [], []
    for pkg in SOURCE_PACKAGES:
        for path in sorted((root / pkg).rglob("*")) if (root / pkg).is_dir() else ():
            if path.suffix not in (".py", ".js") or not path.is_file():
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
            has_reason = any(REASON.search(line) for line in lines[:REASON_WITHIN_LINES])
            if len(lines) > MAX_LINES and not has_reason:
                unexplained.append(f"{path.relative_to(root)} ({len(lines)} lines)")
            elif has_reason and len(lines) <= MAX_LINES:
                stale.append(f"{path.relative_to(root)} ({len(lines)} lines)")
    return unexplained, stale


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_onboard_package_is_in_the_order():
    packages = {p.name for p in (ROOT / "onboard").iterdir() if (p / "__init__.py").exists()}
    assert packages <= PLACED, f"onboard packages in no layer: {sorted(packages - PLACED)}"
    gone = PLACED - set(TOP_MODULES.values()) - packages
    assert not gone, f"layers name packages that are gone: {sorted(gone)}"


def test_no_import_runs_back_up_inside_onboard(graph):
    paths = source_modules(ROOT)
    offences = upward_imports(graph, paths)
    assert not offences, "\n".join(offences)


def test_no_circle_inside_onboard_sim_or_deploy(graph):
    found = circles(graph)
    assert not found, "\n".join(" <-> ".join(group) for group in found)


def test_no_file_over_400_lines_without_its_reason():
    unexplained, stale = oversized()
    assert not unexplained, "over 400 lines, no 'Over 400 lines: <why>' at the top: " + ", ".join(unexplained)
    assert not stale, "'Over 400 lines' written at the top of a file that is not: " + ", ".join(stale)


def test_the_layer_order_is_in_the_architecture():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [u for layer in LAYERS for u in layer if f"`{u}`" not in text]
    assert "tests/contract/test_layers.py" in text and not missing, f"docs/ARCHITECTURE.md does not name {missing}"


# --- the checks themselves, on planted trees -------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_check_sees_lazy_type_checking_and_relative_imports(tmp_path):
    root = _tree(tmp_path, {
        "sim/__init__.py": "", "sim/v/__init__.py": "",
        "sim/v/a.py": "from . import b\n",
        "sim/v/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "sim/v/c.py": "def f():\n    from sim.v.a import x\n",
        "sim/v/d.py": "from sim.v import a\n",
    })
    g = import_graph(root, ("sim",))
    assert circles(g) == [["sim.v.a", "sim.v.b", "sim.v.c"]]
    assert [t for t, _ in g["sim.v.d"]] == ["sim.v.a"]


def test_the_order_refuses_upward_and_peer_imports_and_lets_roots_and_commands_through():
    g = {
        "onboard.map.city": [("onboard.vocab.text_fold", 1)],                # down: fine
        "onboard.map.render": [("onboard.agent.map_render", 2)],             # up
        "onboard.memory.store": [("onboard.map.city", 3)],                   # a peer
        "onboard.perception.x": [("onboard.map.city", 4)],                   # down: fine
        "onboard.inference.bench": [("onboard.perception.x", 5)],            # up
        "onboard.supervisor.s": [("onboard.config", 6)],                     # root to root: fine
        "onboard.config": [("onboard.supervisor.settings", 7)],              # root to root: fine
        "onboard.map.cli": [("onboard.config", 8)],                          # a command: fine
        "onboard.mission.m": [("onboard.config", 9), ("onboard.map.cli", 10)],  # up; a command imported
    }
    found = upward_imports(g)
    assert [o.split(" ")[0] for o in found] == ["onboard.inference.bench", "onboard.map.render",
                                                "onboard.memory.store", "onboard.mission.m", "onboard.mission.m"]


def test_the_size_check_wants_a_reason_and_refuses_a_stale_one(tmp_path):
    long = "x = 1\n" * 401
    root = _tree(tmp_path, {
        "sim/long.py": long,
        "sim/explained.py": '"""Thing.\n\nOver 400 lines: one table the tests read whole.\n"""\n' + long,
        "sim/vague.py": "# Over 400 lines: yes\n" + long,
        "sim/short.py": "# Over 400 lines: it used to be long\nx = 1\n",
    })
    unexplained, stale = oversized(root)
    assert unexplained == ["sim/long.py (401 lines)", "sim/vague.py (402 lines)"]
    assert stale == ["sim/short.py (2 lines)"]
