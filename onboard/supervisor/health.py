"""What `aerie status` and the status socket report about a running supervisor: each part, healthy or not, why."""

from __future__ import annotations

from typing import Any, Callable


def perception_note(sup: Any) -> str:
    """What the vehicle will perceive with, in words (start-up line, `aerie status`, telemetry)."""
    if not sup.camera or sup.detect_every_steps <= 0:
        return ("perception off: no detector runs (supervisor.camera is empty)" if not sup.camera
                else "perception off: supervisor.detect_every_steps is 0")
    return f"perception on: camera {sup.camera!r}, detector every {sup.detect_every_steps} step(s)"


def health_checks(supervisor: Any) -> dict[str, Callable[[], tuple[bool, str]]]:
    """The status socket's checks of a running supervisor (`aerie status`, `make flash`): each (ok, detail).

    The vehicle itself (armed, in the air) is not a check: the socket reports it as typed fields
    (`status_server.vehicle_live`), which `make flash` reads.
    """
    def bridge() -> tuple[bool, str]:
        if supervisor.bridge is None:
            return False, "not connected yet"
        s = supervisor.bridge.state
        ok = supervisor.bridge.monitor.link_ok.is_set()
        return ok, (f"{supervisor.bridge.link.url}: heartbeat {s.heartbeat_age_s():.1f} s ago, mode {s.flight_mode}"
                    if ok else f"{supervisor.bridge.link.url}: link lost")

    def models() -> tuple[bool, str]:
        parts, ok = [], True
        if supervisor.cfg.agent.planner == "llm":
            ok &= supervisor._plan_model is not None
            parts.append(f"planner {supervisor.cfg.inference.llm_model} {'loaded' if supervisor._plan_model else 'missing'}")
        elif supervisor.cfg.agent.planner == "vlm":
            ok &= supervisor.vlm is not None
            parts.append(f"vlm planner {supervisor.cfg.inference.vlm_model} {'loaded' if supervisor.vlm else 'missing'}")
        else:
            parts.append("geometric planner (no model)")
        if supervisor.detector is not None:
            d_ok, detail = supervisor.detector.healthy()
            ok &= d_ok
            parts.append(detail)
        else:
            parts.append(perception_note(supervisor.sup))
        if supervisor.embedder is not None:
            parts.append("embedder loaded")
        return ok, "; ".join(parts)

    def memory() -> tuple[bool, str]:
        if not supervisor.sup.use_memory:
            return True, "memory disabled by config"
        if supervisor.store is None:
            return False, "memory not open"
        return True, f"{supervisor.store.path}: {supervisor.store.count()} experiences"

    return {"bridge": bridge, "models": models, "memory": memory}

# -- the step ------------------------------------------------------------------------------
