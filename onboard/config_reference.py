"""The configuration reference (Markdown) generated from the typed config, so it cannot drift.

Every key, its type, default and range come from the :class:`~onboard.config.AerieConfig`
dataclass tree itself (the range is the one the loader enforces,
:func:`common.typed_config.value_range`); its meaning is the comment above the
field in the dataclass source, or else above the key in the repository's
``config.yaml`` (:mod:`onboard.field_comments`). A new field therefore appears in
the reference the moment it exists, and a test compares docs/CONFIGURATION.md's
copy with this output.

``python -m onboard.config_reference`` prints the reference;
``python -m onboard.config_reference --update docs/CONFIGURATION.md`` (``make
config-reference``) rewrites the part of that file between the
``config-reference`` markers.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from onboard.config import AerieConfig
from onboard.field_comments import dataclass_comments, yaml_file_comments
from common.typed_config import to_dict, value_range

START_MARKER = "<!-- config-reference:start -->"
END_MARKER = "<!-- config-reference:end -->"
# The documented example of every key, beside the package in a checkout.
SHIPPED_YAML = Path(__file__).resolve().parents[1] / "config.yaml"
# Where the repository keeps the reference; `make config-reference` rewrites it.
REFERENCE_DOC = Path(__file__).resolve().parents[1] / "docs" / "CONFIGURATION.md"


@dataclass(frozen=True)
class KeyDoc:
    key: str          # dotted path in config.yaml, e.g. safety.geofence.action
    type: str         # the annotation as written in the dataclass
    default: str      # the default as YAML would spell it
    range: str        # what the loader accepts beyond the type: "0 .. inf", "one of ...", or ""
    doc: str          # the comment documenting it ("" if there is none)


@dataclass(frozen=True)
class Section:
    name: str         # dotted path of the section ("" for the top level)
    keys: tuple[KeyDoc, ...]


def _annotations(cls: type) -> dict[str, str]:
    """Field annotations as written (``from __future__ import annotations`` keeps them as strings)."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        out.update({k: v if isinstance(v, str) else getattr(v, "__name__", str(v))
                    for k, v in vars(klass).get("__annotations__", {}).items()})
    return out


def _number(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _is_numeric(tp: Any) -> bool:
    """A number the loader range-checks: int or float, alone or in an Optional (bool is not one)."""
    if get_origin(tp) in (typing.Union, types.UnionType):
        return any(_is_numeric(a) for a in get_args(tp) if a is not type(None))
    return tp in (int, float)


def accepted_range(f: dataclasses.Field, tp: Any) -> str:
    """What :func:`common.typed_config.build` accepts for field ``f`` of type ``tp`` beyond its type."""
    if _is_numeric(tp):
        lo, hi = value_range(f)
        return f"{_number(lo)} .. {_number(hi)}"
    if get_origin(tp) is typing.Literal:
        return "one of " + ", ".join(yaml_value(a) for a in get_args(tp))
    return ""


def yaml_value(value: Any) -> str:
    """A default as it would be written in config.yaml (flow style)."""
    value = to_dict(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value)


def sections(config: Any, *, yaml_path: Path | None = SHIPPED_YAML) -> list[Section]:
    """One section per dataclass in the tree of ``config`` (an instance: its values are the defaults)."""
    yaml_docs = yaml_file_comments(yaml_path) if yaml_path is not None else {}
    out: list[Section] = []

    def walk(obj: Any, prefix: str) -> None:
        cls = type(obj)
        docs, written, hints = dataclass_comments(cls), _annotations(cls), get_type_hints(cls)
        keys: list[KeyDoc] = []
        nested: list[tuple[Any, str]] = []
        for f in dataclasses.fields(obj):
            if not f.init:
                continue
            dotted = f"{prefix}.{f.name}" if prefix else f.name
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                nested.append((value, dotted))
                continue
            keys.append(KeyDoc(dotted, written.get(f.name, "?"), yaml_value(value),
                               accepted_range(f, hints.get(f.name, Any)),
                               docs.get(f.name) or yaml_docs.get(dotted, "")))
        if keys:
            out.append(Section(prefix, tuple(keys)))
        for value, dotted in nested:
            walk(value, dotted)

    walk(config, "")
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(secs: list[Section]) -> str:
    """Markdown: one heading and one table per section."""
    parts: list[str] = []
    for sec in secs:
        parts.append(f"### `{sec.name}`" if sec.name else "### Top level")
        parts.append("")
        parts.append("| Key | Type | Default | Range | Meaning |")
        parts.append("|---|---|---|---|---|")
        for k in sec.keys:
            accepted = f"`{_cell(k.range)}`" if k.range else "–"
            parts.append(f"| `{k.key}` | `{_cell(k.type)}` | `{_cell(k.default)}` | {accepted} | {_cell(k.doc)} |")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def reference_markdown() -> str:
    """The reference of the shipped defaults: what docs/CONFIGURATION.md carries between the markers."""
    return render(sections(AerieConfig()))


def between_markers(text: str) -> str | None:
    """What ``text`` holds between the markers (stripped of the blank lines around it), or None."""
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < start:
        return None
    return text[start + len(START_MARKER):end].strip("\n") + "\n"


def replace_between_markers(text: str, block: str) -> str:
    """``text`` with the part between the markers replaced by ``block``; ValueError without markers."""
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < start:
        raise ValueError(f"no {START_MARKER} ... {END_MARKER} pair")
    return text[:start + len(START_MARKER)] + "\n" + block.rstrip("\n") + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onboard.config_reference",
                                     description="Print the configuration reference (Markdown)")
    parser.add_argument("--update", metavar="FILE", default=None,
                        help=f"rewrite FILE between {START_MARKER} and {END_MARKER} instead of printing")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    block = reference_markdown()
    if args.update is None:
        sys.stdout.write(block)
        return 0
    path = Path(args.update)
    try:
        path.write_text(replace_between_markers(path.read_text(encoding="utf-8"), block), encoding="utf-8")
    except (OSError, ValueError) as exc:
        print(f"config_reference: {path}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
