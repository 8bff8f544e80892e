"""The reading bench's scoring: which signs count, and recall per letter size, per group and precision."""

from __future__ import annotations

from dataclasses import dataclass

from sim.reading_scores import evaluate_reading
from onboard.perception.types import TextSighting


@dataclass(frozen=True)
class _Truth:
    name: str
    bearing_deg: float
    distance_m: float
    visible: float
    letter_px: float
    facing: bool = True


@dataclass(frozen=True)
class _Frame:
    image: object
    intr: object
    pose: object
    truths: tuple
    goal: str = ""


class _Reader:
    """Reads what it is told per frame (the frame's image is the key)."""

    def __init__(self, seen: dict) -> None:
        self.seen, self.timings_ms = seen, {}

    def sightings(self, image, intr, pose, names):
        self.timings_ms = {"detect": 1.0, "recognise": 1.0, "total": 2.0}
        return [TextSighting(name=n, bearing_deg=b, range_m=None, range_method=None, confidence=0.9, box=(0, 0, 1, 1))
                for n, b in self.seen[image]]


def test_the_scored_signs_are_set_in_the_truths_pixels_and_told_apart_by_size_and_group() -> None:
    truths = (_Truth("Alpha", 10.0, 40.0, 1.0, 12.0), _Truth("Beta", 50.0, 40.0, 1.0, 30.0, facing=False),
              _Truth("Gamma", 90.0, 40.0, 1.0, 8.0))  # Gamma: below the least scored lettering
    frames = [_Frame("f0", None, None, truths)]
    reader = _Reader({"f0": [("Alpha", 11.0), ("Gamma", 90.0), ("Delta", 200.0)]})  # Delta: no such sign in view
    out = evaluate_reading(reader, frames, ["Alpha", "Beta", "Gamma", "Delta"], resolvable_px=10.0,
                           groups={"facing": lambda t: t.facing, "aslant": lambda t: not t.facing})
    assert out["name_resolvable_signs"] == 2 and out["name_recall"] == 0.5
    assert out["name_recall_by_letter_px"]["10-16"] == (1.0, 1) and out["name_recall_by_letter_px"]["20-40"] == (0.0, 1)
    assert out["name_recall_by_group"] == {"facing": (1.0, 1), "aslant": (0.0, 1)}
    assert out["name_exact_reads"] == 3 and out["name_precision"] == 2 / 3
    # the same frames scored at another least size count other signs
    assert evaluate_reading(reader, frames, ["Alpha", "Beta", "Gamma"], resolvable_px=5.0)["name_resolvable_signs"] == 3
