"""The camera nav bench with the map reads as the look-around does: walls seen aslant upright too."""

from __future__ import annotations


def test_with_the_map_the_bench_hands_the_reader_the_views_pose_and_walls():
    from onboard.config import load_config
    from sim.benchmark.camera_perception import CameraBench
    from tests.perception.conftest import _reader
    from tests.sim._world_fixture import helsinki

    w = helsinki()
    reader = _reader()
    cfg = load_config(None).supervisor
    # waypoint 171 looking 164 degrees: a street of shop fronts running away from the camera (the reading
    # bench's dev view of Classic Pizza)
    with_map = CameraBench(w, reader, cfg, use_map=True)
    _one_view(with_map, 171, 164.4, w.cruise_alt)
    assert reader.timings_ms["rectify"] > 0
    _one_view(CameraBench(w, reader, cfg), 171, 164.4, w.cruise_alt)
    assert reader.timings_ms["rectify"] == 0


def _one_view(bench, node, heading, altitude):
    import asyncio

    async def view():
        return await (await bench.point(node, heading, altitude, bench.pitch))

    return asyncio.run(view())
