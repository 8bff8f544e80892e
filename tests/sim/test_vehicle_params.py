"""Parameter table: PX4 types/indices and bytewise int encoding."""

import math

import pytest
from _vehicle_testkit import needs_trace

from _vehicle_testkit import load_trace
from sim.vehicle.params import MAV_PARAM_TYPE_INT32, MAV_PARAM_TYPE_REAL32, ParamTable, int_to_wire, wire_to_int


def test_defaults_and_types():
    t = ParamTable.px4_defaults()
    assert len(t) == 902
    for name, typ, value in [("COM_OF_LOSS_T", MAV_PARAM_TYPE_REAL32, 1.0), ("COM_OBL_RC_ACT", MAV_PARAM_TYPE_INT32, 0),
                             ("RTL_RETURN_ALT", MAV_PARAM_TYPE_REAL32, 30.0), ("MPC_XY_VEL_MAX", MAV_PARAM_TYPE_REAL32, 12.0),
                             ("NAV_DLL_ACT", MAV_PARAM_TYPE_INT32, 0), ("COM_FAIL_ACT_T", MAV_PARAM_TYPE_REAL32, 5.0),
                             ("MIS_TAKEOFF_ALT", MAV_PARAM_TYPE_REAL32, 2.5)]:
        p = t.lookup(name)
        assert (p.type, p.value) == (typ, value), name


def test_overrides_and_unknown_names():
    t = ParamTable.px4_defaults({"MPC_TKO_SPEED": 4, "COM_OBL_RC_ACT": 4.0})
    assert t.get("MPC_TKO_SPEED") == 4.0 and isinstance(t.get("COM_OBL_RC_ACT"), int)
    with pytest.raises(KeyError):
        ParamTable.px4_defaults({"NO_SUCH_PARAM": 1})


def test_bytewise_int_encoding():
    assert int_to_wire(10040) == pytest.approx(1.4069e-41, rel=1e-3)  # SYS_AUTOSTART as PX4 sends it
    assert math.isnan(int_to_wire(-1))  # SDLOG_MODE -1 shows as NaN
    assert wire_to_int(int_to_wire(-519661574)) == -519661574
    t = ParamTable.px4_defaults()
    assert t.set_from_wire("NAV_DLL_ACT", int_to_wire(2), MAV_PARAM_TYPE_INT32) is True
    assert t.get("NAV_DLL_ACT") == 2
    assert t.set_from_wire("NAV_DLL_ACT", int_to_wire(2), MAV_PARAM_TYPE_INT32) is False


@needs_trace
def test_list_values_match_trace_wire_values():
    t = ParamTable.px4_defaults()
    changed_by_script = {"MPC_XY_VEL_MAX", "SDLOG_MODE"}
    n = 0
    for r in load_trace({"PARAM_VALUE"}, "px4->gcs"):
        f = r["fields"]
        if r["phase"] != "param_list" or f["param_index"] == 65535 or f["param_id"] in changed_by_script:
            continue
        p = t.by_index(f["param_index"])
        assert p.name == f["param_id"]
        if f["param_type"] == MAV_PARAM_TYPE_REAL32:
            assert p.wire_value == pytest.approx(f["param_value"], rel=1e-6, abs=1e-30)
        else:
            assert p.value == f["_param_value_as_int32"]
        n += 1
    assert n == 900
