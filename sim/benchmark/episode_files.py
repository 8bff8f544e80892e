"""Per-episode results on disk, in the layout of ARCHITECTURE.md "Results on disk":

    <dir>/<run>_<task>/trajectory.json        one entry per position: node, lat/lon/alt, ENU, heading
    <dir>/<run>_<task>/episode_summary.json   the episode's metrics record (without the trajectory)
    <dir>/<run>_<task>/rgb_images/rgb_timestep_XXXX.png   the oblique camera view at each step
    <dir>/<run>_<task>/semantic_images/landmark_<task>_step_XXXX.png, semantic_<task>_step_XXXX.png
        the agent's landmark and semantic maps at each step (Aerie's agents only; written while the
        episode runs, see `run_tasks(maps_dir=...)` and `onboard/agent/map_render.py`)
"""

from __future__ import annotations

from pathlib import Path

from contract import results
from onboard.map.compass import bearing_deg
from sim.world.world import World


def episode_folder(out: str | Path, run: str, task: str) -> Path:
    """`<out>/<run>_<task>`: one episode's results folder."""
    return Path(out) / f"{run}_{task}"


def write_episode(world: World, record: dict, out: str | Path, run: str, images: bool = True) -> Path:
    """Write one episode's folder; returns it."""
    g = world.graph
    folder = episode_folder(out, run, record["task"])
    traj = record["trajectory"]
    headings, h = [], 0.0
    for i, node in enumerate(traj):
        if i > 0 and traj[i - 1] != node:
            d = g.xy[node] - g.xy[traj[i - 1]]
            h = bearing_deg(d[0], d[1])
        headings.append(round(h, 1))
    frames = [{"timestep": i, "node": int(n), "lat": float(g.latlon[n][0]), "lon": float(g.latlon[n][1]),
               "alt_m": world.cruise_alt, "east_m": round(float(g.xy[n][0]), 2), "north_m": round(float(g.xy[n][1]), 2),
               "heading_deg": headings[i]} for i, n in enumerate(traj)]
    results.write_episode(folder, frames, {k: v for k, v in record.items() if k != "trajectory"})
    if images:
        import cv2

        from sim.world.render import ViewRenderer

        r = ViewRenderer(world)
        for f in frames:
            cv2.imwrite(str(results.rgb_image_path(folder, f["timestep"])), r.oblique(f["node"], f["heading_deg"]))
    return folder
