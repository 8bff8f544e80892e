"""The experience records, named and shaped as the ReflectionNav design names them.

Three collections come from ReflectionNav (``strategic_plan_memory``,
``navigate_experience_memory``, ``search_and_locate_memory``); one more,
``task_experience_memory``, holds the middle level of the strategy-tree
hierarchy (atomic decision frames < sub-task outcomes < whole-mission plans),
so adaptive retrieval can walk strategy -> task -> atomic through parent links.

Images are PNG bytes in the record and are stored as a blob or a file
reference, never as inline base64.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from typing import Generic, Literal, TypeVar

import msgpack

STRATEGIC_PLAN = "strategic_plan_memory"
TASK_EXPERIENCE = "task_experience_memory"
NAVIGATE_EXPERIENCE = "navigate_experience_memory"
SEARCH_AND_LOCATE = "search_and_locate_memory"

Level = Literal["atomic", "task", "strategy"]
LEVELS: tuple[str, ...] = ("atomic", "task", "strategy")
OUTCOMES: tuple[str, ...] = ("success", "failure")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class RecordError(ValueError):
    """An experience record is malformed (unknown outcome, not a PNG, missing field)."""


@dataclass(frozen=True)
class StrategicPlan:
    """A past mission's plan and the lesson drawn from it; found by ``task_instruction``."""

    task_instruction: str
    master_plan: str  # JSON string of the original plan
    reflection_note: str
    plan_refined: str  # JSON string of the corrected / optimised plan
    status: str  # 'success' | 'failure'


@dataclass(frozen=True)
class TaskExperience:
    """How one sub-task went (middle level); found by ``task_goal``."""

    task_goal: str  # e.g. "Fly to the red-roofed church (Strategy: navigate)"
    strategy: str  # navigate | search | locate
    is_success: str
    summary: str


@dataclass(frozen=True)
class NavigateExperience:
    """A key navigation decision frame and its lesson; found by ``current_state``."""

    navigation_goal: str
    is_success: str
    reflect_reason: str
    refined_action: str  # JSON string
    current_state: str
    semantic_enhanced_image: bytes | None = None  # PNG bytes


@dataclass(frozen=True)
class SearchLocateExperience:
    """A key search/locate decision frame and its lesson; found by ``current_state``."""

    search_goal: str
    is_success: str
    reflect_reason: str
    refined_action: str
    current_state: str
    semantic_enhanced_image: bytes | None = None


Record = StrategicPlan | TaskExperience | NavigateExperience | SearchLocateExperience
R = TypeVar("R", StrategicPlan, TaskExperience, NavigateExperience, SearchLocateExperience)


@dataclass(frozen=True)
class CollectionSpec:
    name: str
    record_type: type
    vector_field: str  # the field whose text is embedded
    outcome_field: str  # the field that says success / failure
    level: str


COLLECTIONS: dict[str, CollectionSpec] = {
    STRATEGIC_PLAN: CollectionSpec(STRATEGIC_PLAN, StrategicPlan, "task_instruction", "status", "strategy"),
    TASK_EXPERIENCE: CollectionSpec(TASK_EXPERIENCE, TaskExperience, "task_goal", "is_success", "task"),
    NAVIGATE_EXPERIENCE: CollectionSpec(NAVIGATE_EXPERIENCE, NavigateExperience, "current_state", "is_success", "atomic"),
    SEARCH_AND_LOCATE: CollectionSpec(SEARCH_AND_LOCATE, SearchLocateExperience, "current_state", "is_success", "atomic"),
}


def spec_for(record: Record) -> CollectionSpec:
    for spec in COLLECTIONS.values():
        if type(record) is spec.record_type:
            return spec
    raise RecordError(f"not an experience record: {type(record).__name__}")


@dataclass(frozen=True)
class Retrieved(Generic[R]):
    """One retrieval hit: the record, its cosine similarity and where it sits."""

    uid: str
    collection: str
    level: str
    similarity: float
    record: R
    parent_uid: str | None = None


def text_fields(record: Record) -> dict[str, str]:
    """All fields except the image, as stored in the ``fields`` JSON column."""
    return {f.name: getattr(record, f.name) for f in fields(record) if f.name != "semantic_enhanced_image"}


def image_of(record: Record) -> bytes | None:
    return getattr(record, "semantic_enhanced_image", None)


def validate(record: Record) -> CollectionSpec:
    spec = spec_for(record)
    for name, value in text_fields(record).items():
        if not isinstance(value, str):
            raise RecordError(f"{spec.name}.{name} must be a string, got {type(value).__name__}")
    outcome = getattr(record, spec.outcome_field)
    if outcome not in OUTCOMES:
        raise RecordError(f"{spec.name}.{spec.outcome_field} must be 'success' or 'failure', got {outcome!r}")
    if not getattr(record, spec.vector_field).strip():
        raise RecordError(f"{spec.name}.{spec.vector_field} (the vectorised field) is empty")
    image = image_of(record)
    if image is not None and not bytes(image).startswith(PNG_MAGIC):
        raise RecordError(f"{spec.name}.semantic_enhanced_image must be PNG bytes (not base64, not a path)")
    return spec


def content_uid(collection: str, level: str, fields_: dict[str, str], image_sha256: str | None,
                parent_uid: str | None) -> str:
    """Content-hash id: the same lesson gets the same id on the vehicle and the ground.

    Hashing canonical msgpack (sorted keys) rather than JSON text keeps the id
    independent of whitespace and key order.
    """
    canonical = msgpack.packb(
        [collection, level, sorted(fields_.items()), image_sha256 or "", parent_uid or ""], use_bin_type=True
    )
    return hashlib.sha256(canonical).hexdigest()[:32]


def record_from_row(collection: str, fields_json: str, image: bytes | None) -> Record:
    spec = COLLECTIONS[collection]
    data = json.loads(fields_json)
    if "semantic_enhanced_image" in {f.name for f in fields(spec.record_type)}:
        data["semantic_enhanced_image"] = image
    return spec.record_type(**data)


def to_plain(record: Record) -> dict:
    return asdict(record)
