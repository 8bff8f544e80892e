"""Several simulated vehicles side by side, the way PX4 SITL runs ``px4 -i 0`` .. ``px4 -i N-1``.

A fleet needs what one vehicle never did: each vehicle its own MAVLink system
id (1..N, PX4's ``MAV_SYS_ID = instance + 1``), its own UDP ports and its own
take-off point, with ground truth read from each. Ports are picked free
rather than PX4's fixed offsets so that fleets of parallel tests never
collide; ``aerie sim vehicle --instance N`` gives the fixed ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from .process import SimVehicleProcess, free_ports


class SimFleet:
    """N :class:`SimVehicleProcess` with system ids 1..N; ``homes[i]`` is vehicle i+1's take-off point."""

    def __init__(self, homes: Sequence[tuple[float, float, float]], **common) -> None:
        if not homes:
            raise ValueError("a fleet needs at least one home")
        seed = common.pop("seed", 0)
        gcs_ports = free_ports(len(homes), udp=True)  # distinct: one MAVLink port per member
        self.vehicles = [SimVehicleProcess(home=tuple(home), sysid=i + 1, seed=seed + i, gcs_port=gcs_ports[i],
                                           **common) for i, home in enumerate(homes)]

    def start(self) -> "SimFleet":
        try:
            for v in self.vehicles:
                v.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for v in self.vehicles:
            if v.proc is not None:
                v.stop()

    def truths(self) -> list[dict]:
        """Every vehicle's ground truth (position, velocity, mode...), in member order."""
        return [v.truth() for v in self.vehicles]

    def __enter__(self) -> "SimFleet":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __len__(self) -> int:
        return len(self.vehicles)

    def __getitem__(self, i: int) -> SimVehicleProcess:
        return self.vehicles[i]
