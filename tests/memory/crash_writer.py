"""Child process for the crash test: writes experiences forever, printing each uid once committed."""

from __future__ import annotations

import sys

from onboard.memory.embedder import MiniLMEmbedder
from onboard.memory.experience_store import ExperienceStore
from contract.records import NavigateExperience
from onboard.memory.settings import MemoryConfig


def main(path: str) -> None:
    with ExperienceStore.open(path, MiniLMEmbedder.load(), MemoryConfig()) as store:
        print("ready", flush=True)
        i = 0
        while True:
            exp = NavigateExperience(f"goal {i}", "success" if i % 3 else "failure", f"lesson number {i}",
                                     '{"action": "forward"}', f"step {i}: flying over block {i % 17} of the city")
            uid = store.add(exp)  # returns after COMMIT
            print(uid, flush=True)
            i += 1


if __name__ == "__main__":
    main(sys.argv[1])
