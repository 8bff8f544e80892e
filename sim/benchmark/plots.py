"""PNG plots for the benchmark report (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from common.geodesy import ned_from_geo
from sim.world.world import World


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def sr_spl_bars(runs: list[dict], path: Path) -> None:
    """SR and SPL per method and perception preset."""
    plt = _plt()
    labels = [f"{r['agent']}\n{r['perception']}" for r in runs]
    x = np.arange(len(runs))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.bar(x - 0.2, [100 * r["sr"] for r in runs], 0.4, label="SR %")
    ax.bar(x + 0.2, [100 * r["spl"] for r in runs], 0.4, label="SPL %")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("%")
    ax.set_title("Helsinki public tasks: success rate and SPL")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def success_vs_distance(runs: list[dict], path: Path, bins=(0, 15, 25, 35, 50)) -> None:
    """Success rate by minimum steps (task length), one line per method/preset."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    centres = [(a + b) / 2 for a, b in zip(bins, bins[1:])]
    for r in runs:
        eps = r["records"]
        ys = []
        for a, b in zip(bins, bins[1:]):
            sel = [e["success"] for e in eps if a <= e["min_steps"] < b]
            ys.append(100 * np.mean(sel) if sel else np.nan)
        ax.plot(centres, ys, marker="o", label=f"{r['agent']}/{r['perception']}")
    ax.set_xlabel("minimum steps (x 50 m)")
    ax.set_ylabel("success %")
    ax.set_xticks(centres, [f"{a}-{b - 1}" for a, b in zip(bins, bins[1:])])
    ax.legend(fontsize=7)
    ax.set_title("Success vs task length")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def task_lengths(min_steps: list[int], path: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.hist(min_steps, bins=range(0, max(min_steps) + 3, 3), color="#4c72b0", edgecolor="white")
    ax.set_xlabel("minimum steps")
    ax.set_ylabel("tasks")
    ax.set_title(f"Task lengths (n={len(min_steps)}, mean {np.mean(min_steps):.1f}, sd {np.std(min_steps):.1f})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def trajectory_map(world: World, episode: dict, task_description: str, path: Path) -> None:
    """One episode over the map: buildings, streets, landmarks, start, goal and the flown path."""
    plt = _plt()
    from matplotlib.patches import Circle, Polygon

    g = world.graph
    fig, ax = plt.subplots(figsize=(6.5, 9))
    lm_ids = {lm.id for lm in world.landmarks}
    for b in world.city.buildings:
        ax.add_patch(Polygon(b.footprint, closed=True, fc="#f0a050" if b.id in lm_ids else "#c8c8c8",
                             ec="#777777", lw=0.3))
    for a, b in g.edges():
        ax.plot(*g.xy[[a, b]].T, color="#dddddd", lw=1.2, zorder=1)
    traj = np.array([g.xy[n] for n in episode["trajectory"]])
    ax.plot(traj[:, 0], traj[:, 1], color="#d62728", lw=2, zorder=3, label="flown")
    s = g.xy[episode["trajectory"][0]]
    ax.scatter(*s, s=80, c="#2ca02c", zorder=4, label="start")
    gy, gx = ned_from_geo(world.origin, *episode["goal_latlon"])
    ax.scatter(gx, gy, s=140, marker="*", c="#1f77b4", zorder=4, label="goal")
    ax.add_patch(Circle((gx, gy), 50, fill=False, ec="#1f77b4", ls="--"))
    for lm in world.landmarks:
        if lm.name in episode.get("landmarks", []):
            c = lm.centroid
            ax.annotate(lm.name, c, fontsize=8, weight="bold", ha="center")
    ax.set_aspect("equal")
    ax.set_xlabel("east (m)")
    ax.set_ylabel("north (m)")
    verdict = "success" if episode["success"] else "failure"
    ax.set_title(f"{episode['task']} / {episode['agent']} / {episode['perception']}: {verdict}, "
                 f"{episode['steps']} steps (min {episode['min_steps']})\n{task_description}", fontsize=8, wrap=True)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
