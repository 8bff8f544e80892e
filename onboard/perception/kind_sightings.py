"""Detections of the goal's kind in a look-around's frame -> reads the fusion places like read signs.

When the description asks for a kind of thing ("a person by the fountain", "the
red kiosk", `vocab.goal_kind`), no sign names it: a detector is what can see
it. Each detection whose label is of that kind becomes one read, named by the
kind's word as the description types it (so the agent's `names_goal` takes the
fused sighting for the goal), placed like every other camera read: bearing
through the box centre and range where the ray through its foot meets the
ground, from the pose the frame was taken at (`camera_model.localise_box`).

A detection is never an exact read: a box says "a person", not "the person
asked for", so the fusion wants it from `min_reads` distinct views before the
agent hears of it (`SightingFusion.add_detected`); one weak box never places
the goal. Detections of other kinds are dropped here.
"""

from __future__ import annotations

import math
from typing import Iterable

from onboard.perception.camera_model import CameraIntrinsics, localise_box
from onboard.perception.camera_sightings import CameraView, ViewRead, view_pose
from onboard.perception.types import Detection, TextSighting
from onboard.vocab.goal_kind import GoalKind, same_kind


def detections_read(detections: Iterable[Detection], view: CameraView, kind: GoalKind, intr: CameraIntrinsics,
                    timings_ms: dict[str, float] | None = None) -> ViewRead:
    """The detections of `kind` in `view`, placed from where the view was taken; other kinds and unplaceable boxes dropped."""
    pose = view_pose(view)
    out: list[TextSighting] = []
    for d in detections:
        if not same_kind(d.label, kind.kind):
            continue
        loc = localise_box(intr, pose, d.box, kind.kind)
        if loc.range_m is None or not math.isfinite(loc.range_m):
            continue
        out.append(TextSighting(kind.word, loc.bearing_deg, loc.range_m, loc.range_method,
                                float(d.score), tuple(float(v) for v in d.box), text=d.label))
    return ViewRead(view.index, view.heading_deg, tuple(out), timings_ms or {})
