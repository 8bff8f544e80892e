"""A PX4-like MAVLink vehicle that MAVSDK 4.x accepts as an autopilot.

Behaviour follows the recorded PX4 SITL session in /work/shared/px4-trace
(HEARTBEAT modes, ACK codes, STATUSTEXTs, parameters, mission protocol,
offboard rules and failsafe, landed-state sequence).

Run it:  ``aerie sim vehicle --home 47.3977,8.5456 [--gcs-port 14540] [--port 14580] [--seed N]
                             [--param NAME=VALUE ...] [--setpoint-log PATH] [--wind N,E[,D]] [--gust S]
                             [--speed-factor K] [--prearm-delay S] [--control-port P] [--rate-scale K] [--sysid N]
                             [--no-gimbal]``
         (``python -m sim.vehicle.cli --help`` describes them). Like PX4 SITL it binds 14580 and sends to
         127.0.0.1:14540, so MAVSDK connects with ``udpin://127.0.0.1:14540``.

Use it from Python (tests, benchmarks)::

    from sim.vehicle import SimVehicleProcess

    with SimVehicleProcess(home=(47.397743, 8.5455941, 489.3), seed=1,
                           params={"MPC_TKO_SPEED": 5.0, "MPC_LAND_SPEED": 3.0},
                           setpoint_log="/tmp/sp.jsonl") as v:
        await mavsdk.add_any_connection(v.mavsdk_url)     # udpin://127.0.0.1:<free port>
        ...
        v.truth()            # ground truth dict: ned, vel_ned, lat/lon/alt_amsl/rel_alt, mode ("AUTO_LOITER"),
                             # flight_mode (MAVSDK's name: "HOLD"), armed, landed_state (1..4), failsafe,
                             # battery_pct, wind_ned, home, mission, setpoint_age_s, gimbal_pitch_deg,
                             # gimbal_yaw_deg (from north), gimbal_yaw_body_deg (None without a gimbal)
        v.set_battery(12.0)  # percent; PX4 battery failsafes follow (COM_LOW_BAT_ACT)
        v.set_wind(3.0, 0.0, gust=0.5)
        v.set_link_down(True)  # silence the link without killing the process
        v.set_gps(False)     # lose the GPS fix (health, GPS_RAW_INT, PX4 descend failsafe in the air)
        v.kill()             # SIGKILL, for link-loss tests; .stop() is SIGTERM

``SimVehicleProcess`` picks a free GCS port unless given one, defaults to a 1 s
pre-arm delay (PX4: ~4 s), and waits for the vehicle's ready line.
The setpoint log is JSON lines ``{"t": unix_s, "mono": monotonic_s, "msg": name,
"type_mask"|"command": ..., "mode": "OFFBOARD"}`` per received SET_POSITION_TARGET_*,
SET_ATTITUDE_TARGET, COMMAND_LONG and COMMAND_INT.

Several vehicles (system ids 1..N, own ports and homes): ``with SimFleet([home1, home2], params={...}) as f:
f[0].mavsdk_url, f.truths()``; ``aerie sim vehicle --instance N`` takes PX4 SITL's ``px4 -i N`` ports and id.

In-process use (no subprocess): ``with SimVehicleThread(seed=1, params={...}) as v: ...``
(same ``mavsdk_url``/``truth()``; shares the GIL, so measure timings with the subprocess).

Control channel (`contract.sim_control`: one JSON datagram to ``control_port``, one reply per request;
``SimVehicleProcess.control(cmd, **args)`` sends it): ``truth``, ``stats``, ``battery`` (percent),
``battery_drain_scale`` (scale), ``wind`` (n, e, d, gust), ``param`` (name, value), ``link`` (down),
``gps`` (fix), ``statustext`` (severity, text), ``mode`` (HOLD, POSCTL, LAND, RTL: a pilot's switch on
the RC or a ground station), ``commands`` (every COMMAND_LONG/INT received, ``[[t, id], ...]``; the gimbal's under
``gimbal``), ``gimbal`` (down: the camera gimbal stops answering and reporting).

The vehicle carries a camera gimbal (MAVLink gimbal protocol v2, `gimbal_manager.py`) unless started with
``--no-gimbal`` (``SimVehicleProcess(gimbal=False)``).
"""

from .fleet import SimFleet
from .process import SimVehicleProcess, SimVehicleThread, free_udp_port
from .vehicle import DEFAULT_HOME, Vehicle, VehicleConfig

__all__ = ["SimFleet", "SimVehicleProcess", "SimVehicleThread", "Vehicle", "VehicleConfig", "free_udp_port",
           "DEFAULT_HOME"]
