"""The one parser for YAML that comes from outside: mission files, config files.

``yaml.safe_load`` runs no code, but it will spend whatever the document asks
for: a file nested a few thousand deep overflows Python's stack in the
composer (a RecursionError, not a YAMLError), a few hundred bytes of nested
aliases ("billion laughs") stand for billions of nodes that anything walking
or printing the result expands, and a 100 MB file is read and parsed whole.
Mapping keys of other types than strings (``1: a`` beside ``typo: b``) break
code that sorts or joins them.

So every limit is checked before the cost it bounds: the size before a byte
is parsed, the depth as each node is entered, and the expansion as each node
is finished (an alias counts as everything it stands for; a scalar as one
node per 64 characters). Every failure, whatever PyYAML or Python raised, is
a :class:`~common.typed_config.ConfigError` naming the file, with a message
of bounded length: the error the callers of the typed loaders already handle.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from contract.quoting import clip, short
from common.typed_config import ConfigError

# A scalar costs one node per this many characters in the expansion count.
_CHARS_PER_NODE = 64


@dataclass(frozen=True)
class YamlLimits:
    # Largest file read at all, bytes (checked before reading, and again by what was read).
    max_bytes: int = 256 * 1024
    # Deepest nesting of mappings and sequences.
    max_depth: int = 64
    # Nodes the document stands for once every alias is expanded.
    max_nodes: int = 50_000
    # Aliases (``*name``) in one document.
    max_aliases: int = 1_000


# The shipped config.yaml, every key with its documentation, is a sixth of this size.
CONFIG_LIMITS = YamlLimits()
# A mission is an instruction, a name, a step budget and a fence polygon.
MISSION_LIMITS = YamlLimits(max_bytes=64 * 1024, max_depth=16, max_nodes=20_000, max_aliases=100)


class _Refused(Exception):
    """A limit was reached while composing; becomes a ConfigError with the file's name."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str, limits: YamlLimits) -> None:
        super().__init__(stream)
        self._limits = limits
        self._depth = 0
        self._aliases = 0
        self._nodes: dict[int, int] = {}  # id(node) -> nodes it stands for, once finished

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > self._limits.max_aliases:
                raise _Refused(f"more than {self._limits.max_aliases} aliases")
            node = super().compose_node(parent, index)
            if id(node) not in self._nodes:  # an alias to a node still open: the document contains itself
                raise _Refused("an alias refers to a node that contains it (a recursive document)")
            return node
        self._depth += 1
        if self._depth > self._limits.max_depth:
            raise _Refused(f"nested deeper than {self._limits.max_depth} levels")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if isinstance(node, yaml.ScalarNode):
            count = 1 + len(node.value) // _CHARS_PER_NODE
        elif isinstance(node, yaml.MappingNode):
            count = 1 + sum(self._nodes[id(k)] + self._nodes[id(v)] for k, v in node.value)
        else:
            count = 1 + sum(self._nodes[id(item)] for item in node.value)
        if count > self._limits.max_nodes:
            raise _Refused(f"expands to more than {self._limits.max_nodes} nodes (aliases counted in full)")
        self._nodes[id(node)] = count
        return node

    def construct_mapping(self, node: Any, deep: bool = False) -> dict:
        mapping = super().construct_mapping(node, deep=deep)
        for key in mapping:
            if not isinstance(key, str):
                raise _Refused(f"mapping key {short(key)} (line {node.start_mark.line + 1}) is not a string")
        return mapping


def parse(text: str | bytes, *, source: str | Path = "<yaml>", limits: YamlLimits = CONFIG_LIMITS) -> Any:
    """The plain data of one YAML (or JSON) document, or a ConfigError naming ``source``."""
    if len(text) > limits.max_bytes:
        raise ConfigError(f"{source}: larger than {limits.max_bytes} bytes")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    loader = None
    try:
        loader = _BoundedLoader(text, limits)  # the reader checks the characters here already
        return loader.get_single_data()
    except _Refused as exc:
        raise ConfigError(f"{source}: refused: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {clip(str(exc), 300)}") from None
    except Exception as exc:  # PyYAML lets some bad scalars through as ValueError etc.: still the file's fault
        raise ConfigError(f"{source}: not valid YAML: {type(exc).__name__}: {clip(str(exc), 200)}") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_bytes(path: str | Path, *, max_bytes: int, follow_symlinks: bool = True) -> bytes:
    """A regular file's bytes, at most ``max_bytes`` of them, or a ConfigError naming it.

    ``follow_symlinks=False`` opens with O_NOFOLLOW: a link in a queue directory is refused rather than
    read as whatever it points to. O_NONBLOCK keeps a FIFO put there from blocking the open.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and exc.errno in (errno.ELOOP, errno.EMLINK):
            raise ConfigError(f"{path}: is a symbolic link; refused (not followed)") from None
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}: not a regular file")
        if st.st_size > max_bytes:
            raise ConfigError(f"{path}: larger than {max_bytes} bytes ({st.st_size})")
        chunks, got = [], 0
        while got <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > max_bytes:  # grew while read
            raise ConfigError(f"{path}: larger than {max_bytes} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    finally:
        os.close(fd)


def load(path: str | Path, *, limits: YamlLimits = CONFIG_LIMITS, follow_symlinks: bool = True) -> Any:
    """:func:`parse` of the file at ``path``, read through :func:`read_bytes`."""
    data = read_bytes(path, max_bytes=limits.max_bytes, follow_symlinks=follow_symlinks)
    return parse(data, source=path, limits=limits)
