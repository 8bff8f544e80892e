"""`aerie bench compare` says identical only when every episode is, and names the tasks that moved."""

import json

from sim.nav_compare import differences, main


def _result(records):
    return {"sr": sum(r["success"] for r in records) / len(records), "spl": 0.5, "episodes": len(records),
            "records": records}


def _rec(task, success=True, path=100.0, traj=(1, 2)):
    return {"task": task, "seed": 0, "success": success, "spl": 0.5 if success else 0.0, "path_m": path,
            "steps": len(traj) - 1, "trajectory": list(traj), "end": "arrived"}


def test_identical_runs_compare_equal_and_a_moved_task_is_named(tmp_path, capsys):
    a = _result([_rec("t1"), _rec("t2")])
    b = _result([_rec("t1"), _rec("t2", success=False, path=120.0, traj=(1, 3))])
    assert differences(a, a) == []
    diff = differences(a, b)
    assert [t for t, _ in diff] == ["t2"] and diff[0][1]["path_m"] == (100.0, 120.0)
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(json.dumps(a))
    fb.write_text(json.dumps(b))
    assert main([str(fa), str(fa)]) == 0 and "every episode identical" in capsys.readouterr().out
    assert main([str(fa), str(fb)]) == 1 and "t2: success True -> False" in capsys.readouterr().out
