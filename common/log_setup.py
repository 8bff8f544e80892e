"""Structured logs: one JSON object per line to a file, readable text to the terminal.

A flight log is evidence after an incident, so the file form is machine
readable and never interleaves partial lines; the terminal form is for people.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LoggingConfig:
    # Minimum level: DEBUG, INFO, WARNING, ERROR.
    level: str = "INFO"
    # JSON-lines log file; empty disables file logging.
    file: str = ""

    def __post_init__(self) -> None:
        if self.level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError(f"logging.level must be DEBUG/INFO/WARNING/ERROR, got {self.level!r}")


class JsonLineFormatter(logging.Formatter):
    """One JSON object per record; extra fields given via ``extra={"fields": {...}}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "t": round(record.created, 6),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        text = f"{stamp} {record.levelname[0]} {record.name}: {record.getMessage()}"
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict) and fields:
            text += " " + " ".join(f"{k}={v}" for k, v in fields.items())
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure_logging(cfg: LoggingConfig, *, stream=None) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_aerie", False):
            root.removeHandler(handler)
    root.setLevel(cfg.level.upper())
    console = logging.StreamHandler(stream or sys.stderr)
    console.setFormatter(TextFormatter())
    console._aerie = True  # type: ignore[attr-defined]
    root.addHandler(console)
    if cfg.file:
        Path(cfg.file).expanduser().parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(Path(cfg.file).expanduser(), encoding="utf-8")
        file_handler.setFormatter(JsonLineFormatter())
        file_handler._aerie = True  # type: ignore[attr-defined]
        root.addHandler(file_handler)
