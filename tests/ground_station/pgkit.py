"""Test kit: a throwaway PostgreSQL server from the distribution's binaries, one fresh database per test.

The server is the real one (``initdb`` + ``pg_ctl``), in a temporary folder,
listening only on a Unix socket in that folder, so parallel test workers each
run their own and none touches a system cluster. PostgreSQL refuses to run as
root: as root (CI) it runs as the ``postgres`` user the package creates. Tests
skip, saying why, only when the binaries are not installed.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from ground_station import migrations
from ground_station.log_db import open_postgres


def server_bin() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, else Debian's /usr/lib/postgresql/<version>/bin (newest)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if Path(folder, "initdb").exists() and Path(folder, "pg_ctl").exists():
            return Path(folder)
    return None


class PgCluster:
    """A server in its own folder; stopped and removed by :meth:`stop`."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.user = None if os.geteuid() != 0 else "postgres"
        self.dir = Path(tempfile.mkdtemp(prefix="aerie-pg-", dir="/tmp"))   # short: a socket path has a limit
        self.port = 5432   # only a Unix socket in self.dir, so no port is shared with anything
        self._names = itertools.count(1)

    def _run(self, *cmd: str) -> None:
        argv = [str(self.bin_dir / cmd[0]), *cmd[1:]]
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()[-2000:]}")

    def start(self) -> "PgCluster":
        if self.user is not None:
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self._run("initdb", "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        # fsync off: the tests kill ground processes, never this server.
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "server.log"), "-w", "-t", "60",
                  "-o", f"-k {self.dir} -c listen_addresses= -p {self.port} -c fsync=off -c max_connections=300",
                  "start")
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.dir}&port={self.port}"

    def new_database(self, *, migrate: bool = True) -> str:
        """A fresh empty database (migrated to the latest schema unless told not); its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        admin = open_postgres(self.url())
        try:
            admin.execute(f"CREATE DATABASE {name}")
        finally:
            admin.close()
        url = self.url(name)
        if migrate:
            db = open_postgres(url)
            try:
                migrations.migrate(db)
            finally:
                db.close()
        return url

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop")
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def start_cluster() -> PgCluster:
    """A started server, or a skip that says what is missing."""
    bin_dir = server_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not installed: apt-get install postgresql")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
    return PgCluster(bin_dir).start()


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
