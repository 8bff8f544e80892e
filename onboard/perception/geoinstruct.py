"""``geoinstruct``: the geospatial context sentence the planner reads every step.

It turns the vehicle pose, the localised detections and known landmarks into
compact text with bearings (degrees and compass points), ranges and where each
thing is relative to the heading, so that a language model that cannot read
coordinates well still gets "ahead-left, 40 m".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from onboard.map.compass import compass8
from onboard.perception.camera_model import CameraPose



@dataclass(frozen=True)
class Landmark:
    name: str
    north: float
    east: float


def relative_direction(bearing_deg: float, heading_deg: float) -> str:
    """"ahead", "ahead-right", "right", "behind-right", "behind", ... from the vehicle's heading."""
    rel = (bearing_deg - heading_deg + 180.0) % 360.0 - 180.0
    names = ("behind", "behind-left", "left", "ahead-left", "ahead", "ahead-right", "right", "behind-right", "behind")
    return names[int((rel + 180.0 + 22.5) // 45)]


def describe_object(label: str, score: float, bearing: float, heading: float, range_m: float | None, method: str | None) -> str:
    where = f"bearing {bearing:03.0f}° ({compass8(bearing)}), {relative_direction(bearing, heading)}"
    if range_m is not None:
        where += f", ~{range_m:.0f} m" + (" (from its size)" if method == "size-prior" else "")
    return f"{label} ({score:.2f}) {where}"


def build_geoinstruct(pose: CameraPose, objects: Sequence, landmarks: Sequence[Landmark] = (), *, max_items: int = 8) -> str:
    """``objects`` are :class:`~onboard.perception.pipeline.PerceivedObject` (label, score, bearing_deg, range_m, range_method)."""
    heading = pose.yaw_deg % 360.0
    parts = [
        f"Vehicle at N {pose.north:.1f} m, E {pose.east:.1f} m, {pose.altitude_m:.1f} m above ground, "
        f"camera heading {heading:03.0f}° ({compass8(heading)}), pitch {pose.pitch_deg:.0f}°."
    ]
    ranked = sorted(objects, key=lambda o: (o.range_m is None, o.range_m or 0.0, -o.score))[:max_items]
    if ranked:
        parts.append("Visible: " + "; ".join(describe_object(o.label, o.score, o.bearing_deg, heading, o.range_m, o.range_method) for o in ranked) + ".")
    else:
        parts.append("Visible: nothing detected.")
    if landmarks:
        items = []
        for lm in sorted(landmarks, key=lambda l: math.hypot(l.north - pose.north, l.east - pose.east))[:max_items]:
            dn, de = lm.north - pose.north, lm.east - pose.east
            b = math.degrees(math.atan2(de, dn)) % 360.0
            items.append(f"{lm.name} bearing {b:03.0f}° ({compass8(b)}), {relative_direction(b, heading)}, {math.hypot(dn, de):.0f} m")
        parts.append("Landmarks: " + "; ".join(items) + ".")
    return " ".join(parts)
