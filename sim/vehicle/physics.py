"""Point-mass multirotor: what the airframe and sensors do, not what PX4 decides.

The flight logic hands in a velocity demand with its limits; this module turns
it into motion the way a tuned PX4 velocity loop would (PI on velocity,
acceleration and tilt limits), adds wind drag, drains a battery and produces a
noisy GPS fix. Every random draw comes from one seeded generator and the step
is fixed-size, so the same seed and the same demands give the same flight.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

GRAVITY = 9.80665


@dataclass
class PhysicsConfig:
    """Airframe constants; defaults roughly an SIH 4-cell quadrotor."""

    vel_p: float = 2.2  # 1/s, velocity error -> acceleration
    vel_i: float = 0.6  # 1/s^2, cancels steady wind like PX4's MPC_XY_VEL_I
    max_tilt_rad: float = math.radians(35.0)
    drag_per_s: float = 0.25  # wind coupling: a = drag * (wind - v)
    yaw_rate_max: float = math.radians(45.0)  # MPC_YAWRAUTO_MAX
    gps_sigma_m: float = 0.25  # slowly varying GPS horizontal error
    gps_sigma_alt_m: float = 0.4
    gps_tau_s: float = 20.0
    est_sigma_m: float = 0.02  # estimator jitter on the fused position
    battery_capacity_mah: float = 5000.0
    hover_current_a: float = 12.0
    idle_current_a: float = 0.4
    current_per_ms: float = 0.6  # extra amps per m/s of airspeed
    cells: int = 4
    v_charged: float = 4.05
    v_empty: float = 3.6


@dataclass
class Demand:
    """What the position controller wants this step (NED, m/s and rad)."""

    vel: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw: float | None = None  # None: keep heading
    yaw_rate: float | None = None  # used when yaw is None
    acc_hor: float = 3.0  # MPC_ACC_HOR
    acc_up: float = 4.0
    acc_down: float = 3.0
    thrust: bool = True  # False: motors off (disarmed): the airframe falls / rests


@dataclass
class State:
    t: float = 0.0
    pos: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # NED m from origin
    vel: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    acc: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0
    yaw_rate: float = 0.0
    on_ground: bool = True
    battery_pct: float = 100.0
    battery_mah: float = 0.0  # consumed
    current_a: float = 0.0
    wind: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    gps_err: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    gps_noise: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # this step's GPS = pos + err + noise
    est_noise: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])


class Physics:
    """Advance a :class:`State` in fixed steps; deterministic for a seed."""

    def __init__(self, seed: int = 0, config: PhysicsConfig | None = None, ground_z: float = 0.0):
        self.cfg = config or PhysicsConfig()
        self.rng = random.Random(seed)
        self.state = State()
        self.ground_z = ground_z
        self.wind_mean = [0.0, 0.0, 0.0]
        self.gust_sigma = 0.0
        self._vel_int = [0.0, 0.0, 0.0]
        self.battery_drain_scale = 1.0  # >1 makes tests of battery failsafes faster

    # -- faults / environment -------------------------------------------------
    def set_wind(self, north: float, east: float, down: float = 0.0, gust_sigma: float = 0.0) -> None:
        self.wind_mean = [north, east, down]
        self.gust_sigma = gust_sigma

    def set_battery(self, percent: float) -> None:
        s = self.state
        s.battery_pct = max(0.0, min(100.0, percent))
        s.battery_mah = self.cfg.battery_capacity_mah * (1.0 - s.battery_pct / 100.0)

    def voltage(self) -> float:
        c = self.cfg
        frac = self.state.battery_pct / 100.0
        sag = 0.01 * self.state.current_a / c.cells
        return c.cells * (c.v_empty + (c.v_charged - c.v_empty) * frac - sag)

    # -- stepping -------------------------------------------------------------
    def step(self, dt: float, demand: Demand) -> State:
        s, c = self.state, self.cfg
        s.t += dt
        self._step_wind(dt)
        if demand.thrust:
            acc = self._controller(dt, demand)
            acc = [acc[i] + c.drag_per_s * (s.wind[i] - s.vel[i]) for i in range(3)]
        else:
            self._vel_int = [0.0, 0.0, 0.0]
            acc = [c.drag_per_s * (s.wind[0] - s.vel[0]), c.drag_per_s * (s.wind[1] - s.vel[1]), GRAVITY]
        for i in range(3):
            s.vel[i] += acc[i] * dt
            s.pos[i] += s.vel[i] * dt
        s.acc = acc
        # ground contact: the ground stops descent and holds the airframe still
        if s.pos[2] >= self.ground_z and s.vel[2] >= 0.0:
            s.pos[2] = self.ground_z
            s.vel = [0.0, 0.0, 0.0]
            s.acc = [0.0, 0.0, 0.0]
            self._vel_int = [0.0, 0.0, 0.0]
            s.on_ground = True
        else:
            s.on_ground = False
        self._step_attitude(dt, demand)
        self._step_battery(dt, demand.thrust)
        self._step_sensors(dt)
        return s

    def _controller(self, dt: float, d: Demand) -> list[float]:
        """PI velocity loop with drag feed-forward and conditional-integration anti-windup."""
        s, c = self.state, self.cfg
        err = [d.vel[i] - s.vel[i] for i in range(3)]
        a = [c.vel_p * err[i] + self._vel_int[i] + c.drag_per_s * d.vel[i] for i in range(3)]
        a_h_max = min(d.acc_hor, GRAVITY * math.tan(c.max_tilt_rad))
        norm = math.hypot(a[0], a[1])
        sat_h = norm > a_h_max
        if sat_h:
            a[0] *= a_h_max / norm
            a[1] *= a_h_max / norm
        sat_v = not (-d.acc_up <= a[2] <= d.acc_down)
        a[2] = max(-d.acc_up, min(d.acc_down, a[2]))
        if not s.on_ground:
            for i, sat in ((0, sat_h), (1, sat_h), (2, sat_v)):
                if not sat:
                    self._vel_int[i] = max(-3.0, min(3.0, self._vel_int[i] + c.vel_i * err[i] * dt))
        return a

    def _step_wind(self, dt: float) -> None:
        s = self.state
        if self.gust_sigma <= 0.0:
            s.wind = list(self.wind_mean)
            return
        tau = 3.0
        k = math.sqrt(2.0 * dt / tau) * self.gust_sigma
        for i in range(3):
            gust = s.wind[i] - self.wind_mean[i]
            gust += -gust * dt / tau + k * self.rng.gauss(0.0, 1.0)
            s.wind[i] = self.wind_mean[i] + gust

    def _step_attitude(self, dt: float, d: Demand) -> None:
        s, c = self.state, self.cfg
        if d.yaw is not None and d.thrust and not s.on_ground:
            err = (d.yaw - s.yaw + math.pi) % (2.0 * math.pi) - math.pi
            rate = max(-c.yaw_rate_max, min(c.yaw_rate_max, 2.0 * err))
        elif d.yaw_rate is not None and d.thrust and not s.on_ground:
            rate = max(-c.yaw_rate_max, min(c.yaw_rate_max, d.yaw_rate))
        else:
            rate = 0.0
        s.yaw_rate = rate
        s.yaw = (s.yaw + rate * dt + math.pi) % (2.0 * math.pi) - math.pi
        if s.on_ground:
            s.roll = s.pitch = 0.0
            return
        cy, sy = math.cos(s.yaw), math.sin(s.yaw)
        a_fwd = cy * s.acc[0] + sy * s.acc[1]
        a_right = -sy * s.acc[0] + cy * s.acc[1]
        s.pitch = -math.atan2(a_fwd, GRAVITY)
        s.roll = math.atan2(a_right, GRAVITY)

    def _step_battery(self, dt: float, thrust: bool) -> None:
        s, c = self.state, self.cfg
        if thrust:
            air = math.sqrt(sum((s.vel[i] - s.wind[i]) ** 2 for i in range(3)))
            s.current_a = c.hover_current_a + c.current_per_ms * air
        else:
            s.current_a = c.idle_current_a
        s.battery_mah += s.current_a * dt / 3.6 * self.battery_drain_scale
        s.battery_pct = max(0.0, 100.0 * (1.0 - s.battery_mah / c.battery_capacity_mah))

    def _step_sensors(self, dt: float) -> None:
        s, c, rng = self.state, self.cfg, self.rng
        a = dt / c.gps_tau_s
        k_h = c.gps_sigma_m * math.sqrt(2.0 * a)
        k_v = c.gps_sigma_alt_m * math.sqrt(2.0 * a)
        s.gps_err[0] += -a * s.gps_err[0] + k_h * rng.gauss(0.0, 1.0)
        s.gps_err[1] += -a * s.gps_err[1] + k_h * rng.gauss(0.0, 1.0)
        s.gps_err[2] += -a * s.gps_err[2] + k_v * rng.gauss(0.0, 1.0)
        s.gps_noise = [rng.gauss(0.0, 0.05), rng.gauss(0.0, 0.05), rng.gauss(0.0, 0.08)]
        s.est_noise = [rng.gauss(0.0, c.est_sigma_m) for _ in range(3)]
