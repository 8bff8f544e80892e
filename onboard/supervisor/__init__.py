"""The onboard supervisor behind `aerie fly`: bridge, observations, models, agent, telemetry, one process."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from onboard.supervisor.cli import main as cli_main

    return cli_main(argv)
