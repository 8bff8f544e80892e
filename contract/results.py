"""One episode's results folder, the layout of docs/ARCHITECTURE.md "Results on disk":

    <folder>/trajectory.json                   one entry per step
    <folder>/episode_summary.json              what the episode came to
    <folder>/rgb_images/rgb_timestep_XXXX.png  the camera frame of each step
    <folder>/semantic_images/landmark_<id>_step_XXXX.png, semantic_<id>_step_XXXX.png

The supervisor, the agent and the benchmark all write through here, so the
files a person or the ground reads have one shape and one writer. JSON files
are replaced atomically: a crash mid-write leaves the previous version, never
half a file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

TRAJECTORY_FILE = "trajectory.json"
SUMMARY_FILE = "episode_summary.json"
RGB_DIR = "rgb_images"
SEMANTIC_DIR = "semantic_images"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def write_json(path: str | Path, doc: Any) -> Path:
    """A JSON document (a benchmark's results, an outcome) written atomically, parent folders made."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_json(path, doc)
    return path


def _write_json(path: Path, doc: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_episode(folder: str | Path, trajectory: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> Path:
    """Write ``trajectory.json`` and ``episode_summary.json`` into ``folder`` (created); returns it."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / TRAJECTORY_FILE, list(trajectory))
    _write_json(out / SUMMARY_FILE, dict(summary))
    return out


def read_summary(folder: str | Path) -> dict[str, Any]:
    return json.loads((Path(folder) / SUMMARY_FILE).read_text(encoding="utf-8"))


def rgb_image_path(folder: str | Path, timestep: int) -> Path:
    """Where the camera frame of ``timestep`` goes (its folder is created)."""
    out = Path(folder) / RGB_DIR
    out.mkdir(parents=True, exist_ok=True)
    return out / f"rgb_timestep_{timestep:04d}.png"


def map_file_names(episode_id: str, step: int) -> tuple[str, str]:
    """(landmark map, semantic map) file names of ``step``; the id is made a safe file name."""
    eid = _UNSAFE.sub("_", episode_id) or "episode"
    return f"landmark_{eid}_step_{step:04d}.png", f"semantic_{eid}_step_{step:04d}.png"


def map_image_paths(folder: str | Path, episode_id: str, step: int) -> tuple[Path, Path]:
    """Where the two maps of ``step`` go (their folder is created)."""
    out = Path(folder) / SEMANTIC_DIR
    out.mkdir(parents=True, exist_ok=True)
    landmark, semantic = map_file_names(episode_id, step)
    return out / landmark, out / semantic
