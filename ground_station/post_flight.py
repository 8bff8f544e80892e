"""The deterministic post-flight analyser: lessons from a logged flight when no model is configured.

After a flight ends, the ground station turns its ``agent_step`` messages into
the three ReflectionNav reflections, as :mod:`contract.records`:

* the **key timestep**: the decision after which the distance to the target
  grew the most (``distance_estimate_m`` of the following step minus its own);
  a flight whose distance never grew has its last step as the key step;
* **success summary** or **failure reflection** at that step: a
  :class:`NavigateExperience` (or :class:`SearchLocateExperience` when the step's
  ``strategy`` is search/locate) with its ``current_state``, the goal, a
  ``reflect_reason`` naming the decision, its reason and the distance change, and a
  ``refined_action`` (JSON: the action to avoid there and the flight's best action,
  the one followed by the largest decrease);
* **main-plan reflection**: a :class:`StrategicPlan` with ``master_plan`` (the first
  ``plan`` message), ``plan_refined``, ``reflection_note`` and ``status``. When the
  steps carry where the agent put the goal (``goal_fix``: where it read the goal's
  name; else ``target_estimate``) and the landmark map it fused (``landmarks``), all
  in its own take-off frame, ``plan_refined`` becomes ``{"plan": ..., "goal": {"xy_m",
  "source"}, "landmarks": {name: [x, y]}}`` (plus ``"avoid"`` on failure): on success
  the place where the name was read, on failure the place searched in vain. The
  landmark map lets a later flight from another take-off point bring that position
  into its own frame (:mod:`onboard.agent.experience_prior`). Flights whose steps
  carry none of this keep the older forms (success: ``plan_refined`` is
  ``master_plan``; failure: ``{"plan", "avoid"}``);

linked strategy -> task (:class:`TaskExperience`) -> atomic, added to the ground
station's memory file and written with :func:`onboard.memory.bundle.export_bundle`,
ready for ``aerie ground sync``. Same log in, same records (same content uids) out:
no clocks, no randomness, no model. Outcome: ``flight_end`` may say ``success``
(bool) or ``status`` ('success'/'failure'); otherwise the flight succeeded if its
last distance estimate is within ``success_radius_m``.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from contract.records import (NavigateExperience, Record, SearchLocateExperience, StrategicPlan,
                                    TaskExperience)

log = logging.getLogger("aerie.ground.post_flight")

# Seconds before trying again after an analysis failed.
_RETRY_S = 60.0

# ReflectionNav counts a goal reached within 20 m.
SUCCESS_RADIUS_M = 20.0


@dataclass(frozen=True)
class Step:
    """One agent decision as logged."""

    seq: int
    step: int
    current_state: str
    action: str
    reason: str
    distance_m: float | None
    goal: str
    strategy: str
    target_xy: tuple[float, float] | None = None  # the agent's target (own frame, metres east/north)
    goal_fix_xy: tuple[float, float] | None = None  # where it read the goal's name, once it had
    landmarks: dict[str, tuple[float, float]] | None = None  # its fused landmark map (own frame)


@dataclass(frozen=True)
class KeyStep:
    step: Step
    distance_before_m: float | None
    distance_after_m: float | None

    @property
    def increase_m(self) -> float:
        if self.distance_before_m is None or self.distance_after_m is None:
            return 0.0
        return self.distance_after_m - self.distance_before_m


@dataclass(frozen=True)
class FlightAnalysis:
    vehicle_id: str
    start_seq: int
    task_instruction: str
    status: str                 # 'success' | 'failure'
    steps: int
    key: KeyStep
    plan: StrategicPlan
    task: TaskExperience
    decision: NavigateExperience | SearchLocateExperience

    def records(self) -> list[tuple[Record, int | None]]:
        """The records with the index of their parent in this list (strategy -> task -> atomic)."""
        return [(self.plan, None), (self.task, 0), (self.decision, 1)]


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else json.dumps(value, sort_keys=True)


def _xy(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        x, y = _num(value[0]), _num(value[1])
        if x is not None and y is not None:
            return (x, y)
    return None


def _landmarks(value: Any) -> dict[str, tuple[float, float]] | None:
    if not isinstance(value, dict):
        return None
    out = {str(k): xy for k, v in value.items() if (xy := _xy(v)) is not None}
    return out or None


def agent_steps(messages: Iterable[dict[str, Any]]) -> list[Step]:
    out = []
    for m in messages:
        p = m.get("payload")
        if m.get("type") != "agent_step" or not isinstance(p, dict):
            continue
        decision = p.get("decision") if isinstance(p.get("decision"), dict) else {}
        out.append(Step(seq=int(m.get("seq", 0)), step=int(p.get("step", len(out))) if isinstance(p.get("step"), int)
                        else len(out), current_state=_text(p.get("current_state")),
                        action=_text(decision.get("action")), reason=_text(decision.get("reason")),
                        distance_m=_num(p.get("distance_estimate_m")), goal=_text(p.get("goal")),
                        strategy=_text(p.get("strategy")).lower() or "navigate",
                        target_xy=_xy(p.get("target_estimate")), goal_fix_xy=_xy(p.get("goal_fix")),
                        landmarks=_landmarks(p.get("landmarks"))))
    return sorted(out, key=lambda s: s.seq)


def key_step(steps: list[Step]) -> KeyStep:
    """The decision followed by the largest increase in distance to the target (the last step if none)."""
    best: KeyStep | None = None
    prev: Step | None = None
    for s in steps:
        if prev is not None and prev.distance_m is not None and s.distance_m is not None:
            cand = KeyStep(prev, prev.distance_m, s.distance_m)
            if cand.increase_m > 0 and (best is None or cand.increase_m > best.increase_m):
                best = cand
        if s.distance_m is not None or prev is None:
            prev = s
    if best is not None:
        return best
    last = steps[-1]
    return KeyStep(last, last.distance_m, last.distance_m)


def best_step(steps: list[Step]) -> Step | None:
    """The decision followed by the largest decrease in distance, if any."""
    best, gain = None, 0.0
    for a, b in zip(steps, steps[1:]):
        if a.distance_m is not None and b.distance_m is not None and a.distance_m - b.distance_m > gain:
            best, gain = a, a.distance_m - b.distance_m
    return best


def goal_lesson(steps: list[Step]) -> dict[str, Any] | None:
    """Where the flight put the goal and the landmark map to place it by; None when the steps carry neither.

    The name read beats the estimate: it is where the goal was seen, not where the
    description's rough words put it.
    """
    read = next((s.goal_fix_xy for s in reversed(steps) if s.goal_fix_xy is not None), None)
    est = next((s.target_xy for s in reversed(steps) if s.target_xy is not None), None)
    lms = next((s.landmarks for s in reversed(steps) if s.landmarks), None)
    if read is None and est is None:
        return None
    xy = read if read is not None else est
    out: dict[str, Any] = {"goal": {"xy_m": [round(xy[0], 1), round(xy[1], 1)],
                                    "source": "name read" if read is not None else "estimate"}}
    if lms:
        out["landmarks"] = {n: [round(x, 1), round(y, 1)] for n, (x, y) in sorted(lms.items())}
    return out


def outcome(messages: list[dict[str, Any]], steps: list[Step], success_radius_m: float) -> str:
    for m in reversed(messages):
        if m.get("type") == "flight_end" and isinstance(m.get("payload"), dict):
            p = m["payload"]
            if isinstance(p.get("success"), bool):
                return "success" if p["success"] else "failure"
            if p.get("status") in ("success", "failure"):
                return str(p["status"])
            break
    last = next((s.distance_m for s in reversed(steps) if s.distance_m is not None), None)
    return "success" if last is not None and last <= success_radius_m else "failure"


def _fmt_m(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0f} m"


def _fmt_xy(xy: list[float]) -> str:
    x, y = xy
    return f"{abs(x):.0f} m {'east' if x >= 0 else 'west'}, {abs(y):.0f} m {'north' if y >= 0 else 'south'}"


def analyse(messages: Iterable[dict[str, Any]], *, vehicle_id: str = "", start_seq: int = 0,
            success_radius_m: float = SUCCESS_RADIUS_M) -> FlightAnalysis | None:
    """The three reflections of one flight's messages (envelopes as dicts); None without agent steps."""
    messages = list(messages)
    steps = agent_steps(messages)
    if not steps:
        return None
    info = next((m.get("payload") for m in messages if m.get("type") == "flight_start"), None)
    info = info if isinstance(info, dict) else {}
    goal = next((s.goal for s in steps if s.goal), "")
    task_instruction = (_text(info.get("task_instruction")) or _text(info.get("mission")) or goal
                        or f"flight {vehicle_id}#{start_seq}")
    goal = goal or task_instruction
    plans = [m.get("payload") for m in messages if m.get("type") == "plan"]
    master_plan = json.dumps(plans[0] if plans else {}, sort_keys=True, default=str)
    status = outcome(messages, steps, success_radius_m)
    key = key_step(steps)
    k = key.step
    best = best_step(steps)
    first_d = next((s.distance_m for s in steps if s.distance_m is not None), None)
    last_d = next((s.distance_m for s in reversed(steps) if s.distance_m is not None), None)
    trend = f"distance to the target went from {_fmt_m(first_d)} to {_fmt_m(last_d)} in {len(steps)} steps"

    if key.increase_m > 0:
        what = (f"At step {k.step} the agent chose '{k.action}' ({k.reason or 'no reason given'}); the distance to "
                f"the target then rose from {_fmt_m(key.distance_before_m)} to {_fmt_m(key.distance_after_m)} "
                f"(+{key.increase_m:.0f} m), the largest increase of the flight.")
    else:
        what = f"The distance to the target never grew; the last decision was '{k.action}' at step {k.step}."
    if status == "success":
        reflect_reason = f"Success: {trend}. {what}"
    else:
        reflect_reason = f"Failure: {trend}. {what} Avoid that decision in that situation."
    refined = {"at_step": k.step, "avoid": k.action if key.increase_m > 0 else None,
               "prefer": best.action if best is not None and (best.action != k.action or key.increase_m <= 0)
               else None}
    refined_action = json.dumps(refined, sort_keys=True)
    if k.strategy in ("search", "locate"):
        decision: NavigateExperience | SearchLocateExperience = SearchLocateExperience(
            search_goal=goal, is_success=status, reflect_reason=reflect_reason, refined_action=refined_action,
            current_state=k.current_state or f"step {k.step}")
        strategy = k.strategy
    else:
        decision = NavigateExperience(navigation_goal=goal, is_success=status, reflect_reason=reflect_reason,
                                      refined_action=refined_action, current_state=k.current_state or f"step {k.step}")
        strategy = "navigate"
    task = TaskExperience(task_goal=f"{goal} (Strategy: {strategy})", strategy=strategy, is_success=status,
                          summary=f"{status}: {trend}.")
    where = goal_lesson(steps)
    if status == "success":
        note = f"The plan reached the goal: {trend}. Keep it."
        plan_refined = master_plan
        if where is not None:
            g = where["goal"]
            note += f" The goal ({g['source']}) was at {_fmt_xy(g['xy_m'])} of take-off."
            plan_refined = json.dumps({"plan": json.loads(master_plan), **where}, sort_keys=True)
    else:
        note = (f"The plan did not reach the goal: {trend}. The key step was {k.step}"
                + (f" ('{k.action}', +{key.increase_m:.0f} m)." if key.increase_m > 0 else "."))
        if where is not None:
            note += f" Searched in vain around {_fmt_xy(where['goal']['xy_m'])} of take-off."
        plan_refined = json.dumps({"plan": json.loads(master_plan), "avoid": [refined], **(where or {})},
                                  sort_keys=True)
    plan = StrategicPlan(task_instruction=task_instruction, master_plan=master_plan, reflection_note=note,
                         plan_refined=plan_refined, status=status)
    return FlightAnalysis(vehicle_id=vehicle_id, start_seq=start_seq, task_instruction=task_instruction,
                          status=status, steps=len(steps), key=key, plan=plan, task=task, decision=decision)


def bundle_name(vehicle_id: str, start_seq: int, stream_id: str = "") -> str:
    """One flight's bundle file; the stream keeps a reset vehicle's flights apart (none: a v1 log)."""
    return f"{vehicle_id}-{stream_id}-{start_seq}.bundle" if stream_id and stream_id != "v1" else \
        f"{vehicle_id}-{start_seq}.bundle"


def export_analysis(analysis: FlightAnalysis, store: Any, path: str | Path) -> list[str]:
    """Add the records to ``store`` (an :class:`ExperienceStore`) with parent links and export only them.

    Returns the records' uids. Adding is idempotent (content uids), so analysing a flight
    twice changes nothing.
    """
    from onboard.memory.bundle import export_bundle

    uids: list[str] = []
    for record, parent in analysis.records():
        uids.append(store.add(record, parent_uid=uids[parent] if parent is not None else None,
                              source=f"post_flight:{analysis.vehicle_id}#{analysis.start_seq}"))
    export_bundle(_OnlyThese(store, set(uids)), path, vehicle_id=analysis.vehicle_id)
    return uids


class _OnlyThese:
    """A view of a store whose iteration yields only the given uids (one flight's bundle)."""

    def __init__(self, store: Any, uids: set[str]) -> None:
        self._store = store
        self._uids = uids
        self.embedder = store.embedder

    def iter_experiences(self, collection: str | None = None) -> Iterable[Any]:
        return (e for e in self._store.iter_experiences(collection) if e.uid in self._uids)


def pending_flights(fl: Any, out_dir: Path) -> list[Any]:
    """Ended (or aborted) flights of the flight log (a :class:`FlightLog`) without a bundle in ``out_dir``."""
    return [f for f in fl.flights() if f.end_seq is not None
            and not (out_dir / bundle_name(f.vehicle_id, f.start_seq, f.stream_id)).exists()]


def analyse_log(fl: Any, out_dir: str | Path, store: Any, *,
                success_radius_m: float = SUCCESS_RADIUS_M) -> list[Path]:
    """Analyse every ended flight in ``fl`` that has no bundle in ``out_dir`` yet; returns the new bundles.

    A flight without agent steps gets no bundle (and is looked at again next time: cheap).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for flight in pending_flights(fl, out_dir):
        analysis = analyse(fl.flight_messages(flight), vehicle_id=flight.vehicle_id, start_seq=flight.start_seq,
                           success_radius_m=success_radius_m)
        if analysis is None:
            continue
        target = out_dir / bundle_name(flight.vehicle_id, flight.start_seq, flight.stream_id)
        export_analysis(analysis, store, target)
        log.info("post-flight lessons written", extra={"fields": {
            "bundle": str(target), "status": analysis.status, "key_step": analysis.key.step.step}})
        written.append(target)
    return written


class PostFlightWatcher:
    """Runs :func:`analyse_log` in a thread of ``aerie ground`` whenever a flight has ended.

    It reads the flight log read-only beside the ingest thread and opens the ground's
    memory file (and its embedder) only once there is a flight to analyse.
    """

    def __init__(self, db_path: str | Path, out_dir: str | Path, memory_path: str | Path, *,
                 success_radius_m: float = SUCCESS_RADIUS_M, interval_s: float = 2.0) -> None:
        self.db_path = Path(db_path)
        self.out_dir = Path(out_dir)
        self.memory_path = Path(memory_path)
        self.success_radius_m = success_radius_m
        self.interval_s = interval_s
        self.written: list[Path] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Any = None

    def start(self) -> "PostFlightWatcher":
        self._thread = threading.Thread(target=self._run, name="post-flight", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (if started) and close the memory file (if opened)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._thread is None:
            self._close_store()   # one-shot use: poll() ran on this thread

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def poll(self) -> list[Path]:
        """One pass: analyse what ended since the last pass."""
        from ground_station.dashboard.log_reader import open_reader

        reader = open_reader(self.db_path)
        if reader is None:
            return []
        fl = reader.log
        try:
            if not pending_flights(fl, self.out_dir):
                return []
            if self._store is None:
                from onboard.memory.embedder import MiniLMEmbedder
                from onboard.memory.experience_store import ExperienceStore

                self._store = ExperienceStore.open(self.memory_path, MiniLMEmbedder.load())
            written = analyse_log(fl, self.out_dir, self._store, success_radius_m=self.success_radius_m)
        finally:
            reader.close()
        self.written.extend(written)
        return written

    def _run(self) -> None:
        delay = self.interval_s
        try:
            while True:
                stopping = self._stop.wait(delay)
                try:
                    self.poll()   # once more after stop: a flight that ended just before it
                    delay = self.interval_s
                except Exception:  # noqa: BLE001 - analysis must never stop ingest
                    log.exception("post-flight analysis failed; retrying in %.0f s", _RETRY_S)
                    delay = _RETRY_S   # e.g. no embedding model: do not fill the log every 2 s
                if stopping:
                    break
        finally:
            self._close_store()   # the memory file's connection belongs to this thread
