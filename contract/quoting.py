"""Quoting outside input inside an error message, at a bounded length.

An error message is copied into logs, outcome files, telemetry events and
stderr; one that embeds ``repr`` of what a file held costs as much as the
file (or, through YAML aliases, as much as its expansion). Every message that
quotes a value from outside goes through here, so its size is the writer's
choice, not the attacker's.
"""

from __future__ import annotations

import reprlib
from typing import Any

# What an error message may be in all, and what one quoted value may take of it.
MESSAGE_MAX_CHARS = 600
VALUE_MAX_CHARS = 80

_repr = reprlib.Repr()
_repr.maxstring = VALUE_MAX_CHARS
_repr.maxother = VALUE_MAX_CHARS
_repr.maxlevel = 2
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 4


def clip(text: str, limit: int = MESSAGE_MAX_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def short(value: Any, limit: int = VALUE_MAX_CHARS) -> str:
    """A repr of ``value`` of at most about ``limit`` characters, whatever its size or nesting.

    Never raises: an integer too long for ``repr`` (Python refuses beyond 4300 digits) is described
    instead of shown.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        text = _repr.repr(value)
    except Exception as exc:  # a value whose repr fails is still named
        text = f"<{type(value).__name__} (repr failed: {type(exc).__name__})>"
    return clip(text, limit)
