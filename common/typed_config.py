"""Turn plain YAML mappings into frozen dataclasses, rejecting what they do not declare.

A typo in a flight configuration (``alt_cieling_m``) silently falling back to
a default is how a vehicle ends up above its ceiling, so every unknown key is
an error that names the key, its dotted path and the file.

Numbers are range-checked here too, once for every key: a NaN geofence radius
compares false with everything and so slips past any ``x <= 0`` test written
after it. Every float anywhere in a file must be finite, and every numeric
field must lie within its range: the one declared with :func:`ranged`, or by
default ``0 .. inf`` (a negative timeout, rate, count or distance is never
meant). The checks are written ``lo <= x <= hi`` so that NaN fails them.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from contract.quoting import clip, short

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration file is malformed; the message names the file and key.

    The message is clipped to a few hundred characters whatever built it: it ends up in logs, outcome
    files and stderr, and must never cost what the file's content could make it cost.
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(clip(str(message)))


RANGE = "range"
# The range of a numeric field that declares none: no negative numbers.
DEFAULT_RANGE = (0, math.inf)


def ranged(default: Any, lo: float, hi: float) -> Any:
    """A dataclass field with a default and the closed range ``lo .. hi`` its value must lie in."""
    if not lo <= default <= hi:
        raise ValueError(f"default {default!r} outside its own range {lo}..{hi}")
    return dataclasses.field(default=default, metadata={RANGE: (lo, hi)})


def value_range(f: dataclasses.Field) -> tuple[float, float]:
    """The closed range a numeric field's value must lie in."""
    return f.metadata.get(RANGE, DEFAULT_RANGE)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_range(f: dataclasses.Field, value: Any, *, where: str, source: str | Path) -> None:
    """Raise a ConfigError naming ``where`` unless a numeric ``value`` lies in ``f``'s range."""
    if not _is_number(value):
        return
    lo, hi = value_range(f)
    if not lo <= value <= hi:  # NaN fails this, as it must
        raise ConfigError(f"{source}: '{where}' = {short(value)} is outside its range {_num(lo)} .. {_num(hi)}")


def _num(x: float) -> str:
    return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:g}"


def build(cls: type[T], data: Any, *, where: str = "", source: str | Path = "<config>") -> T:
    """Build dataclass ``cls`` from ``data`` (a mapping), recursing into nested dataclasses."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: '{where or '<root>'}' must be a mapping, got {type(data).__name__}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted((k for k in data if k not in fields), key=short)  # any key type sorts by its short repr
    if unknown:
        names = ", ".join(f"'{_join(where, short(k) if not isinstance(k, str) else clip(k, 60))}'"
                          for k in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ConfigError(f"{source}: unknown key {names} (known here: {', '.join(sorted(fields))})")
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _coerce(hints[name], value, where=_join(where, name), source=source)
        check_range(fields[name], kwargs[name], where=_join(where, name), source=source)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ConfigError(f"{source}: '{where or '<root>'}': {clip(str(exc), 300)}") from exc


def load_file(cls: type[T], path: str | Path, *, limits: Any = None, follow_symlinks: bool = True) -> T:
    """Read a YAML (or JSON) file and build ``cls`` from it; every failure is a ConfigError naming the file.

    The file goes through :mod:`common.untrusted_yaml` (``limits``: its ``YamlLimits``, default those of
    a config file); ``follow_symlinks=False`` refuses a file that is a symbolic link.
    """
    from common import untrusted_yaml

    path = Path(path)
    data = untrusted_yaml.load(path, limits=limits or untrusted_yaml.CONFIG_LIMITS, follow_symlinks=follow_symlinks)
    return build(cls, data, source=path)


def to_dict(obj: Any) -> Any:
    """The inverse of :func:`build`: plain data suitable for YAML or msgpack."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _coerce(tp: Any, value: Any, *, where: str, source: str | Path) -> Any:
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(option, value, where=where, source=source)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{source}: '{where}' has an invalid value {short(value)}")
    if dataclasses.is_dataclass(tp):
        return build(tp, value, where=where, source=source)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{source}: '{where}' must be a list, got {type(value).__name__}")
        args = get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise ConfigError(f"{source}: '{where}' must have {len(args)} items, got {len(value)}")
            return tuple(_coerce(a, v, where=f"{where}[{i}]", source=source) for i, (a, v) in enumerate(zip(args, value)))
        item = args[0] if args else Any
        items = [_coerce(item, v, where=f"{where}[{i}]", source=source) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: '{where}' must be a mapping, got {type(value).__name__}")
        _, vt = get_args(tp) or (Any, Any)
        return {k: _coerce(vt, v, where=_join(where, k), source=source) for k, v in value.items()}
    if origin is typing.Literal:
        if value not in get_args(tp):
            raise ConfigError(f"{source}: '{where}' must be one of {list(get_args(tp))}, got {short(value)}")
        return value
    if tp is Any:
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: '{where}' must be true or false, got {short(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: '{where}' must be a number, got {short(value)}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            number = math.inf
        if not math.isfinite(number):
            raise ConfigError(f"{source}: '{where}' must be a finite number, got {short(value)}")
        return number
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: '{where}' must be an integer, got {short(value)}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: '{where}' must be a string, got {short(value)}")
        return value
    return value
