"""One registry of event kinds, complete both ways, and checked where events are published.

The source is read for every kind an emitter names (``event("kind", ...)``, memory sync's ``on_result``,
``emit``, ``on_event``, ``Event.of``, a kind chosen by a conditional or kept
in a local first, and the bridge's ``"separation_" + action``): each must be
in ``EVENT_KINDS``, and each registered kind must be emitted somewhere. The
publisher refuses an unregistered kind on a real publisher.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from contract.payloads.event import EVENT_KINDS, Event, UnknownEventKind, check_kind

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("onboard", "firmware_bridge", "sim", "ground_station", "aerie", "deploy")
EMITTERS = {"event", "on_event", "_on_event", "emit", "of", "_event", "_on_result"}
SEPARATION = ROOT / "firmware_bridge" / "separation.py"


def _strings(node: ast.AST, assigned: dict[str, list[ast.AST]]) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body, assigned) | _strings(node.orelse, assigned)
    if isinstance(node, ast.Name):
        return {s for value in assigned.get(node.id, []) for s in _strings(value, assigned)}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant):
        return {node.left.value + "*"}   # a prefix: completed below from the actions it is joined with
    return set()


def _emitted_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        assigned: dict[str, list[ast.AST]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.setdefault(node.targets[0].id, []).append(node.value)
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and node.args:
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in EMITTERS and (name != "of" or getattr(node.func.value, "id", "") == "Event"):
                    found |= _strings(node.args[0], assigned)
    return found


def _separation_actions() -> set[str]:
    tree = ast.parse(SEPARATION.read_text(encoding="utf-8"))
    return {node.args[1].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Decision" and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)}


def emitted_kinds() -> set[str]:
    found = {k for pkg in PACKAGES for path in sorted((ROOT / pkg).rglob("*.py")) for k in _emitted_in(path)}
    prefixes = {k for k in found if k.endswith("*")}
    actions = _separation_actions()
    assert prefixes == {"separation_*"} and actions, (prefixes, actions)
    return (found - prefixes) | {f"separation_{a}" for a in actions}


def test_every_kind_emitted_is_registered_and_every_registered_kind_is_emitted():
    emitted = emitted_kinds()
    assert not emitted - set(EVENT_KINDS), f"emitted, not in EVENT_KINDS: {sorted(emitted - set(EVENT_KINDS))}"
    assert not set(EVENT_KINDS) - emitted, f"in EVENT_KINDS, never emitted: {sorted(set(EVENT_KINDS) - emitted)}"
    assert all(meaning.strip() for meaning in EVENT_KINDS.values())   # each says what it means


def test_the_scan_sees_conditional_and_stored_kinds(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f(bus, ok):\n    kind = 'up' if ok else 'down'\n    bus.emit(kind, {})\n"
                     "    bus.event('plain')\n    Event.of('built')\n    other.of('not_an_event')\n")
    assert _emitted_in(probe) == {"up", "down", "plain", "built"}


def test_an_unregistered_kind_is_refused_where_events_are_published(tmp_path):
    from onboard.telemetry.publisher import TelemetryPublisher
    from tests.telemetry.linkkit import vehicle_cfg

    assert check_kind("link_lost") == "link_lost"
    with TelemetryPublisher(vehicle_cfg(tmp_path, curve=False), "uav-k") as pub:
        assert pub.event("link_lost", {"heartbeat_age_s": 3.0}) == 1
        with pytest.raises(UnknownEventKind, match="'link_lsot'"):
            pub.event("link_lsot")
        with pytest.raises(UnknownEventKind):
            pub.publish("event", Event("mission_analysis"))   # a message type of its own now, not an event
        assert pub.event("failsafe") == 2   # nothing was numbered for the refused ones
