"""Every shell command README.md shows still works here: its make target exists, its aerie command is real.

README.md is the front door: at most ``MAX_LINES`` lines, linking the documents to read on, and every
relative link in it and in ``docs/`` leads to a file the repository has.

The fast checks never fly anything: a ``make`` line is dry-run (``make -n``, the
variables as written), an ``aerie`` line must resolve to a registered command
whose ``--help`` exits 0, prints that command's own usage (so a typo in a
sub-command is not swallowed as a positional) and lists every ``--option`` the
line uses, and repository files it names must exist. Commands a ``# in OTHER:``
comment places in another project are skipped with that reason. The quick
start is run for real, in a fresh clone, by the slow test.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from aerie.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SHELL_LANGS = frozenset({"sh", "bash", "shell", "console"})
# The commands under "## Quick start", in order; a fast test keeps this equal to the README.
QUICK_START = ("make test", "make demo")
# Options whose value is a file the command writes, not one the repository must hold.
OUTPUT_OPTIONS = frozenset({"--out", "--json"})
# The front door stays short: the figures live in docs/BENCHMARKS.md, the keys in docs/CONFIGURATION.md.
MAX_LINES = 300
# Where the README sends a reader on; each must be linked from it.
READ_ON = ("docs/ARCHITECTURE.md", "docs/BENCHMARKS.md", "docs/CONFIGURATION.md", "docs/FAULTS.md",
           "deploy/README.md", "docs/PX4_SITL.md")
# Documents being written on another branch: linked before they land, checked like any other once they exist.
LANDING: frozenset[str] = frozenset()

_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^```\s*(?P<lang>[A-Za-z0-9_+-]*)\s*$")
_WHERE = re.compile(r"^#\s*in (?P<where>[A-Za-z0-9_.-]+)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class ShellCommand:
    line: int                 # 1-based line in README.md where the command starts
    heading: str              # the nearest heading above its block
    text: str                 # the command without prompt and trailing comment
    argv: tuple[str, ...]
    where: str                # "Aerie", or the other project a "# in X:" comment names

    @property
    def id(self) -> str:
        return f"L{self.line}:{self.text[:60]}"


def shell_commands(text: str) -> list[ShellCommand]:
    """Commands in the ```sh / ```bash / ```console blocks (``$ `` prompts: only prompted lines count)."""
    out: list[ShellCommand] = []
    heading, lang, where = "", None, "Aerie"
    pending: tuple[int, str] | None = None           # a command continued with a trailing backslash
    for number, line in enumerate(text.splitlines(), start=1):
        fence = _FENCE.match(line.strip())
        if lang is None:
            if fence is not None:
                lang, where = fence["lang"].lower(), "Aerie"
            elif line.startswith("#"):
                heading = line.lstrip("#").strip()
            continue
        if fence is not None and not fence["lang"]:
            lang, pending = None, None
            continue
        if lang not in SHELL_LANGS:
            continue
        stripped = line.strip()
        if pending is None:
            if lang == "console":
                if not stripped.startswith("$ "):
                    continue
                stripped = stripped[2:].strip()
            context = _WHERE.match(stripped)
            if context is not None:
                where = context["where"]
                continue
            if not stripped or stripped.startswith("#"):
                continue
            start, body = number, stripped
        else:
            start, body = pending[0], f"{pending[1]} {stripped}"
        if body.endswith("\\"):
            pending = (start, body[:-1].strip())
            continue
        pending = None
        argv = tuple(shlex.split(body, comments=True))
        if argv:
            out.append(ShellCommand(start, heading, shlex.join(argv), argv, where))
    return out


def relative_links(text: str) -> list[str]:
    """Targets of Markdown links that point into the repository (no scheme, no bare anchor), anchors cut off."""
    out = []
    for match in _LINK.finditer(text):
        target = match["target"].split("#", 1)[0]
        if target and not re.match(r"^[a-z][a-z0-9+.-]*:", target):
            out.append(target)
    return out


COMMANDS_IN_README = shell_commands(README.read_text(encoding="utf-8"))
HERE = [c for c in COMMANDS_IN_README if c.where.lower() == "aerie"]


def _param(cmds: list[ShellCommand]) -> list[object]:
    return [pytest.param(c, id=c.id) for c in cmds]


def test_the_parser_reads_prompts_continuations_comments_and_other_projects() -> None:
    sample = ("## Try\n\n```console\n$ aerie world info   # what it holds\nworld: 3 things\n```\n\n"
              "```python\nprint('no')\n```\n\n## Build\n\n```sh\n# in PX4-Autopilot: its own build\n"
              "make px4_sitl\n\n# in Aerie: back home\nmake sitl \\\n  SITL_URL=udpin://0.0.0.0:1\n```\n")
    got = [(c.line, c.heading, c.argv, c.where) for c in shell_commands(sample)]
    assert got == [(4, "Try", ("aerie", "world", "info"), "Aerie"),
                   (16, "Build", ("make", "px4_sitl"), "PX4-Autopilot"),
                   (19, "Build", ("make", "sitl", "SITL_URL=udpin://0.0.0.0:1"), "Aerie")]


def test_the_link_reader_keeps_repository_links_only() -> None:
    sample = ("[a](docs/A.md) [b](https://x.org/b) [c](#local) ![d](docs/d.png) [e](../bench/results/#x)"
              " [f](mailto:me@x.org) [g](a path with spaces)")
    assert relative_links(sample) == ["docs/A.md", "docs/d.png", "../bench/results/"]


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES, "README.md is the front door: move detail into docs/"
    linked = {os.path.normpath(t) for t in relative_links(text)}
    assert [d for d in READ_ON if d not in linked] == []


@pytest.mark.parametrize("doc", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_of_the_repository(doc: Path) -> None:
    targets = {os.path.normpath(os.path.join(os.path.relpath(doc.parent, REPO), t))
               for t in relative_links(doc.read_text(encoding="utf-8"))}
    missing = sorted(t for t in targets if not (REPO / t).exists() and t not in LANDING)
    assert missing == [], f"{doc.relative_to(REPO)} links to files the repository does not have"


def test_the_readme_shows_make_and_aerie_commands() -> None:
    programs = {c.argv[0] for c in HERE}
    assert {"make", "aerie"} <= programs, programs


def test_the_quick_start_constant_is_what_the_readme_shows() -> None:
    shown = tuple(c.text for c in COMMANDS_IN_README if c.heading == "Quick start")
    assert shown == QUICK_START


@pytest.mark.parametrize("cmd", _param([c for c in COMMANDS_IN_README if c.where.lower() != "aerie"]))
def test_commands_of_other_projects_are_not_checked_here(cmd: ShellCommand) -> None:
    pytest.skip(f"README says this runs in {cmd.where}, not in this repository")


@pytest.mark.parametrize("cmd", _param([c for c in HERE if c.argv[0] == "make"]))
def test_make_target_exists(cmd: ShellCommand) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    targets = [a for a in cmd.argv[1:] if "=" not in a and not a.startswith("-")]
    variables = [a for a in cmd.argv[1:] if "=" in a]
    assert targets, f"{cmd.text}: README should name the target (the default goal is not documented)"
    done = subprocess.run(["make", "-n", "-C", str(REPO), *targets, *variables], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, f"{cmd.text}: {done.stderr.strip()}"


def _command_words(argv: tuple[str, ...]) -> list[str]:
    """The leading words that name a command (``ground show``), before options and arguments."""
    words = []
    for a in argv[1:]:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", a):
            break
        words.append(a)
    return words


def _repo_paths(argv: tuple[str, ...]) -> list[str]:
    """Relative paths into directories the repository has (not outputs): they must exist."""
    paths = []
    for previous, a in zip(argv, argv[1:]):
        if previous in OUTPUT_OPTIONS or "/" not in a or a.startswith(("-", "/", "~", "$")):
            continue
        if (REPO / a.split("/")[0]).is_dir():
            paths.append(a)
    return paths


@pytest.mark.parametrize("cmd", _param([c for c in HERE if c.argv[0] == "aerie"]))
def test_aerie_command_is_registered_and_its_help_works(cmd: ShellCommand) -> None:
    words = _command_words(cmd.argv)
    registered = " ".join(words[:2]) if " ".join(words[:2]) in COMMANDS else words[0] if words else ""
    assert registered in COMMANDS, f"{cmd.text}: no registered command (see aerie/cli.py COMMANDS)"
    done = subprocess.run([sys.executable, "-m", "aerie", *words, "--help"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{cmd.text}: --help exited {done.returncode}: {done.stderr[-2000:]}"
    usage = f"usage: aerie {' '.join(words)}"
    assert re.search(rf"^{re.escape(usage)}(\s|$)", done.stdout, flags=re.M), \
        f"{cmd.text}: `aerie {' '.join(words)} --help` does not print its own usage:\n{done.stdout[:500]}"
    options = [a.split("=")[0] for a in cmd.argv if a.startswith("--")]
    unknown = [o for o in options if not re.search(rf"{re.escape(o)}\b", done.stdout)]
    assert unknown == [], f"{cmd.text}: options not in its --help: {unknown}"
    missing = [p for p in _repo_paths(cmd.argv) if not (REPO / p).exists()]
    assert missing == [], f"{cmd.text}: names files the repository does not have: {missing}"


def _package_index_reachable() -> bool:
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "pip"], capture_output=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
def test_quick_start_runs_in_a_fresh_clone(tmp_path: Path) -> None:
    """The committed HEAD, cloned, passes its own quick start (setup from the package index: slow)."""
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("needs git and make")
    if not _package_index_reachable():
        pytest.skip("the package index is not reachable: `make setup` installs from it")
    clone = tmp_path / "aerie"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=600)
    for command in QUICK_START:
        done = subprocess.run(shlex.split(command), cwd=clone, capture_output=True, text=True, timeout=3 * 3600)
        assert done.returncode == 0, f"{command} in a fresh clone: exit {done.returncode}\n{done.stdout[-4000:]}" \
                                     f"\n{done.stderr[-4000:]}"
