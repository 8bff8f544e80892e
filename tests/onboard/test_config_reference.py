"""The configuration reference covers the whole typed config and docs/CONFIGURATION.md carries it unchanged."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

import pytest
import yaml

from onboard.config import AerieConfig
from onboard.config_reference import (END_MARKER, REFERENCE_DOC as GENERATOR_TARGET, START_MARKER, between_markers,
                                      reference_markdown, replace_between_markers, sections)
from onboard.field_comments import dataclass_comments, yaml_comments
from common.typed_config import ConfigError, build, ranged, to_dict, value_range

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(?P<key>[^`]+)` \| `(?P<type>[^`]+)` \| `(?P<default>[^`]*)` \| (?:`(?P<range>[^`]*)`|–) \| "
                 r"(?P<doc>.*) \|$")
REFERENCE_DOC = REPO / "docs" / "CONFIGURATION.md"
REGENERATE = "make config-reference"


def _leaves(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted key -> default of every non-dataclass field under ``obj``."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        dotted = f"{prefix}.{f.name}" if prefix else f.name
        value = getattr(obj, f.name)
        out.update(_leaves(value, dotted) if dataclasses.is_dataclass(value) else {dotted: value})
    return out


def _rows(markdown: str) -> dict[str, re.Match[str]]:
    return {m["key"]: m for m in map(ROW.match, markdown.splitlines()) if m}


def test_every_key_of_the_config_tree_has_a_documented_row() -> None:
    defaults = _leaves(AerieConfig())
    rows = _rows(reference_markdown())
    assert sorted(rows) == sorted(defaults)
    undocumented = [k for k, m in rows.items() if not m["doc"].strip()]
    assert undocumented == [], "document these fields with a comment above them in their dataclass"
    for key, default in defaults.items():
        # A default from the reference pasted into config.yaml loads as that same default.
        assert yaml.safe_load(rows[key]["default"]) == to_dict(default), key


def test_each_dataclass_is_one_section_under_its_own_heading() -> None:
    text = reference_markdown()
    names = [s.name for s in sections(AerieConfig())]
    assert names[0] == "" and {"safety", "safety.geofence", "memory", "memory.anchors"} <= set(names)
    headings = re.findall(r"^### `([^`]+)`$", text, flags=re.M)
    assert headings == names[1:]
    for sec in sections(AerieConfig()):
        assert all(k.key.rpartition(".")[0] == sec.name for k in sec.keys)


@dataclass(frozen=True)
class _Inner:
    # Shared by both bounds.
    low: float = 1.0
    high: float = 2.0

    limit: int = 3            # no comment above: documented in the YAML file only


@dataclass(frozen=True)
class _Outer:
    inner: _Inner = dataclasses.field(default_factory=_Inner)
    name: str = "x | y"


_YAML = """\
# Outer name, with a pipe.
name: x | y

inner:
  low: 1.0
  high: 2.0

  # Only the YAML says this.
  limit: 3
"""


def test_comments_come_from_the_dataclass_source_then_the_yaml_file(tmp_path: Path) -> None:
    assert dataclass_comments(_Inner) == {"low": "Shared by both bounds.", "high": "Shared by both bounds."}
    assert yaml_comments(_YAML) == {"name": "Outer name, with a pipe.", "inner.limit": "Only the YAML says this."}
    (tmp_path / "c.yaml").write_text(_YAML)
    by_name = {s.name: s for s in sections(_Outer(), yaml_path=tmp_path / "c.yaml")}
    inner, outer = by_name["inner"], by_name[""]
    assert [(k.key, k.type, k.default, k.range, k.doc) for k in inner.keys] == [
        ("inner.low", "float", "1.0", "0 .. inf", "Shared by both bounds."),
        ("inner.high", "float", "2.0", "0 .. inf", "Shared by both bounds."),
        ("inner.limit", "int", "3", "0 .. inf", "Only the YAML says this.")]
    assert (outer.keys[0].range, outer.keys[0].doc) == ("", "Outer name, with a pipe.")


@dataclass(frozen=True)
class _Ranged:
    # A declared range.
    share: float = ranged(0.5, 0.0, 1.0)
    # An optional count.
    count: Optional[int] = None
    # A choice.
    mode: Literal["land", "rtl"] = "land"
    # A switch.
    on: bool = True


def test_the_range_column_is_what_the_loader_accepts() -> None:
    [sec] = sections(_Ranged(), yaml_path=None)
    assert {k.key: k.range for k in sec.keys} == {"share": "0 .. 1", "count": "0 .. inf",
                                                    "mode": "one of land, rtl", "on": ""}
    build(_Ranged, {"share": 1.0, "count": 7, "mode": "rtl"})
    for bad in ({"share": 1.01}, {"count": -1}, {"mode": "hover"}):
        with pytest.raises(ConfigError):
            build(_Ranged, bad)


def test_every_numeric_key_shows_the_range_its_field_declares() -> None:
    rows = _rows(reference_markdown())
    declared = {}

    def walk(obj: Any, prefix: str) -> None:
        for f in dataclasses.fields(obj):
            dotted = f"{prefix}.{f.name}" if prefix else f.name
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                walk(value, dotted)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                declared[dotted] = value_range(f)

    walk(AerieConfig(), "")
    assert declared, "the config has numeric keys"
    for key, (lo, hi) in declared.items():
        shown_lo, _, shown_hi = rows[key]["range"].partition(" .. ")
        assert (float(shown_lo.replace(",", "")), float(shown_hi.replace(",", ""))) == (lo, hi), key


def test_update_rewrites_only_the_part_between_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "README.md"
    doc.write_text(f"# Title\n\nbefore\n{START_MARKER}\nstale table\n{END_MARKER}\nafter\n")
    done = subprocess.run([sys.executable, "-m", "onboard.config_reference", "--update", str(doc)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = doc.read_text()
    assert text.startswith("# Title\n\nbefore\n") and text.endswith(f"{END_MARKER}\nafter\n")
    assert between_markers(text) == reference_markdown() and "stale table" not in text
    assert replace_between_markers(text, reference_markdown()) == text          # idempotent
    (tmp_path / "plain.md").write_text("no markers\n")
    assert subprocess.run([sys.executable, "-m", "onboard.config_reference", "--update", str(tmp_path / "plain.md")],
                          cwd=REPO, capture_output=True, timeout=60).returncode == 1


def test_docs_configuration_carries_the_generated_reference() -> None:
    assert GENERATOR_TARGET == REFERENCE_DOC
    block = between_markers(REFERENCE_DOC.read_text(encoding="utf-8"))
    assert block is not None, f"docs/CONFIGURATION.md needs {START_MARKER} ... {END_MARKER}; then run `{REGENERATE}`"
    assert block == reference_markdown(), f"docs/CONFIGURATION.md's reference is stale: run `{REGENERATE}`"


def test_make_config_reference_rewrites_docs_configuration() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nconfig-reference:", 1)[1].split("\n\n", 1)[0]
    assert "-m onboard.config_reference --update docs/CONFIGURATION.md" in recipe
