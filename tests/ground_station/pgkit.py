"""Test kit: a throwaway PostgreSQL server (sim/pg_server.py), one fresh database per test.

Tests skip, saying why, only when the server's binaries are not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from sim.pg_server import NoServer, PgCluster


def start_cluster() -> PgCluster:
    """A started server, or a skip that says what is missing."""
    try:
        return PgCluster.start_new()
    except NoServer as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def log_target(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where a test's flight log lives, once per backend: a SQLite file, or a fresh migrated database."""
    if request.param == "sqlite":
        return tmp_path / "flight_log.sqlite"
    return request.getfixturevalue("pg_cluster").new_database()
