"""The one results writer: the layout every producer writes and every reader reads."""

from __future__ import annotations

import json

from contract import results


def test_episode_files_round_trip_and_replace_whole(tmp_path):
    folder = results.write_episode(tmp_path / "run_t001", [{"timestep": 0}, {"timestep": 1}], {"success": True})
    assert json.loads((folder / results.TRAJECTORY_FILE).read_text()) == [{"timestep": 0}, {"timestep": 1}]
    assert results.read_summary(folder) == {"success": True}
    results.write_episode(folder, [], {"success": False, "name": "Päärautatieasema"})
    assert results.read_summary(folder) == {"success": False, "name": "Päärautatieasema"}
    assert sorted(p.name for p in folder.iterdir()) == [results.SUMMARY_FILE, results.TRAJECTORY_FILE]


def test_image_paths_are_inside_the_folder_whatever_the_id(tmp_path):
    landmark, semantic = results.map_image_paths(tmp_path, "../../etc/x", 3)
    assert landmark.parent == semantic.parent == tmp_path / results.SEMANTIC_DIR
    assert landmark.name == "landmark_.._.._etc_x_step_0003.png"
    assert results.rgb_image_path(tmp_path, 12) == tmp_path / results.RGB_DIR / "rgb_timestep_0012.png"
