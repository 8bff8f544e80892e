"""The combined instruction reader: the parser first, the local language model where it cannot settle.

The deterministic parser (`goal_description`) reads the shapes people
commonly write, exactly and in microseconds. Where it finds no relation, or
leaves a named landmark or a written direction unexplained, or cannot tell
which side of the landmark the goal is on, the language model reads the
relations through a JSON-schema contract (grammar-constrained, as the plan
call is). The schema is built from the text itself: the landmark is one the
text names, the direction one it writes, the distance one it states. So the
model only chooses how the words fit together, which is the part a parser
gets wrong on an unusual sentence, and never invents a number or a name.
The model's answer is validated again against the text; where it fails, the
parser's reading is kept and the reason recorded.

Arithmetic (number words, units) stays in code before either reader sees it.
The system prompt is the same for every call and comes first, so llama.cpp
reuses its evaluated prefix and a call costs only the description's tokens.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from onboard.vocab.compass_words import POINTS_16
from onboard.agent.goal_description import (_DIRECTION, GoalDescription, Relation, _prepare, direction_bearing,
                                            distances_in, parse_goal_description)
from onboard.vocab.landmark_names import find_mentions
from onboard.vocab.text_fold import fold

WORDS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")
READERS = ("parser", "model", "combined")

SYSTEM = ("You read where a drone must fly. The text names a goal (a shop, cafe, ...) and one or two landmarks "
          "(buildings). For each landmark, give the direction and distance the text writes, and whether the text "
          "says the LANDMARK is that way from the goal (landmark_is_subject true: 'Kiasma is 300 m north of Cafe X') "
          "or the GOAL is that way from the landmark (false: 'Cafe X is 300 m north of Kiasma', 'from Kiasma go "
          "300 m north'). metres 0 when no distance is written. JSON only.\n"
          'Example: "Bar Y: 200 m east of Postitalo" -> {"relations":[{"landmark":"Postitalo","direction":"east",'
          '"metres":200,"landmark_is_subject":false}]}')


Generate = Callable[[list[dict[str, Any]], dict[str, Any]], str]


@dataclass(frozen=True)
class Reading:
    """What was read, by whom, and why the model was (not) asked or (not) believed."""

    goal: GoalDescription
    reader: str  # "parser", "model"
    unsettled: str = ""  # why the parser's reading was not taken as it is ("" = it was)
    model_errors: tuple[str, ...] = ()
    model_s: float = 0.0  # wall time of the model call


def direction_name(bearing_deg: float) -> str:
    """How a written direction is offered to the model: a compass point's word, else its degrees."""
    b = bearing_deg % 360.0
    i = round(b / 22.5) % 16
    return POINTS_16[i] if abs(b - 22.5 * round(b / 22.5)) < 1e-6 else f"{b:g} degrees"


@dataclass(frozen=True)
class TextFacts:
    """What the text offers a model to choose from."""

    landmarks: tuple[str, ...]
    directions: tuple[float, ...]  # bearings written (degrees), in order
    distances: tuple[float, ...]  # metres written, in order

    @property
    def direction_names(self) -> dict[str, float]:
        """The model's choices of direction, each with the bearing the code converts it to."""
        return {direction_name(b): b for b in self.directions}

    @staticmethod
    def of(text: str, gazetteer: list[str], aliases: Mapping[str, str] | None = None,
           goal_name: str | None = None) -> "TextFacts":
        """`goal_name`: the goal's name as read (`GoalDescription.goal_name`); a direction inside it ("Cantina
        West") is no direction written."""
        prepared = _prepare(text)
        chars = list(prepared)
        names: list[str] = []
        for m in find_mentions(prepared, gazetteer, aliases):
            chars[m.start:m.end] = " " * (m.end - m.start)
            if m.name not in names:
                names.append(m.name)
        if goal_name and len(goal_name.split()) > 1:
            for m in re.finditer(rf"(?<!\w){re.escape(fold(goal_name))}(?!\w)", fold(prepared)):
                chars[m.start():m.end()] = " " * (m.end() - m.start())
        masked = "".join(chars)
        dirs = [direction_bearing(d) for d in _DIRECTION.finditer(masked)]
        return TextFacts(tuple(names), tuple(dirs), tuple(distances_in(masked)))


def unsettled(goal: GoalDescription, facts: TextFacts) -> str:
    """Why the parser's reading cannot be taken as it is; "" when it can. A reading without a relation is
    never taken as it is: it is the model's turn where the text names a landmark, and a refusal where not."""
    if not facts.landmarks:
        return "" if goal.relations else "no landmark named"
    if not goal.relations:
        return "no relation read"
    unused = [n for n in facts.landmarks if n not in goal.landmarks and n not in goal.withdrawn]
    if unused:
        return f"landmark {unused[0]!r} named but not related"
    directed = max(goal.directions_read, sum(r.direction is not None for r in goal.relations))
    if len(facts.directions) > directed:
        return f"{len(facts.directions)} directions written, {directed} read"
    return ""


def reading_schema(facts: TextFacts) -> dict[str, Any]:
    """The contract for this text: its own landmarks, directions and distances are the only choices."""
    metres = sorted({int(round(d)) for d in facts.distances} | {0})
    item = {"type": "object", "properties": {
        "landmark": {"type": "string", "enum": list(facts.landmarks)},
        "direction": {"type": "string", "enum": sorted(facts.direction_names) or list(WORDS)},
        "metres": {"type": "integer", "enum": metres},
        "landmark_is_subject": {"type": "boolean"}},
        "required": ["landmark", "direction", "metres", "landmark_is_subject"], "additionalProperties": False}
    return {"type": "object", "properties": {"relations": {"type": "array", "items": item, "minItems": 1,
                                                           "maxItems": max(1, min(2, len(facts.landmarks)))}},
            "required": ["relations"], "additionalProperties": False}


def model_view(text: str) -> str:
    """The text as the model reads it: every quantity already in metres and every bearing in degrees, so
    the words it must match to the schema's choices are the choices themselves (arithmetic stays in code)."""
    from onboard.vocab.compass_words import BEARING_TOKEN
    from onboard.agent.goal_description import _DISTANCE, unit_metres

    prepared = BEARING_TOKEN.sub(lambda m: f" {direction_name(float(m.group('deg')))} ", _prepare(text))
    prepared = _DISTANCE.sub(lambda m: f"{int(round(float(m.group('num').replace(',', '.')) * unit_metres(m.group('unit'))))} m",
                             prepared)
    return " ".join(prepared.split())


def reading_messages(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": model_view(text)}]


def validate_model_reading(raw: str, facts: TextFacts, text: str) -> tuple[Relation, ...]:
    """The model's relations, checked against the text; raises ValueError naming what is wrong."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg}") from None
    items = data.get("relations") if isinstance(data, dict) else None
    if not isinstance(items, list) or not 1 <= len(items) <= 2:
        raise ValueError("field 'relations' must be a list of 1-2 items")
    out: list[Relation] = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise ValueError(f"relations[{i}] is not an object")
        name, word, metres, subject = (it.get("landmark"), it.get("direction"), it.get("metres"),
                                       it.get("landmark_is_subject"))
        if name not in facts.landmarks:
            raise ValueError(f"relations[{i}].landmark {name!r} is not named in the text")
        if not isinstance(word, str) or word not in facts.direction_names:
            raise ValueError(f"relations[{i}].direction {word!r} is not written in the text")
        if isinstance(metres, bool) or not isinstance(metres, int) or (
                metres and not any(abs(metres - d) <= 0.01 * d + 0.5 for d in facts.distances)):
            raise ValueError(f"relations[{i}].metres {metres!r} is not a distance the text states")
        if not isinstance(subject, bool):
            raise ValueError(f"relations[{i}].landmark_is_subject must be true or false")
        if any(r.landmarks == (name,) for r in out):
            raise ValueError(f"relations[{i}] repeats landmark {name!r}")
        bearing = (facts.direction_names[word] + (180.0 if subject else 0.0)) % 360.0
        out.append(Relation("offset" if metres else "ray", (name,), distance=float(metres) if metres else None,
                            bearing_deg=bearing))
    return tuple(out)


def model_reading(text: str, gazetteer: list[str], generate: Generate, facts: TextFacts | None = None,
                  aliases: Mapping[str, str] | None = None) -> tuple[tuple[Relation, ...] | None, str, float]:
    """(relations or None, error, seconds): one grammar-constrained call, validated."""
    facts = facts or TextFacts.of(text, gazetteer, aliases)
    if not facts.landmarks:
        return None, "the text names no landmark", 0.0
    if not facts.directions:
        return None, "the text writes no direction", 0.0
    t0 = time.perf_counter()
    try:
        raw = generate(reading_messages(text), reading_schema(facts))
    except Exception as exc:  # a hung or crashed model is the parser's turn, not the mission's end
        return None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    try:
        return validate_model_reading(raw, facts, text), "", seconds
    except ValueError as exc:
        return None, str(exc), seconds


def read_instruction(text: str, gazetteer: list[str], generate: Generate | None = None,
                     reader: str = "combined", aliases: Mapping[str, str] | None = None) -> Reading:
    """Read `text` with `reader` ("parser", "model" or "combined"); without a model, the parser's reading.
    `aliases`: other names of the gazetteer's landmarks (alias -> name)."""
    if reader not in READERS:
        raise ValueError(f"unknown reader {reader!r}; choose one of {READERS}")
    parsed = parse_goal_description(text, gazetteer, aliases)
    if reader == "parser" or generate is None:
        return Reading(parsed, "parser")
    facts = TextFacts.of(text, gazetteer, aliases, parsed.goal_name)
    why = unsettled(parsed, facts) if reader == "combined" else "model reader asked"
    if not why:
        return Reading(parsed, "parser")
    relations, error, seconds = model_reading(text, gazetteer, generate, facts)
    if relations is None:
        return Reading(parsed, "parser", why, (error,), seconds)
    return Reading(GoalDescription(parsed.text, relations, parsed.named, len(relations)), "model", why, (), seconds)
