"""Labelled descriptions for measuring how well a reader understands them, without flying.

Why: a navigation score mixes reading with flying; this set isolates the
reading. Each item is one description written by a `phrasing` family about a
random usable goal (not restricted to the task files), with its label in the
onboard `Relation` format, so a parser or a language model can be scored
family by family (the later `aerie bench instructions`). The descriptions
are drawn exactly as `ordinary.generate_ordinary` draws them (uniform
references 120-600 m away, label checked against the truth), families
balanced round-robin. Deterministic per seed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from sim.benchmark.generate import usable_goals
from sim.benchmark.ordinary import describe_ordinary, family_schedule, landmark_positions
from sim.world.world import World

DEFAULT_SEED = 303


def labelled_descriptions(world: World, n: int = 420, seed: int = DEFAULT_SEED,
                          families: Sequence[str] | None = None) -> list[dict]:
    """`n` items {"id", "family", "text", "goal_name", "relations"}, families balanced (counts differ by <= 1).

    Goals are not repeated until every usable goal has been used once.
    """
    rng = np.random.default_rng(seed)
    goals = usable_goals(world)
    positions = landmark_positions(world)
    used: set[int] = set()
    failed: dict[str, set[int]] = defaultdict(set)  # family -> goals it could not describe
    out: list[dict] = []
    for family in family_schedule(n, rng, families):
        while True:
            cands = [i for i in goals if i not in used and i not in failed[family]]
            if not cands:
                if not used:
                    raise ValueError(f"no usable goal can be described in family {family!r}")
                used.clear()  # every goal has been used: allow repeats from here on
                continue
            gi = cands[int(rng.integers(len(cands)))]
            phrased = describe_ordinary(world, gi, family, rng, positions)
            if phrased is None:
                failed[family].add(gi)
                continue
            break
        used.add(gi)
        out.append({"id": f"i{len(out) + 1:04d}", "family": family, "text": phrased.text,
                    "goal_name": world.goals[gi].name, "relations": [r.label() for r in phrased.relations]})
    return out
