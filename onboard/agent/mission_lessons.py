"""The onboard mission analysis in the memory file, and its merge with the ground station's lessons.

A model's analysis is stored at once as the flight's main-plan lesson (a
`StrategicPlan`, ReflectionNav §5.3), so the next flight can retrieve it even
when no ground station ever answers. The ground station writes its own
deterministic lessons for the same flight; it receives the onboard analysis in
the flight's telemetry (event ``mission_analysis``) and folds it into its
`StrategicPlan`. Two records for one flight would take two of the few
retrieval slots with the same story, so the two are merged:

* **key**: the flight id. The onboard record's source is
  ``onboard_analysis:<flight_id>``; the ground's `StrategicPlan` that folded
  the analysis in carries ``plan_refined["onboard"]["flight_id"]`` (from the
  flight's ``flight_start``). In the record itself, not its source: a bundle's
  import renames every source.
* **merge**: once the ground's record for a flight is in the file, it holds
  both analyses (and the positions only the ground derives), so the onboard
  record of that flight is retired. The ground's record is never touched: it
  is the parent of the flight's task and step lessons, and a re-imported
  bundle must find it unchanged (content uids). A flight whose event never
  reached the ground keeps both records.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from contract.payloads.base import PayloadError
from contract.payloads.plan_refined import RefinedPlan
from contract.records import STRATEGIC_PLAN, StrategicPlan

ONBOARD_SOURCE = "onboard_analysis:"


def onboard_source(flight_id: str) -> str:
    return f"{ONBOARD_SOURCE}{flight_id}"


def analysis_record(task: str, master_plan: Any, analysis: Any) -> StrategicPlan:
    """The model's analysis as a main-plan lesson: its reason as the note, its rewritten plan as `plan_refined`."""
    a = analysis.analysis
    return StrategicPlan(task_instruction=task, master_plan=json.dumps(master_plan, sort_keys=True),
                         reflection_note=analysis.text,
                         plan_refined=RefinedPlan(plan={"sub_goals": [asdict(g) for g in a.refined_plan],
                                                        "reason": a.reason},
                                                  key_timestep=max(0, int(a.key_timestep))).to_text(),
                         status=a.status)


def store_analysis(store: Any, flight_id: str, task: str, master_plan: Any, analysis: Any) -> str | None:
    """Add the flight's model analysis, unless the ground's lessons for the flight are already in; its uid or None."""
    if _ground_has(store, flight_id):
        return None
    return store.add(analysis_record(task, master_plan, analysis), source=onboard_source(flight_id))


def _ground_flights(store: Any) -> set[str]:
    """Flight ids whose ground lesson (holding the onboard analysis) is in the file."""
    flights = set()
    for item in store.iter_experiences(STRATEGIC_PLAN):
        if item.source.startswith(ONBOARD_SOURCE):
            continue
        try:
            onboard = RefinedPlan.from_text(item.record.plan_refined).onboard
        except PayloadError:
            continue
        if onboard is not None and onboard.flight_id:
            flights.add(onboard.flight_id)
    return flights


def _ground_has(store: Any, flight_id: str) -> bool:
    return bool(flight_id) and flight_id in _ground_flights(store)


def retire_merged(store: Any) -> list[str]:
    """Delete the onboard records of flights whose ground lessons have arrived; the uids deleted."""
    rows = store.conn.execute("SELECT uid, source FROM experiences WHERE source LIKE ?",
                              (f"{ONBOARD_SOURCE}%",)).fetchall()
    landed = _ground_flights(store)
    gone = []
    for uid, source in rows:
        if source[len(ONBOARD_SOURCE):] in landed:
            store.delete(uid)
            gone.append(uid)
    return gone
