"""What every payload dataclass shares: the schema-version key, the error, and a checking reader.

A payload's ``encode()`` is ``{"v": SCHEMA_VERSION, **fields}``: msgpack-ready
(lists, maps, str, bytes, numbers, None). ``decode()`` takes the map back from
the untrusted wire and refuses, with a :class:`PayloadError` that names the
message type and the field, anything a reader could misread: a schema version
it does not know, a missing required field, a wrong type, a number out of range
or non-finite where a finite one is meant.

Unknown keys are ignored: within one schema version a producer may add an
optional field and an older reader still reads the rest. A change that alters
the meaning or the type of a field is a new ``SCHEMA_VERSION``, and a reader
refuses a version it was not written for rather than guess.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar, Mapping, TypeVar

VERSION_KEY = "v"

T = TypeVar("T")
P = TypeVar("P", bound="Payload")

_MISSING = object()


class PayloadError(ValueError):
    """A payload does not decode; ``msg_type`` and ``field`` say where, ``reason`` is a short counter name."""

    def __init__(self, msg_type: str, field: str, message: str, *, reason: str = "bad_field") -> None:
        super().__init__(f"{msg_type} payload, field {field!r}: {message}")
        self.msg_type = msg_type
        self.field = field
        self.reason = reason


class Payload:
    """Base of the frozen payload dataclasses: ``MSG_TYPE``, ``SCHEMA_VERSION``, ``encode``, ``decode``."""

    MSG_TYPE: ClassVar[str]
    SCHEMA_VERSION: ClassVar[int]

    def body(self) -> dict[str, Any]:
        """The fields as plain msgpack-ready values, without the version."""
        raise NotImplementedError

    def encode(self) -> dict[str, Any]:
        return {VERSION_KEY: self.SCHEMA_VERSION, **self.body()}

    @classmethod
    def decode(cls: type[P], data: Any) -> P:
        r = Reader(cls.MSG_TYPE, data)
        r.version(cls.SCHEMA_VERSION)
        return cls._from(r)

    @classmethod
    def _from(cls: type[P], r: "Reader") -> P:
        raise NotImplementedError


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Reader:
    """Typed, range-checked access to one untrusted payload map; every failure names its field."""

    def __init__(self, msg_type: str, data: Any, prefix: str = "") -> None:
        self.msg_type = msg_type
        self.prefix = prefix
        if not isinstance(data, Mapping):
            raise PayloadError(msg_type, prefix.rstrip(".") or "(payload)",
                               f"must be a map, got {type(data).__name__}", reason="not_a_map")
        self.data = data

    def fail(self, key: str, message: str, reason: str = "bad_field") -> PayloadError:
        return PayloadError(self.msg_type, self.prefix + key, message, reason=reason)

    def version(self, expected: int) -> None:
        v = self.data.get(VERSION_KEY, _MISSING)
        if v is _MISSING:
            raise self.fail(VERSION_KEY, f"no schema version (this reader reads version {expected})",
                            "wrong_version")
        if type(v) is not int or v != expected:
            raise self.fail(VERSION_KEY, f"unknown schema version {v!r} (this reader reads version {expected})",
                            "wrong_version")

    def _get(self, key: str, required: bool) -> Any:
        value = self.data.get(key, _MISSING)
        if value is _MISSING and required:
            raise self.fail(key, "missing", "missing_field")
        return value

    # -- scalars ---------------------------------------------------------------------------------

    def text(self, key: str, default: str | None = None, *, non_empty: bool = False) -> str:
        value = self._get(key, default is None)
        if value is _MISSING:
            return default  # type: ignore[return-value]
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {type(value).__name__}")
        if non_empty and not value:
            raise self.fail(key, "must not be empty")
        return value

    def opt_text(self, key: str) -> str | None:
        value = self._get(key, False)
        if value is _MISSING or value is None:
            return None
        return self.text(key)

    def flag(self, key: str, default: bool | None = None) -> bool:
        value = self._get(key, default is None)
        if value is _MISSING:
            return default  # type: ignore[return-value]
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {type(value).__name__}")
        return value

    def opt_flag(self, key: str) -> bool | None:
        value = self._get(key, False)
        return None if value is _MISSING or value is None else self.flag(key)

    def integer(self, key: str, default: int | None = None, *, lo: int | None = None,
                hi: int | None = None) -> int:
        value = self._get(key, default is None)
        if value is _MISSING:
            return default  # type: ignore[return-value]
        if type(value) is not int:
            raise self.fail(key, f"must be an integer, got {type(value).__name__}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail(key, f"{value} is outside [{lo}, {hi}]", "out_of_range")
        return value

    def opt_integer(self, key: str, *, lo: int | None = None, hi: int | None = None) -> int | None:
        value = self._get(key, False)
        return None if value is _MISSING or value is None else self.integer(key, lo=lo, hi=hi)

    def number(self, key: str, default: float | None = None, *, lo: float | None = None, hi: float | None = None,
               nan_ok: bool = False) -> float:
        """A finite number in [lo, hi]; with ``nan_ok`` NaN too (the vehicle's "not known yet")."""
        value = self._get(key, default is None)
        if value is _MISSING:
            return default  # type: ignore[return-value]
        return self._number(key, value, lo, hi, nan_ok)

    def opt_number(self, key: str, *, lo: float | None = None, hi: float | None = None) -> float | None:
        value = self._get(key, False)
        return None if value is _MISSING or value is None else self._number(key, value, lo, hi, False)

    def _number(self, key: str, value: Any, lo: float | None, hi: float | None, nan_ok: bool) -> float:
        if not _is_number(value):
            raise self.fail(key, f"must be a number, got {type(value).__name__}")
        value = float(value)
        if math.isnan(value):
            if nan_ok:
                return value
            raise self.fail(key, "must be a finite number, got NaN", "out_of_range")
        if math.isinf(value):
            raise self.fail(key, f"must be a finite number, got {value}", "out_of_range")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail(key, f"{value} is outside [{lo}, {hi}]", "out_of_range")
        return value

    def blob(self, key: str) -> bytes:
        value = self._get(key, True)
        if not isinstance(value, bytes):
            raise self.fail(key, f"must be bytes, got {type(value).__name__}")
        return value

    # -- compound --------------------------------------------------------------------------------

    def xy(self, key: str) -> tuple[float, float] | None:
        """An optional ``[x, y]`` pair of finite numbers."""
        value = self._get(key, False)
        if value is _MISSING or value is None:
            return None
        return self._pair(key, value)

    def _pair(self, key: str, value: Any, bound: float | None = None) -> tuple[float, float]:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise self.fail(key, "must be a pair [x, y]")
        lo = None if bound is None else -bound
        return (self._number(key, value[0], lo, bound, False), self._number(key, value[1], lo, bound, False))

    def xy_ring(self, key: str, *, fewest: int, most: int, bound: float) -> tuple[tuple[float, float], ...]:
        """A required outline: a list of `fewest` to `most` ``[x, y]`` vertices, each within ``±bound``."""
        items = self.items(key)
        if not fewest <= len(items) <= most:
            raise self.fail(key, f"must have {fewest} to {most} vertices, got {len(items)}", "bad_shape")
        return tuple(self._pair(f"{key}[{i}]", v, bound) for i, v in enumerate(items))

    def xy_map(self, key: str) -> dict[str, tuple[float, float]] | None:
        """An optional map of names to ``[x, y]`` pairs."""
        value = self._get(key, False)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a map, got {type(value).__name__}")
        out = {}
        for name, pair in value.items():
            if not isinstance(name, str):
                raise self.fail(key, f"keys must be strings, got {type(name).__name__}")
            out[name] = self._pair(f"{key}.{name}", pair)
        return out

    def texts(self, key: str, default: tuple[str, ...] | None = None) -> tuple[str, ...]:
        items = self.items(key, default)
        if any(not isinstance(t, str) for t in items):
            raise self.fail(key, "must be a list of strings")
        return tuple(items)

    def ints(self, key: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
        items = self.items(key, default)
        if any(type(i) is not int for i in items):
            raise self.fail(key, "must be a list of integers")
        return tuple(items)

    def items(self, key: str, default: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
        value = self._get(key, default is None)
        if value is _MISSING:
            return default  # type: ignore[return-value]
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"must be a list, got {type(value).__name__}")
        return tuple(value)

    def each(self, key: str, make: Callable[["Reader"], T], default: tuple[T, ...] | None = None) -> tuple[T, ...]:
        """A list of nested maps, each read by ``make`` with field names like ``key[3].label``."""
        items = self.items(key, default)
        return tuple(make(Reader(self.msg_type, item, f"{self.prefix}{key}[{i}].")) for i, item in enumerate(items))

    def nested(self, key: str, make: Callable[["Reader"], T]) -> T | None:
        """An optional nested map read by ``make``."""
        value = self._get(key, False)
        if value is _MISSING or value is None:
            return None
        return make(Reader(self.msg_type, value, f"{self.prefix}{key}."))

    def mapping(self, key: str) -> dict[str, Any] | None:
        """An optional free-form map (string keys), kept as it came: e.g. an event's detail."""
        value = self._get(key, False)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, Mapping) or any(not isinstance(k, str) for k in value):
            raise self.fail(key, "must be a map with string keys")
        return dict(value)

    def numbers_map(self, key: str) -> dict[str, float]:
        value = self.mapping(key) or {}
        return {k: self._number(f"{key}.{k}", v, None, None, False) for k, v in value.items()}


def plain(value: Any) -> Any:
    """A msgpack-ready copy of a producer's value: dataclasses to maps, enums to names, tuples to lists."""
    import dataclasses
    import enum

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return str(value)
