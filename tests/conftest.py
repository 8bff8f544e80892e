"""Fixtures shared across test packages: the flight log on each backend (tests/ground_station/pgkit.py).

Here, not imported into each module, so each test worker starts one throwaway PostgreSQL server.
"""

from tests.ground_station.pgkit import log_target, pg_cluster  # noqa: F401 - fixtures
