"""Fault injectors for the PUB wire (tests and link drills): decide per frame whether it is sent.

A dropped frame is still in the journal, so the ground station must notice
the gap and replay it; these make that path testable with real sockets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class RandomDrop:
    """Drop each frame with probability ``rate`` (seeded, so a failing run can be repeated)."""

    rate: float
    seed: int = 0
    always_drop_types: frozenset[str] = frozenset()
    dropped: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"rate must be within [0, 1], got {self.rate}")
        self._rng = random.Random(self.seed)

    def __call__(self, seq: int, msg_type: str) -> bool:
        """True: send the frame; False: drop it."""
        if msg_type in self.always_drop_types or self._rng.random() < self.rate:
            self.dropped += 1
            return False
        return True
