"""A token bucket: at most ``rate_hz`` events a second on average, ``burst`` at once, the rest counted.

Whatever a peer on the network can make happen once per message it sends — a
log line, a journaled event, decoding and keeping what it said — is put
behind one of these, so the cost of a flood is bounded by the configuration,
not by the attacker's send rate. What is held back is never silent: it is
counted (``dropped``), and the next event let through can say how many went
before it (:meth:`TokenBucket.held_back`).

The clock is injected so that tests move time, not wait for it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, rate_hz: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        if not (0 < rate_hz < math.inf and 1 <= burst < math.inf):  # NaN fails too
            raise ValueError(f"a rate limit needs 0 < rate_hz < inf and 1 <= burst < inf, got {rate_hz!r}, {burst!r}")
        self.rate_hz = float(rate_hz)
        self.burst = float(burst)
        self._clock = clock
        self._tokens = self.burst
        self._at = clock()
        self.dropped = 0  # events held back since the bucket was made
        self._held = 0    # ... since the last one let through

    def allow(self) -> bool:
        """Whether one more event may happen now (it takes a token); counts it when not."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + max(0.0, now - self._at) * self.rate_hz)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        self.dropped += 1
        self._held += 1
        return False

    def held_back(self) -> int:
        """Events held back since the previous call (to say so on the next one let through)."""
        n, self._held = self._held, 0
        return n
