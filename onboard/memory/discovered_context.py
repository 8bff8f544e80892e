"""The discovered-context FIFO: what the planner said it was heading for, and why.

It is negative memory against oscillation: the planner sees its own last N
intentions, oldest first, numbered 1..N afresh on every read so the numbers
always mean "position in the window", never "how many came before".
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class DCRecord:
    idx: int  # 1 = oldest in the window, N = newest; re-assigned on every read
    goal_flag: bool
    goal_scene_type: str
    why: str
    avoid_hint: str = ""


class DiscoveredContextQueue:
    def __init__(self, size: int = 5) -> None:
        if size < 1:
            raise ValueError(f"discovered-context size must be >= 1, got {size}")
        self._items: deque[tuple[bool, str, str, str]] = deque(maxlen=size)

    def push(self, goal_flag: bool, goal_scene_type: str, why: str, avoid_hint: str = "") -> None:
        """Append one record; the oldest falls out when the window is full."""
        self._items.append((bool(goal_flag), goal_scene_type, why, avoid_hint))

    def records(self) -> list[DCRecord]:
        return [DCRecord(i, *item) for i, item in enumerate(self._items, start=1)]

    def __len__(self) -> int:
        return len(self._items)
