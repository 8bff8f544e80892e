"""Typed JSON contracts: dataclass -> JSON schema, JSON text -> validated dataclass.

Every structured model call goes through a contract: the schema constrains
decoding (llama.cpp turns it into a GBNF grammar), the validator catches what
a grammar cannot (ranges, list lengths), and :func:`call_contract` retries once
with the validation error, then returns the caller's documented fallback.
Plain dataclasses, so no pydantic is needed on the vehicle.

Field metadata understood: ``minimum``/``maximum`` (numbers), ``min_items``/
``max_items`` (lists), ``max_length`` (strings), ``description``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, TypeVar, get_args, get_origin, get_type_hints

log = logging.getLogger(__name__)
T = TypeVar("T")


class ContractError(ValueError):
    """A model answer does not satisfy its contract; names the contract and the field."""


def schema_of(cls: type) -> dict[str, Any]:
    """The JSON schema of a contract dataclass (properties in declaration order)."""
    hints = get_type_hints(cls)
    props: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        props[f.name] = _schema_of_type(hints[f.name], dict(f.metadata))
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _schema_of_type(tp: Any, meta: dict[str, Any]) -> dict[str, Any]:
    origin = get_origin(tp)
    s: dict[str, Any]
    if dataclasses.is_dataclass(tp):
        s = schema_of(tp)
    elif origin is Literal:
        s = {"type": "string" if all(isinstance(a, str) for a in get_args(tp)) else "number", "enum": list(get_args(tp))}
    elif origin in (list, tuple):
        s = {"type": "array", "items": _schema_of_type(get_args(tp)[0], {})}
        if "min_items" in meta:
            s["minItems"] = meta["min_items"]
        if "max_items" in meta:
            s["maxItems"] = meta["max_items"]
    elif tp is bool:
        s = {"type": "boolean"}
    elif tp is int:
        s = {"type": "integer"}
    elif tp is float:
        s = {"type": "number"}
    elif tp is str:
        s = {"type": "string"}
        if "max_length" in meta:
            s["maxLength"] = meta["max_length"]
    else:
        raise TypeError(f"unsupported contract field type {tp!r}")
    if tp in (int, float):
        for key in ("minimum", "maximum"):
            if key in meta:
                s[key] = meta[key]
    if "description" in meta:
        s["description"] = meta["description"]
    return s


def json_budget(schema: dict[str, Any]) -> int:
    """Most characters an answer satisfying ``schema`` can take (a ceiling for max_tokens)."""
    t = schema.get("type")
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"]) + 1
    if t == "object":
        return 2 + sum(len(k) + 5 + json_budget(v) for k, v in schema["properties"].items())
    if t == "array":
        return 2 + schema.get("maxItems", 8) * (json_budget(schema["items"]) + 2)
    if t == "string":
        return schema.get("maxLength", 256) + 8
    if t == "boolean":
        return 6
    return 24


def parse(cls: type[T], answer: str | dict[str, Any]) -> T:
    """Validate a model's answer (JSON text or already-parsed dict) into ``cls``."""
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise ContractError(f"{cls.__name__}: not valid JSON ({exc.msg} at char {exc.pos})") from None
    return _build(cls, answer, cls.__name__)


def _build(cls: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise ContractError(f"{where}: expected an object, got {type(data).__name__}")
    hints = get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in names if n not in data]
    if missing:
        raise ContractError(f"{where}: missing {', '.join(missing)}")
    extra = sorted(set(data) - set(names))
    if extra:
        raise ContractError(f"{where}: unexpected {', '.join(extra)}")
    values = {f.name: _value(hints[f.name], data[f.name], dict(f.metadata), f"{where}.{f.name}") for f in dataclasses.fields(cls)}
    obj = cls(**values)
    check = getattr(obj, "check", None)
    if check is not None:
        try:
            check()
        except ValueError as exc:
            raise ContractError(f"{where}: {exc}") from None
    return obj


def _value(tp: Any, v: Any, meta: dict[str, Any], where: str) -> Any:
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return _build(tp, v, where)
    if origin is Literal:
        if v not in get_args(tp):
            raise ContractError(f"{where}: {v!r} is not one of {list(get_args(tp))}")
        return v
    if origin in (list, tuple):
        if not isinstance(v, list):
            raise ContractError(f"{where}: expected a list, got {type(v).__name__}")
        if len(v) < meta.get("min_items", 0) or len(v) > meta.get("max_items", 1 << 30):
            raise ContractError(f"{where}: {len(v)} items, expected {meta.get('min_items', 0)}..{meta.get('max_items', 'any')}")
        item = get_args(tp)[0]
        return [_value(item, x, {}, f"{where}[{i}]") for i, x in enumerate(v)]
    if tp is bool:
        if not isinstance(v, bool):
            raise ContractError(f"{where}: expected true/false, got {v!r}")
        return v
    if tp in (int, float):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (tp is int and not isinstance(v, int)):
            raise ContractError(f"{where}: expected a number, got {v!r}")
        if v < meta.get("minimum", float("-inf")) or v > meta.get("maximum", float("inf")):
            raise ContractError(f"{where}: {v} outside [{meta.get('minimum')}, {meta.get('maximum')}]")
        return tp(v)
    if tp is str:
        if not isinstance(v, str):
            raise ContractError(f"{where}: expected a string, got {v!r}")
        return v
    raise ContractError(f"{where}: unsupported type {tp!r}")


def to_dict(obj: Any) -> dict[str, Any]:
    return dataclasses.asdict(obj)


@dataclass(frozen=True)
class ContractResult(typing.Generic[T]):
    value: T
    attempts: int
    used_fallback: bool
    errors: list[str] = field(default_factory=list)


def call_contract(
    generate: Callable[[list[dict[str, Any]], dict[str, Any]], str],
    messages: list[dict[str, Any]],
    contract: type[T],
    *,
    fallback: Callable[[], T],
    retries: int = 1,
) -> ContractResult[T]:
    """Ask ``generate(messages, schema)`` for a ``contract`` answer; retry, then fall back.

    A retry carries the validation error back to the model. Errors raised by
    ``generate`` itself (deadline, crash) are not retried here: they propagate,
    since retrying a hung model only doubles the wait.
    """
    schema = schema_of(contract)
    errors: list[str] = []
    convo = list(messages)
    for attempt in range(1, retries + 2):
        text = generate(convo, schema)
        try:
            return ContractResult(parse(contract, text), attempt, False, errors)
        except ContractError as exc:
            errors.append(str(exc))
            log.warning("contract %s: attempt %d invalid: %s", contract.__name__, attempt, exc)
            convo = list(messages) + [
                {"role": "assistant", "content": text[:2000]},
                {"role": "user", "content": f"That answer was invalid: {exc}. Answer again with JSON matching the schema only."},
            ]
    return ContractResult(fallback(), retries + 1, True, errors)
