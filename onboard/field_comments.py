"""The ``#`` comments that document configuration keys, read from where they are written.

Aerie documents each config key once, as a comment above its dataclass field
(and the same text above the key in ``config.yaml``). Reading those comments
back, instead of copying them into a second place, is what keeps a generated
reference from drifting. Both readers follow the house convention: a comment
block documents the key right below it and any keys that follow it without a
blank line (``altitude_floor_m`` and ``altitude_ceiling_m`` share one comment).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from pathlib import Path

_YAML_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?:\s|$)")


def _join(lines: list[str]) -> str:
    return " ".join(line.strip().lstrip("#").strip() for line in lines).strip()


def dataclass_comments(cls: type) -> dict[str, str]:
    """Field name -> the comment above it in ``cls``'s source ({} when the source is unavailable)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    [node] = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)]
    out: dict[str, str] = {}
    previous: ast.AnnAssign | None = None
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            block: list[str] = []
            i = stmt.lineno - 2                      # the line above, 0-based
            while i >= 0 and lines[i].strip().startswith("#"):
                block.insert(0, lines[i])
                i -= 1
            if block:
                out[stmt.target.id] = _join(block)
            elif previous is not None and previous.end_lineno == stmt.lineno - 1:
                out[stmt.target.id] = out.get(previous.target.id, "")    # type: ignore[union-attr]
            previous = stmt
        else:
            previous = None
    return {k: v for k, v in out.items() if v}


def yaml_comments(text: str) -> dict[str, str]:
    """Dotted key (``safety.geofence.action``) -> the comment above it in a block-style YAML file."""
    out: dict[str, str] = {}
    stack: list[tuple[int, str]] = []                # (indent, key) of the enclosing mappings
    block: list[str] = []
    inherited = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            block, inherited = [], ""
            continue
        if stripped.startswith("#"):
            block.append(stripped)
            continue
        match = _YAML_KEY.match(line)
        if match is None:                            # a continuation line or a list item
            block = []
            continue
        indent, key = len(match["indent"]), match["key"]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        dotted = ".".join([k for _, k in stack] + [key])
        doc = _join(block) if block else inherited
        if doc:
            out[dotted] = doc
        opens_mapping = not line[match.end():].split("#")[0].strip()
        block, inherited = [], "" if opens_mapping else doc    # a section's comment is not its first key's
        stack.append((indent, key))
    return out


def yaml_file_comments(path: Path) -> dict[str, str]:
    """:func:`yaml_comments` of a file; {} when it is not there (an installed package ships none)."""
    try:
        return yaml_comments(path.read_text(encoding="utf-8"))
    except OSError:
        return {}
