"""Typed settings of the vehicle's long-term memory (experience store, anchor graph)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from common.typed_config import ranged


@dataclass(frozen=True)
class AnchorGraphConfig:
    """Place–Anchor memory rules; defaults follow the Place–Anchor design."""

    # Map units one `forward` action moves (the design's d). Poses, anchors and the
    # localisation radius are in map units, so the design's geometry holds at any scale.
    forward_step_units: float = 0.25
    # Metres the drone actually flies for one `forward` action; sets the map scale
    # (metres per map unit = step_length_m / forward_step_units, 20 m by default).
    step_length_m: float = 5.0
    # Degrees one `turn_left` / `turn_right` action rotates the heading.
    turn_angle_deg: float = 30.0
    # A new anchor after this many forward steps since the last anchor (S).
    anchor_every_forward_steps: int = 2
    # Steps between two scene-type observations that update places (place period).
    place_period_steps: int = 20
    # A new place is confirmed after this many consecutive equal scene types (dwell k).
    place_dwell_observations: int = 3
    # Anchors within this distance (map units; 1.5 = 30 m by default) and of the same
    # place type are offered as "same space" localisation hints (r). Never merged.
    localisation_radius: float = 1.5
    # Discovered-context FIFO length (N); entries are re-indexed 1..N on every call.
    discovered_context_size: int = 5
    # pattern:STUCK fires when the last W steps visited at most one unique place (W),
    # counted at anchor granularity.
    stuck_window_steps: int = 10
    # How many recent places / anchors the Navigation Context lists.
    context_recent_places: int = 5
    context_recent_anchors: int = 8


@dataclass(frozen=True)
class MemoryConfig:
    # One SQLite file per vehicle (sqlite-vec inside); relative paths are under the data dir.
    path: str = "memory.sqlite"
    # At most this many experiences come back from one retrieval.
    max_retrieval_results: int = 3
    # Cosine similarity below which a retrieved experience is ignored.
    similarity_threshold: float = 0.5
    # Seconds a writer waits for another writer's lock before WriterBusy is raised.
    writer_timeout_s: float = 5.0
    # Run `PRAGMA integrity_check` when the file is opened (quick_check if false).
    full_integrity_check_on_open: bool = True
    # On a corrupted or foreign file: move it aside to `<name>.corrupt-<utc>` and start a
    # new file (true), or refuse to open it (false, the default: a person decides).
    move_aside_corrupt: bool = False
    # Partitions (collection x outcome) with more experiences than this are searched with a
    # 4-bit PQ prefilter (faiss, if installed) and exact float32 rescoring of the candidates,
    # instead of an exact scan of the in-memory float32 vectors.
    exact_search_max_rows: int = 5000
    # PQ candidates per requested result, rescored exactly (recall vs speed; 30 gives
    # recall@10 >= 0.99 on 100k random 384-d vectors, the hard case).
    prefilter_oversample: int = 30
    # Adaptive retrieval: tasks with fewer words than this are "simple" and skip retrieval.
    simple_task_max_words: int = 5
    # Tasks with fewer words than this (and not simple) are "medium": one level searched;
    # longer tasks are "complex": strategy -> task -> atomic.
    medium_task_max_words: int = 15
    # Candidates kept per level on the complex path (strategy, then task).
    hierarchical_fanout: int = 10
    # Reflections kept in the prompt window (the last N).
    reflection_window: int = 3
    # Episodic sentences (one per move) included in a prompt; older ones stay in the file.
    episodic_prompt_sentences: int = 10
    # Directory for semantic-map PNGs stored by reference; empty keeps PNGs as blobs
    # inside the SQLite file. Relative paths are next to the memory file.
    image_dir: str = ""
    # Characters one text field of an imported lesson may hold (a reflection note, a plan); a bundle
    # with a longer one is refused whole, since every later prompt that retrieves the lesson carries it.
    lesson_text_max_chars: int = ranged(16384, 256, 1_048_576)
    anchors: AnchorGraphConfig = field(default_factory=AnchorGraphConfig)


def memory_file_path(data_dir: str, cfg: MemoryConfig) -> Path:
    """The memory file for this vehicle: ``cfg.path``, relative paths under ``data_dir``."""
    path = Path(cfg.path).expanduser()
    return path if path.is_absolute() else Path(data_dir).expanduser() / path
