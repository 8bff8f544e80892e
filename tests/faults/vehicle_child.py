"""A vehicle's telemetry side in its own process, for fault tests that attack or kill it.

``python -m tests.faults.vehicle_child DATA_DIR MODE [PUB REPLAY]`` (endpoints to bind, default any
free port: a restarted vehicle keeps its addresses); prints ``endpoints PUB REPLAY SYNC``,
then ``flushed SEQ`` lines. MODE ``fly`` publishes a flight (flight_start, agent steps, states)
until killed; ``idle`` publishes a state every 20 ms; both also serve memory sync, importing
bundles into a real experience store only when one arrives.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from contract.messages import AgentStep, Pose
from onboard.telemetry.memory_sync import MemorySyncServer
from onboard.telemetry.publisher import TelemetryPublisher
from onboard.telemetry.settings import TelemetryConfig


def _import(data_dir: Path):
    def run(path: Path):
        from onboard.memory.bundle import import_bundle
        from onboard.memory.embedder import MiniLMEmbedder
        from onboard.memory.experience_store import ExperienceStore

        with ExperienceStore.open(data_dir / "memory.sqlite", MiniLMEmbedder.load()) as store:
            return import_bundle(store, path)
    return run


def main(data_dir: str, mode: str, pub_ep: str = "tcp://127.0.0.1:0", replay_ep: str = "tcp://127.0.0.1:0") -> None:
    data = Path(data_dir)
    cfg = TelemetryConfig(pub_endpoint=pub_ep, replay_endpoint=replay_ep,
                          sync_endpoint="tcp://127.0.0.1:0", journal_path=str(data / "journal.sqlite"),
                          state_rate_hz=0.0, curve=False, close_ack_wait_s=0.0)
    pub = TelemetryPublisher(cfg, "uav-x", data_dir=data).start()
    sync = MemorySyncServer(cfg, data_dir=data, import_fn=_import(data)).start()
    print(f"endpoints {pub.pub_endpoint} {pub.replay_endpoint} {sync.endpoint}", flush=True)
    deadline = time.monotonic() + 120.0   # bounded: the test kills it long before
    if mode == "fly":
        pub.flight_start({"mission": "fault", "task_instruction": "find the red door"})
    i = 0
    while time.monotonic() < deadline:
        pub.publish("state", {"i": i, "rel_alt_m": 10.0})
        if mode == "fly" and i % 5 == 0:
            pub.publish("agent_step", AgentStep(
                step=i // 5, current_state=f"street {i}", action="forward", reason="toward the door",
                pose=Pose(float(i), 0.0), distance_estimate_m=max(5.0, 100.0 - i)))
        i += 1
        if i % 10 == 0:
            pub.flush(5.0)
            print(f"flushed {pub.last_seq}", flush=True)
        time.sleep(0.02)
    sync.close()
    pub.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
