"""What the vehicle understood of its instruction, said back in one line before it arms.

A pilot reads a clearance back before acting on it; the vehicle does the same:
the goal's name, each relation as "450 m N (000°) of Helsingin tuomiokirkko",
and what it could not place. A reading with no goal name, or without a single
relation to a landmark it knows, is refused before arming with what is
missing, unless the operator asked on purpose for a search without relations
(`Mission.search_only`): flying a blind search because a sentence was not
understood is a failure that looks like a flight.
"""

from __future__ import annotations

from dataclasses import dataclass

from onboard.vocab.compass_words import compass_label
from onboard.agent.instruction_reader import Reading


@dataclass(frozen=True)
class Understood:
    """One reading, as said back: the goal, the relations in words, what is missing."""

    goal_name: str | None
    relations: tuple[str, ...]
    unplaced: tuple[str, ...]  # landmarks named but related to nothing
    reader: str  # parser | model
    missing: tuple[str, ...]  # why the mission would be refused; () when it can fly

    def line(self) -> str:
        goal = f"goal {self.goal_name!r}" if self.goal_name else "goal: not read"
        rel = "; ".join(self.relations) if self.relations else "no relation read"
        out = f"understood: {goal}; {rel}"
        if self.unplaced:
            out += f"; not placed: {', '.join(self.unplaced)}"
        return out + f" (read by the {self.reader})"

    def refusal(self) -> str:
        """The message a refused mission gives; "" when it is not refused."""
        return f"instruction not understood: {', '.join(self.missing)} could not be read" if self.missing else ""


def relation_words(r) -> str:
    """A relation as said back: "450 m N (000°) of X", "somewhere NE (045°) of X", "between X and Y"."""
    if r.kind == "between":
        return f"between {r.landmarks[0]} and {r.landmarks[1]}"
    where = compass_label(r.bearing_deg or 0.0)
    if r.distance:
        return f"{r.distance:.0f} m {where} of {r.landmarks[0]}"
    return f"somewhere {where} of {r.landmarks[0]}"


def understand(reading: Reading, *, search_only: bool = False) -> Understood:
    """The reading said back, with what is missing for it to fly (`search_only`: relations not needed)."""
    goal = reading.goal
    name = goal.goal_name
    missing: list[str] = []
    if not name:
        missing.append("the goal's name")
    if not goal.relations and not search_only:
        named = ", ".join(goal.named)
        missing.append(f"where the goal is relative to a landmark (named: {named})" if named else
                       "where the goal is relative to a landmark the vehicle knows (none named)")
    return Understood(name, tuple(relation_words(r) for r in goal.relations), goal.unplaced, reading.reader,
                      tuple(missing))
