"""The parameter table: PX4's own names, defaults, types and indices.

The table is the full list PX4 SITL (SIH quadrotor) answered to
PARAM_REQUEST_LIST in the reference trace, so indices, count (902) and types
match what a client sees from PX4. Integers travel bytewise in the float field
(PX4 advertises MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

MAV_PARAM_TYPE_UINT32 = 5
MAV_PARAM_TYPE_INT32 = 6
MAV_PARAM_TYPE_REAL32 = 9

_TYPES = {"INT32": MAV_PARAM_TYPE_INT32, "REAL32": MAV_PARAM_TYPE_REAL32}
DEFAULTS_FILE = Path(__file__).with_name("px4_params.json")
HASH_CHECK_NAME = "_HASH_CHECK"
HASH_CHECK_INDEX = 65535


def int_to_wire(value: int) -> float:
    """Reinterpret an int32 as the float32 bit pattern PX4 puts on the wire."""
    return struct.unpack("<f", struct.pack("<i", int(value)))[0]


def uint_to_wire(value: int) -> float:
    return struct.unpack("<f", struct.pack("<I", int(value) & 0xFFFFFFFF))[0]


def wire_to_int(value: float) -> int:
    """Inverse of :func:`int_to_wire` (works for NaN bit patterns too)."""
    return struct.unpack("<i", struct.pack("<f", value))[0]


@dataclass
class Param:
    name: str
    type: int  # MAV_PARAM_TYPE
    value: float | int

    @property
    def wire_value(self) -> float:
        if self.type == MAV_PARAM_TYPE_REAL32:
            return float(self.value)
        return int_to_wire(int(self.value))


class ParamTable:
    """Ordered parameters; index = position in PX4's (alphabetical) list."""

    def __init__(self, entries: list[tuple[str, str, float | int]]):
        self._params: list[Param] = [Param(n, _TYPES[t], v) for n, t, v in entries]
        self._by_name: dict[str, int] = {p.name: i for i, p in enumerate(self._params)}

    @classmethod
    def px4_defaults(cls, overrides: dict[str, float | int] | None = None) -> "ParamTable":
        data = json.loads(DEFAULTS_FILE.read_text())
        table = cls([tuple(e) for e in data["params"]])
        for name, value in (overrides or {}).items():
            if name not in table:
                raise KeyError(f"unknown PX4 parameter {name!r}")
            table.set(name, value)
        return table

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._params)

    def __iter__(self):
        return iter(self._params)

    def index(self, name: str) -> int:
        return self._by_name[name]

    def by_index(self, index: int) -> Param | None:
        return self._params[index] if 0 <= index < len(self._params) else None

    def lookup(self, name: str) -> Param | None:
        i = self._by_name.get(name)
        return None if i is None else self._params[i]

    def get(self, name: str) -> float | int:
        return self._params[self._by_name[name]].value

    def f(self, name: str) -> float:
        """Float value of a parameter, for the flight logic."""
        return float(self.get(name))

    def set(self, name: str, value: float | int) -> bool:
        """Set a value (cast to the parameter's type); True if it changed."""
        p = self._params[self._by_name[name]]
        new: float | int = int(value) if p.type != MAV_PARAM_TYPE_REAL32 else float(struct.unpack("<f", struct.pack("<f", float(value)))[0])
        changed = not (new == p.value or (isinstance(new, float) and math.isnan(new) and isinstance(p.value, float) and math.isnan(p.value)))
        p.value = new
        return changed

    def set_from_wire(self, name: str, wire_value: float, wire_type: int) -> bool:
        """Apply a PARAM_SET: ints arrive bytewise in the float field."""
        p = self._params[self._by_name[name]]
        if p.type == MAV_PARAM_TYPE_REAL32:
            if wire_type in (MAV_PARAM_TYPE_REAL32, 0):
                return self.set(name, wire_value)
            return self.set(name, float(wire_to_int(wire_value)))
        if wire_type == MAV_PARAM_TYPE_REAL32:
            return self.set(name, int(round(wire_value)) if math.isfinite(wire_value) else p.value)
        return self.set(name, wire_to_int(wire_value))

    def hash_check(self) -> int:
        """A stand-in for PX4's _HASH_CHECK: CRC32 over names and values."""
        import zlib

        h = 0
        for p in self._params:
            h = zlib.crc32(p.name.encode() + struct.pack("<f", p.wire_value), h)
        return h
