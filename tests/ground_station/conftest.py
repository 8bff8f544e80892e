"""Fixtures of the ground-station tests: the flight log on each backend (see pgkit)."""

from tests.ground_station.pgkit import log_target, pg_cluster  # noqa: F401 - fixtures
