"""A throwaway PostgreSQL server from the distribution's binaries: for the tests and `aerie bench ground`.

The server is the real one (``initdb`` + ``pg_ctl``) in a temporary folder,
listening only on a Unix socket in that folder, so several can run side by side
and none touches a system cluster. PostgreSQL refuses to run as root: as root
(CI) it runs as the ``postgres`` user the distribution's package creates.
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

from ground_station import migrations
from ground_station.log_db import open_postgres


class NoServer(RuntimeError):
    """No PostgreSQL server can be started here (binaries or user missing); says what to install."""


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

    @classmethod
    def start_new(cls, *, durable: bool = False) -> "PgCluster":
        """A started server, or :class:`NoServer` saying what is missing."""
        bin_dir = server_bin()
        if bin_dir is None:
            raise NoServer("PostgreSQL server binaries (initdb, pg_ctl) not installed: apt-get install postgresql")
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise NoServer("running as root and there is no 'postgres' user to run the server as") from None
        return cls(bin_dir, durable=durable).start()

    def __init__(self, bin_dir: Path, *, durable: bool = False) -> None:
        """``durable``: fsync on, commits not waited for (``synchronous_commit=off``), like a SQLite log in WAL
        with ``synchronous=NORMAL``: a killed client loses no commit, a power cut the last instants. Off
        (the tests, which kill clients only): no fsync at all."""
        self.bin_dir = bin_dir
        self.durable = durable
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
        sync = "-c synchronous_commit=off" if self.durable else "-c fsync=off"
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "server.log"), "-w", "-t", "60",
                  "-o", f"-k {self.dir} -c listen_addresses= -p {self.port} {sync} -c max_connections=300",
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
