"""One frame on a request/reply or peer-to-peer socket: a payload's map with its message type under ``"type"``.

Every boundary that is not the telemetry envelope (the world feed, replay and
ack, memory sync, the simulator's control socket, the status socket, the fleet
and discovery channels) speaks frames of this shape, so one reader bounds the
size before anything is parsed (msgpack's own limits set to the same bound),
refuses a type the channel does not carry by name, and hands the map to the
payload's own checking ``decode`` (schema version under ``"v"``, every field
type- and range-checked, NaN refused where a finite number is meant).

A channel is a name and the payload classes it carries; its errors are
:class:`PayloadError` with ``msg_type`` the channel's name for frame-level
faults (``oversized``, ``malformed``, ``unknown_type``) and the payload's type
for a field's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, Iterable, TypeVar

import msgpack

from contract.payloads.base import Payload, PayloadError

TYPE_KEY = "type"

P = TypeVar("P", bound=Payload)


def unpack_map(frame: bytes, *, max_bytes: int, channel: str) -> Any:
    """The msgpack value of one untrusted frame, bounded by ``max_bytes``; PayloadError if it is not msgpack."""
    if not isinstance(frame, (bytes, bytearray, memoryview)):
        raise PayloadError(channel, "(frame)", f"not bytes but {type(frame).__name__}", reason="malformed")
    if len(frame) > max_bytes:
        raise PayloadError(channel, "(frame)", f"{len(frame)} bytes exceed {max_bytes}", reason="oversized")
    try:
        return msgpack.unpackb(frame, raw=False, strict_map_key=True, max_bin_len=max_bytes, max_str_len=max_bytes,
                               max_array_len=max_bytes, max_map_len=max_bytes, max_ext_len=max_bytes)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many types for hostile input
        raise PayloadError(channel, "(frame)", f"not msgpack: {type(exc).__name__}", reason="malformed") from exc


@dataclass(frozen=True)
class Channel(Generic[P]):
    """The payload types one socket carries, and how big a frame on it may be."""

    name: str
    kinds: tuple[type[P], ...]
    max_bytes: int
    json: bool = False  # the simulator's UDP control socket and the status socket speak JSON, not msgpack

    def __post_init__(self) -> None:
        types = [k.MSG_TYPE for k in self.kinds]
        if len(set(types)) != len(types):
            raise ValueError(f"channel {self.name}: two payload classes share a message type")

    def kind(self, msg_type: Any) -> type[P] | None:
        return next((k for k in self.kinds if k.MSG_TYPE == msg_type), None)

    def pack(self, payload: P) -> bytes:
        """The frame of one payload; raises PayloadError for one this channel does not carry or would refuse."""
        if self.kind(payload.MSG_TYPE) is not type(payload):
            raise PayloadError(self.name, TYPE_KEY, f"{type(payload).__name__} is not carried here",
                               reason="unknown_type")
        doc = {TYPE_KEY: payload.MSG_TYPE, **payload.encode()}
        frame = (json.dumps(doc, allow_nan=False, separators=(",", ":")).encode() if self.json
                 else msgpack.packb(doc, use_bin_type=True))
        self.unpack(frame)  # never send what the receiver would refuse
        return frame

    def unpack(self, frame: bytes) -> P:
        """Parse and check one untrusted frame; raises :class:`PayloadError` with a short ``reason``."""
        doc = self._parse(frame)
        kind = self.kind(doc.get(TYPE_KEY)) if isinstance(doc, dict) and isinstance(doc.get(TYPE_KEY), str) else None
        if kind is None:
            got = doc.get(TYPE_KEY) if isinstance(doc, dict) else type(doc).__name__
            raise PayloadError(self.name, TYPE_KEY, f"not a {self.name} frame ({str(got)[:40]!r}); "
                               f"one of {sorted(k.MSG_TYPE for k in self.kinds)}", reason="unknown_type")
        return kind.decode(doc)

    def _parse(self, frame: bytes) -> Any:
        if not self.json:
            return unpack_map(frame, max_bytes=self.max_bytes, channel=self.name)
        if not isinstance(frame, (bytes, bytearray)):
            raise PayloadError(self.name, "(frame)", f"not bytes but {type(frame).__name__}", reason="malformed")
        if len(frame) > self.max_bytes:
            raise PayloadError(self.name, "(frame)", f"{len(frame)} bytes exceed {self.max_bytes}", reason="oversized")
        try:
            return json.loads(bytes(frame).decode("utf-8"), parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            raise PayloadError(self.name, "(frame)", f"not JSON: {str(exc)[:80]}", reason="malformed") from exc


def _no_constant(name: str) -> Any:
    """JSON's NaN and Infinity are not JSON: a frame that carries them is malformed."""
    raise ValueError(f"{name} is not a JSON number")


def channel(name: str, kinds: Iterable[type[P]], max_bytes: int, *, json: bool = False) -> Channel[P]:
    return Channel(name, tuple(kinds), max_bytes, json)
