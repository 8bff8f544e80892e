"""Point-mass physics and the whole flight logic are deterministic for a seed."""

import math

from common.geodesy import GeoPoint
from sim.vehicle.commander import Commander
from sim.vehicle.mission import MissionStore
from sim.vehicle.params import ParamTable
from sim.vehicle.physics import Demand, Physics

DT = 0.01


def _fly(seed: int, steps: int = 600) -> list[tuple]:
    ph = Physics(seed=seed)
    ph.set_wind(2.0, -1.0, gust_sigma=1.0)
    out = []
    for i in range(steps):
        vel = (3.0, 1.0, -1.0) if i < 300 else (0.0, 0.0, 0.5)
        s = ph.step(DT, Demand(vel=vel, yaw=0.5))
        out.append((tuple(s.pos), tuple(s.vel), s.yaw, tuple(s.gps_err), s.battery_pct))
    return out


def test_same_seed_same_flight():
    assert _fly(42) == _fly(42)
    assert _fly(42) != _fly(43)


def test_velocity_tracking_respects_acceleration_limit():
    ph = Physics(seed=0)
    speeds = []
    for _ in range(400):
        s = ph.step(DT, Demand(vel=(5.0, 0.0, -1.0), acc_hor=3.0))
        speeds.append(s.vel[0])
    assert speeds[49] <= 3.0 * 0.5 + 0.05  # cannot beat MPC_ACC_HOR
    assert abs(speeds[-1] - 5.0) < 0.1


def test_wind_is_compensated_in_steady_state():
    ph = Physics(seed=0)
    ph.set_wind(5.0, 0.0)
    for _ in range(100):
        ph.step(DT, Demand(vel=(0.0, 0.0, -1.0)))
    for _ in range(2000):
        s = ph.step(DT, Demand(vel=(0.0, 0.0, 0.0)))
    assert abs(s.vel[0]) < 0.05


def test_battery_drains_faster_when_flying_fast():
    slow, fast = Physics(seed=0), Physics(seed=0)
    for _ in range(1000):
        slow.step(DT, Demand(vel=(0.0, 0.0, 0.0)))
        fast.step(DT, Demand(vel=(10.0, 0.0, -0.5)))
    assert fast.state.battery_pct < slow.state.battery_pct < 100.0
    idle = Physics(seed=0)
    for _ in range(1000):
        idle.step(DT, Demand(thrust=False))
    assert idle.state.battery_pct > slow.state.battery_pct


def _flight(seed: int) -> list[tuple]:
    """Arm, take off and hold with the real commander on a synthetic clock."""
    params = ParamTable.px4_defaults({"MIS_TAKEOFF_ALT": 4.0})
    ph = Physics(seed=seed)
    ph.set_wind(1.0, 1.0, gust_sigma=0.8)
    c = Commander(params, ph, GeoPoint(47.0, 8.0, 400.0), MissionStore(), now=0.0, prearm_delay_s=0.0)
    t = 1.0
    assert c.handle_command(400, [1.0] + [math.nan] * 6, t) == 0
    assert c.handle_command(22, [math.nan] * 7, t) == 0
    trace = []
    for _ in range(1500):
        ph.step(DT, c.demand(t))
        c.update(t)
        t += DT
        trace.append((tuple(ph.state.pos), c.landed_state, str(c.displayed_mode)))
    return trace


def test_commander_flight_deterministic_and_px4_shaped():
    a, b = _flight(9), _flight(9)
    assert a == b
    states = [s[1] for s in a]
    modes = [s[2] for s in a]
    assert states[0] == 1 and 3 in states and states[-1] == 2  # ON_GROUND -> TAKEOFF -> IN_AIR
    assert modes[0] == "AUTO_TAKEOFF" and modes[-1] == "AUTO_LOITER"
    assert abs(-a[-1][0][2] - 4.0) < 0.8


def _run_until(c: Commander, ph: Physics, t: float, pred, limit_s: float) -> float:
    end = t + limit_s
    while t < end:
        ph.step(DT, c.demand(t))
        c.update(t)
        t += DT
        if pred():
            return t
    raise AssertionError("condition not reached")


def test_default_parameter_timings_are_px4_like():
    """With PX4 defaults, takeoff to 10 m and landing from 5 m take about as long as in the trace."""
    import pytest

    from _vehicle_testkit import EVENTS_FILE, load_events

    if not EVENTS_FILE.exists():
        pytest.skip("trace not present")
    ev = load_events()

    def t_of(pred):
        return next(e["t"] for e in ev if pred(e))

    tko_cmd = t_of(lambda e: e.get("call") == "action.takeoff")
    tko_done = t_of(lambda e: e.get("what") == "mode HOLD after takeoff")
    land_cmd = t_of(lambda e: e.get("call") == "action.land")
    land_det = t_of(lambda e: e["event"] == "statustext" and e["text"].startswith("Landing detected") and e["t"] > land_cmd)

    params = ParamTable.px4_defaults({"MIS_TAKEOFF_ALT": 10.0})
    ph = Physics(seed=1)
    c = Commander(params, ph, GeoPoint(47.0, 8.0, 400.0), MissionStore(), now=0.0, prearm_delay_s=0.0)
    t = 1.0
    c.handle_command(400, [1.0] + [math.nan] * 6, t)
    c.handle_command(22, [math.nan] * 7, t)
    t_done = _run_until(c, ph, t, lambda: str(c.displayed_mode) == "AUTO_LOITER", 60)
    ours_tko, trace_tko = t_done - t, tko_done - tko_cmd
    assert 0.6 * trace_tko < ours_tko < 1.4 * trace_tko, (ours_tko, trace_tko)
    params.set("MIS_TAKEOFF_ALT", 5.0)
    # descend to 5 m first, as the trace's land flight took off to 5 m
    c.handle_command(192, [math.nan, 1, math.nan, math.nan, math.nan, math.nan, 405.0], t_done)
    t = _run_until(c, ph, t_done, lambda: abs(c.height() - 5.0) < 0.1 and abs(ph.state.vel[2]) < 0.05, 30)
    c.handle_command(21, [math.nan] * 7, t)
    t_land = _run_until(c, ph, t, lambda: c.landed_state == 1, 60)
    ours_land, trace_land = t_land - t, land_det - land_cmd
    assert 0.6 * trace_land < ours_land < 1.4 * trace_land, (ours_land, trace_land)
