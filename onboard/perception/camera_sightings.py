"""Camera frames -> the agent's sightings: read each view, name what was read, place it, fuse over views and steps.

The agent decides from `LandmarkSighting`s (named buildings of its gazetteer)
and `PoiSighting`s (names readable close by; the goal is found when one of them
is named by the description). With ``perception: camera`` those come from here
and nowhere else: frames a camera took at the vehicle's reported position and
heading, read by PP-OCRv5 (`TextReader`), matched with the instruction reader's
tolerance (`name_matching`), the bearing from the pixel column and the camera's
yaw, the range from the map's footprints, the ground plane or the lettering's
size (`text_range`) -- never from the simulator's truth.

One read is weak evidence: a misread letter ("McDonaids") or another branch one
letter off look alike in a single frame. `SightingFusion` keeps every read of a
known name as a place (east, north), groups reads of one name within
``fusion_radius_m`` and reports a group only once its evidence suffices: one
exact read at least ``single_read_confidence`` sure, or reads from at least
``min_reads`` distinct views whose confidences, combined as independent
evidence (1 - prod(1 - c)), reach ``fused_confidence``. A near read counts with
its confidence lowered per slip, so one misread never locks the goal and the
same misread from two places can.

Signs are matched to the names to read (`names_to_read`) and, besides, to the
description itself: a read the description names in full (`names_goal`, the
agent's own rule) is the goal though the reader understood a shorter name
("Body Shop" of "The Body Shop is 220 m south of ...").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from onboard.map.compass import bearing_deg
from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.name_matching import clean, letters_of
from onboard.perception.text_range import FootprintRanger
from onboard.perception.types import TextSighting
from onboard.vocab.landmark_names import STARTERS
from onboard.vocab.observation import LandmarkSighting, PoiSighting


class PerceptionUnavailable(RuntimeError):
    """Camera perception was asked for and its reader cannot load (names the file)."""


@dataclass(frozen=True)
class FusionSettings:
    """How reads become sightings (the ``supervisor.camera_reading`` keys that the fusion uses)."""

    fusion_radius_m: float = 50.0
    single_read_confidence: float = 0.8
    min_reads: int = 2
    fused_confidence: float = 0.65
    building_letter_m: float = 1.5
    poi_range_m: float = 60.0


@dataclass(frozen=True)
class CameraView:
    """One frame and where the camera was: position in the local frame (east, north, metres), yaw, altitude."""

    image: np.ndarray | None  # RGB uint8 (H, W, 3); None: no usable frame (a bad frame reads as nothing)
    heading_deg: float  # the optical axis' yaw, clockwise from north
    east: float
    north: float
    altitude_m: float
    pitch_deg: float = -15.0
    index: int = 0


@dataclass(frozen=True)
class ViewRead:
    """What one view gave: the named sightings and how long reading took."""

    index: int
    heading_deg: float
    sightings: tuple[TextSighting, ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    ok: bool = True  # False: no frame to read


# A read line's box is about this many times the lettering's cap height: the DB detector's unclip widens
# each box beyond the ink. Chosen on the ordinary dev split (frames along task d001's flight: median
# 1.78 over the building names read there, the renderer's cap height as truth); thin evidence.
LINE_PER_CAP = 1.8


def names_to_read(instruction: str, names_goal: Callable[[str], bool], understood: str | None = None,
                  given: str = "") -> list[str]:
    """The goal's names a camera matches signs against, in flight and in the benchmark alike.

    The name the mission gives (`Mission.goal_name`) when it gives one; else the goal the vehicle said
    it understood before arming (`understood`, the instruction reader's, as `Understood.goal_name`:
    lower-case and one-word names included) and the runs of the instruction's words that name the goal
    (`goal_names`). A benchmark task's own goal name is the judge's, never passed here.
    """
    if given.strip():
        return [given.strip()]
    names = ([understood.strip()] if understood and understood.strip() else []) + goal_names(instruction, names_goal)
    return list(dict.fromkeys(names))


def goal_names(instruction: str, names_goal: Callable[[str], bool]) -> list[str]:
    """The names the instruction gives the goal: the shortest runs of words it names the goal by.

    The drone knows the goal only from words; a sign matches the goal when it spells one of these
    (`names_goal`: the rule the agent applies to a POI name, `GoalDescription.names_goal`, which
    refuses a part of a longer name; the caller passes it, since reading the description is the
    agent's and perception sits below the agent). A run starting with a sentence word ("Find",
    "It") or of fewer than three letters ("N", "S.W") is not a name. A guess from words alone: where the operator gives the
    goal's name (`Mission.goal_name`, a task's `goal_name`) that is used instead; on the ordinary
    dev tasks this finds the name in 72 of 100 descriptions (lower-case ones and names with
    "&" or "the" inside are missed).
    """
    words = instruction.split()
    found: list[str] = []
    for n in range(1, 7):
        for i in range(len(words) - n + 1):
            cand = clean(" ".join(words[i:i + n]))
            if not cand or not cand[0].isupper() or cand.split()[0] in STARTERS or any(f in cand for f in found) \
                    or sum(ch.isalpha() for ch in cand) < 3:
                continue
            if names_goal(cand):
                found.append(cand)
    return found


def size_range_m(box, intr: CameraIntrinsics, letter_m: float) -> float | None:
    """Range (m) from the lettering's height in pixels and a real-world cap height: the pinhole rule."""
    h = (box[3] - box[1]) / LINE_PER_CAP
    return intr.fy * letter_m / h if h > 0 else None


def view_pose(view: CameraView) -> CameraPose:
    """The camera's pose when `view` was taken (the ground at the home altitude)."""
    return CameraPose(north=view.north, east=view.east, down=-view.altitude_m, yaw_deg=view.heading_deg,
                      pitch_deg=view.pitch_deg)


class CameraReader:
    """Reads views into named, placed sightings: the reader, the camera, the names that matter and a ranger."""

    def __init__(self, reader, intr: CameraIntrinsics, gazetteer: Iterable[str], goal: Iterable[str],
                 ranger: FootprintRanger | None = None, settings: FusionSettings = FusionSettings()) -> None:
        self.reader, self.intr, self.ranger, self.settings = reader, intr, ranger, settings
        self.gazetteer = tuple(dict.fromkeys(gazetteer))
        self.goal = tuple(dict.fromkeys(goal))
        self.names = list(dict.fromkeys((*self.goal, *self.gazetteer)))

    def read_view(self, view: CameraView) -> ViewRead:
        from onboard.perception.types import PerceptionError, check_image

        if view.image is None:
            return ViewRead(view.index, view.heading_deg, (), {}, ok=False)
        try:
            check_image(view.image)
        except PerceptionError:
            return ViewRead(view.index, view.heading_deg, (), {}, ok=False)
        # with the map, walls seen aslant are read upright too (the reader's `rectify` setting)
        reads = self.reader.read(view.image, self.intr, view_pose(view), self.ranger)
        return self.place(reads, view, dict(self.reader.timings_ms))

    def place(self, reads: list, view: CameraView, timings_ms: dict[str, float] | None = None) -> ViewRead:
        """Lines read in `view` (`TextReader.read`), named and placed from where the view was taken."""
        from onboard.perception.text_reader import to_sightings

        seen = to_sightings(reads, self.intr, view_pose(view), self.names, sign_height_m=self.reader.sign_height_m,
                            ranger=self.ranger, max_range_m=self.reader.max_range_m)
        return ViewRead(view.index, view.heading_deg, tuple(self._ranged(s) for s in seen), timings_ms or {})

    def _ranged(self, s: TextSighting) -> TextSighting:
        """A building's name hangs high on its facade: the ground plane (a shop sign's height) does not place it.

        Without the map's footprint, its range comes from the size of its lettering (1-2 m in a city).
        """
        from dataclasses import replace

        named = s.name if s.slips == 0 else s.close_to
        if named in self.gazetteer and named not in self.goal and s.range_method != "map-footprint":
            r = size_range_m(s.box, self.intr, self.settings.building_letter_m)
            return replace(s, range_m=r, range_method=None if r is None else "letter-size")
        return s


@dataclass
class _Read:
    key: tuple[int, int]  # (step, view)
    east: float
    north: float
    confidence: float
    exact: bool


@dataclass
class _Group:
    name: str
    kind: str  # "landmark" | "goal"
    reads: list[_Read] = field(default_factory=list)

    @property
    def where(self) -> np.ndarray:
        return np.mean([[r.east, r.north] for r in self.reads], axis=0)

    def evidence(self) -> tuple[int, float, float]:
        """(distinct views, combined confidence, best exact confidence)."""
        best: dict[tuple[int, int], float] = {}
        for r in self.reads:
            best[r.key] = max(best.get(r.key, 0.0), r.confidence)
        fused = 1.0 - math.prod(1.0 - c for c in best.values())
        exact = max((r.confidence for r in self.reads if r.exact), default=0.0)
        return len(best), fused, exact

    def confirmed(self, s: FusionSettings) -> bool:
        n, fused, exact = self.evidence()
        return exact >= s.single_read_confidence or (n >= s.min_reads and fused >= s.fused_confidence)

    def last_step(self) -> int:
        return max(r.key[0] for r in self.reads)


class SightingFusion:
    """Reads of known names over views and steps -> the sightings the agent gets at each step."""

    def __init__(self, gazetteer: Iterable[str], goal: Iterable[str], settings: FusionSettings = FusionSettings(),
                 names_goal: Callable[[str], bool] | None = None) -> None:
        self.settings = settings
        self.goal = set(goal)
        self.gazetteer = set(gazetteer) - self.goal
        self.names_goal = names_goal
        self.groups: list[_Group] = []
        self._raw: list[tuple[int, PoiSighting]] = []  # this step's unnamed reads close by

    def add(self, step: int, view: CameraView, read: ViewRead) -> None:
        """Every named, placed sighting of one view into its group (a new group when none is near)."""
        for s in read.sightings:
            named = s.name if s.slips == 0 else s.close_to
            if s.range_m is None or not math.isfinite(s.range_m):
                continue
            text = clean(s.text or s.name)
            if named in self.goal:
                kind = "goal"
            elif named in self.gazetteer:
                kind = "landmark"
            elif s.slips == 0 and self._names_more_of_the_goal(text):
                kind, named = "goal", text
            else:
                if s.range_m <= self.settings.poi_range_m and text and not (self.names_goal and self.names_goal(text)):
                    self._raw.append((step, PoiSighting(text, round(s.bearing_deg, 1), round(s.range_m, 1))))
                continue
            b = math.radians(s.bearing_deg)
            r = _Read((step, read.index), view.east + s.range_m * math.sin(b), view.north + s.range_m * math.cos(b),
                      float(s.confidence), s.slips == 0)
            self._place(named, kind, r)

    def _names_more_of_the_goal(self, text: str) -> bool:
        """A read the description names in full that holds a name to read: the goal by a longer name.

        "The Body Shop" where the vehicle understood "Body Shop", "K&K" for "K & K": the goal, read
        exactly, fused as any read of it (never a raw name, which the agent would take for the goal on
        one read). The read must hold a name to read: the description names fragments too ("A" of
        "a hairdresser", "m" of "300 m"), and one fragment read on any sign would lock it.
        """
        if not text or self.names_goal is None:
            return False
        key = letters_of(text)
        return any(k and k in key for k in map(letters_of, self.goal)) and self.names_goal(text)

    def add_detected(self, step: int, view: CameraView, read: ViewRead) -> None:
        """Detections of the goal's kind (`kind_sightings.detections_read`) as the goal's reads, never exact:
        the goal is placed only once `min_reads` views saw it (a box is a kind, not the one asked for)."""
        for s in read.sightings:
            if s.range_m is None or not math.isfinite(s.range_m):
                continue
            b = math.radians(s.bearing_deg)
            self._place(s.name, "goal", _Read((step, read.index), view.east + s.range_m * math.sin(b),
                                              view.north + s.range_m * math.cos(b), float(s.confidence), False))

    def _place(self, name: str, kind: str, r: _Read) -> None:
        key = letters_of(name)
        near = [(float(np.hypot(*(g.where - (r.east, r.north)))), k) for k, g in enumerate(self.groups)
                if g.kind == kind and letters_of(g.name) == key]
        near = [x for x in near if x[0] <= self.settings.fusion_radius_m]
        if near:
            self.groups[min(near)[1]].reads.append(r)
        else:
            self.groups.append(_Group(name, kind, [r]))

    def sightings(self, step: int, east: float, north: float) -> tuple[tuple[LandmarkSighting, ...], tuple[PoiSighting, ...]]:
        """What the agent gets at `step` from (east, north): confirmed groups read at this step, placed from here.

        The goal's group (the most confident when several are confirmed) comes as a POI sighting, the
        landmarks as landmark sightings, and names read close by that are neither as POI sightings (the
        agent learns from them how far names are read).
        """
        landmarks: dict[str, tuple[float, LandmarkSighting]] = {}
        goals: list[tuple[float, PoiSighting]] = []
        for g in self.groups:
            if g.last_step() != step or not g.confirmed(self.settings):
                continue
            d = g.where - (east, north)
            dist = max(1.0, float(np.hypot(*d)))
            _, fused, exact = g.evidence()
            conf = max(fused, exact)
            if g.kind == "goal":
                goals.append((conf, PoiSighting(g.name, round(bearing_deg(*d), 1), round(dist, 1))))
            elif conf > landmarks.get(g.name, (-1.0, None))[0]:
                landmarks[g.name] = (conf, LandmarkSighting(g.name, round(bearing_deg(*d), 1), round(dist, 1)))
        raw = [p for s, p in self._raw if s == step]
        self._raw = [(s, p) for s, p in self._raw if s >= step]
        pois = ([max(goals, key=lambda x: x[0])[1]] if goals else []) + sorted(raw, key=lambda p: p.distance)
        return tuple(v for _, v in sorted(landmarks.values(), key=lambda x: x[1].distance)), tuple(pois)

    def goal_evidence(self) -> list[dict]:
        """Every group of the goal's name so far: where, how many views, how sure (for the reading log)."""
        out = []
        for g in self.groups:
            if g.kind == "goal":
                n, fused, exact = g.evidence()
                out.append({"name": g.name, "east": round(float(g.where[0]), 1), "north": round(float(g.where[1]), 1),
                            "views": n, "fused": round(fused, 3), "exact": round(exact, 3),
                            "confirmed": g.confirmed(self.settings)})
        return out


def open_reader(inference_cfg, directory=None):
    """The text reader for camera perception; `PerceptionUnavailable` naming the file when a model cannot load."""
    from onboard.inference.manifest import ModelFileError
    from onboard.perception.text_reader import open_text_reader

    try:
        return open_text_reader(inference_cfg, directory)
    except ModelFileError as exc:
        raise PerceptionUnavailable(f"camera perception cannot read text: {exc}") from exc


def look_around_headings(start_deg: float, views: int) -> list[float]:
    """The camera yaws of a look-around: `views` equal steps of the circle from the heading flown."""
    return [(start_deg + 360.0 * k / views) % 360.0 for k in range(views)]


def sighting_json(s: TextSighting) -> dict:
    """One read, as the flight's reading log keeps it."""
    return {"name": s.name, "text": s.text, "close_to": s.close_to, "slips": s.slips,
            "confidence": round(float(s.confidence), 3), "bearing_deg": round(float(s.bearing_deg), 1),
            "range_m": None if s.range_m is None else round(float(s.range_m), 1), "range_method": s.range_method,
            "box": [round(float(v), 1) for v in s.box]}
