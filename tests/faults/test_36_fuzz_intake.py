"""Issue 36, deliverable 2 (mission files and config): any bytes decode or raise the decoder's own error.

The decoders that take files from outside, `load_mission` (the standby queue,
`aerie fly --mission`) and `load_config` (`aerie config`, every start), are
fed bytes from Hypothesis: raw bytes, YAML-shaped token soup (anchors,
aliases, tags, flow and block nesting, odd scalars) and valid files with a
slice replaced. Each must return its dataclass or raise ConfigError, whose
message is under 1 KB: never another exception (the standby queue would
survive one, `aerie config` would print a traceback). Bounded by example
counts, not time; the database is off so a run leaves nothing behind.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.typed_config import ConfigError
from onboard.config import AerieConfig, load_config
from onboard.supervisor.mission import Mission, load_mission

FUZZ = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TOKENS = ["instruction", "name", "step_limit", "geofence", "polygon", "action", "max_distance_from_home_m",
          "goal_name", "supervisor", "telemetry", "safety", "mission_poll_s", "queue_max_messages", "detect_prompts",
          ":", ": ", " ", "\n", "\n  ", "\n    ", "- ", "[", "]", "{", "}", ",", "&a ", "*a", "&b ", "*b", "<<: ",
          "!!python/object:os.system ", "!!binary ", "!!set ", "!!omap ", "!!str ", "!!int ", "? ", "|", ">", "---",
          "...", "#", "'", '"', "\\", "1", "0", "-1", "yes", "null", "~", ".nan", ".inf", "1e999", "9" * 40,
          "2026-13-45", "12:30:00", "0x1F", "0o17", "\t", "\x00", "\ufeff", "é", "%YAML 1.1\n", "%TAG ! !x\n"]
MISSION = b"instruction: find the cafe\nname: m1\nstep_limit: 5\ngeofence:\n  max_distance_from_home_m: 400\n"
CONFIG = (b"vehicle_id: aerie-7\nsupervisor:\n  mission_poll_s: 0.5\n  detect_prompts: [person, car]\n"
          b"telemetry:\n  queue_max_messages: 5000\nsafety:\n  geofence:\n    polygon: [[47.1, 8.1], [47.2, 8.1], "
          b"[47.2, 8.2]]\n")


def soup() -> st.SearchStrategy[bytes]:
    return st.lists(st.sampled_from(TOKENS), max_size=80).map(lambda ts: "".join(ts).encode("utf-8"))


def spliced(base: bytes) -> st.SearchStrategy[bytes]:
    """``base`` with one slice replaced by raw bytes or token soup."""
    return st.tuples(st.integers(0, len(base)), st.integers(0, 40), st.one_of(st.binary(max_size=60), soup())).map(
        lambda t: base[:t[0]] + t[2] + base[t[0] + t[1]:])


def inputs(base: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=400), soup(), spliced(base))


def _decodes_or_refuses(load, cls, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "input.yaml"
        f.write_bytes(data)
        try:
            result = load(f)
        except ConfigError as exc:
            assert len(str(exc)) < 1024
        else:
            assert isinstance(result, cls)


@FUZZ
@given(inputs(MISSION))
def test_mission_decoder_decodes_or_raises_config_error(data):
    _decodes_or_refuses(load_mission, Mission, data)


@FUZZ
@given(inputs(CONFIG))
def test_config_decoder_decodes_or_raises_config_error(data):
    _decodes_or_refuses(load_config, AerieConfig, data)


def test_the_seeds_themselves_decode():
    """The spliced inputs start from valid files: a fuzz run that only ever saw refusals would prove little."""
    _decodes_or_refuses(load_mission, Mission, MISSION)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "m.yaml"
        f.write_bytes(MISSION)
        assert load_mission(f).name == "m1"
        f.write_bytes(CONFIG)
        assert load_config(f).vehicle_id == "aerie-7"
