"""Several simulated vehicles side by side: distinct system ids, ports and homes, as PX4 SITL's `px4 -i N`."""

from _vehicle_testkit import RawGcs

from common.geodesy import GeoPoint, geo_from_ned, ned_from_geo
from sim.vehicle import DEFAULT_HOME, SimFleet
from sim.vehicle.cli import build_parser, resolve_instance


def test_instance_number_shifts_ports_and_system_id_like_px4_sitl():
    args = resolve_instance(build_parser().parse_args(["-i", "2"]))
    assert (args.port, args.gcs_port, args.sysid) == (14582, 14542, 3)
    explicit = resolve_instance(build_parser().parse_args(["--instance", "2", "--port", "0", "--sysid", "9"]))
    assert (explicit.port, explicit.gcs_port, explicit.sysid) == (0, 14542, 9)
    plain = resolve_instance(build_parser().parse_args([]))
    assert (plain.port, plain.gcs_port, plain.sysid) == (14580, 14540, 1)


def test_two_vehicles_each_with_its_own_id_port_and_home():
    origin = GeoPoint(*DEFAULT_HOME)
    homes = [DEFAULT_HOME, (*geo_from_ned(origin, 0.0, 40.0), DEFAULT_HOME[2])]
    with SimFleet(homes, prearm_delay_s=0.3) as fleet:
        assert len({v.gcs_port for v in fleet.vehicles}) == 2 and len({v.port for v in fleet.vehicles}) == 2
        for i, v in enumerate(fleet.vehicles):
            g = RawGcs(v.gcs_port, v.port)
            try:
                hb = g.wait("HEARTBEAT", timeout=5.0)
                assert hb.get_srcSystem() == i + 1
            finally:
                g.close()
        a, b = fleet.truths()
        north, east = ned_from_geo(origin, b["lat"], b["lon"])
        assert abs(north) < 0.5 and abs(east - 40.0) < 0.5
        assert max(abs(x) for x in ned_from_geo(origin, a["lat"], a["lon"])) < 0.5
