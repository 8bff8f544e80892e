"""MAVLink enum values and PX4 constants the simulated PX4's modules share (commander, failsafe,
flight tasks, land detector)."""

# MAV_RESULT
ACCEPTED = 0
TEMPORARILY_REJECTED = 1
DENIED = 2
UNSUPPORTED = 3
FAILED = 4

# MAV_LANDED_STATE
ON_GROUND = 1
IN_AIR = 2
TAKEOFF_STATE = 3
LANDING = 4

# MAV_SEVERITY
SEV_CRITICAL = 2
SEV_WARNING = 4
SEV_INFO = 6

FORCE_MAGIC = 21196
TAKEOFF_DETECT_M = 0.3
LAND_DETECT_STAGES = 2.5  # ground contact -> maybe landed -> landed, each ~LNDMC_TRIG_TIME (trace: ~5 s)
