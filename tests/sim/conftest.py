import pytest

from _vehicle_testkit import FAST_PARAMS, RawGcs, needs_trace  # noqa: F401 (re-exported for fixtures)
from sim.vehicle import SimVehicleProcess



@pytest.fixture
def fast_params() -> dict:
    return dict(FAST_PARAMS)


@pytest.fixture
def vehicle():
    """A vehicle subprocess with PX4 defaults except faster takeoff/landing, and no gimbal: the traced PX4 SITL had
    none, and the conformance tests compare every message with it (tests/sim/test_vehicle_gimbal.py has one)."""
    v = SimVehicleProcess(seed=7, params=FAST_PARAMS, prearm_delay_s=0.5, gimbal=False).start()
    try:
        yield v
    finally:
        v.stop()


@pytest.fixture
def raw_gcs(vehicle):
    g = RawGcs(vehicle.gcs_port, vehicle.port)
    try:
        yield g
    finally:
        g.close()


@pytest.fixture(scope="module")
def public_task():
    """The first public Helsinki task, resolved on the test world (the look-up and look-low episodes')."""
    from sim.benchmark.tasks import load_tasks, resolve_all
    from tests.sim._world_fixture import PUBLIC, helsinki

    w = helsinki()
    city, tasks = load_tasks(PUBLIC)
    return resolve_all(city, tasks[:1], w)[0]
