"""One mission, from the first observation to its outcome, whatever flies it.

`MissionRunner` holds the mission's semantics once: the step loop, every look
manoeuvre, what is refused, and the accounting of distance and time. It flies
through a `VehiclePort` and perceives through a `SensorPort`: `aerie fly` gives
it the MAVSDK bridge and the world feed or onboard map (`onboard/supervisor/`),
`aerie bench nav` a kinematic vehicle and the simulator's oracle
(`sim/benchmark/episode.py`), so the benchmark scores the loop that flies.
"""
