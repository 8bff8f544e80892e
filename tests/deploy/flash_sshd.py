"""A throwaway OpenSSH server on 127.0.0.1 for the flash tests.

Fresh host key and user key in a temporary directory, an ephemeral port,
loopback only, and stopped (by its own pid) when the test ends. The server
stands in for the Jetson; ``SetEnv PYTHONPATH=...`` makes the test runner's
installed packages importable on the "target", the way JetPack's system
site-packages provide TensorRT and OpenCV there — so the flash installs the
wheel with ``--no-deps`` and stays fast.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def sshd_binary() -> str | None:
    for p in (shutil.which("sshd"), "/usr/sbin/sshd"):
        if p and os.access(p, os.X_OK):
            return p
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LocalSshd:
    proc: subprocess.Popen
    port: int
    user: str
    ssh_opts: str
    workdir: Path

    @property
    def host(self) -> str:
        return f"{self.user}@127.0.0.1"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def start_sshd(workdir: Path, *, pythonpath: str) -> LocalSshd:
    sshd = sshd_binary()
    assert sshd, "sshd not installed"
    workdir.mkdir(parents=True, exist_ok=True)
    os.chmod(workdir, 0o700)
    host_key, user_key = workdir / "host_ed25519", workdir / "user_ed25519"
    for key in (host_key, user_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    (workdir / "authorized_keys").write_text((workdir / "user_ed25519.pub").read_text())
    os.chmod(workdir / "authorized_keys", 0o600)
    port = _free_port()
    (workdir / "known_hosts").write_text(f"[127.0.0.1]:{port} {(workdir / 'host_ed25519.pub').read_text()}")
    cfg = workdir / "sshd_config"
    cfg.write_text("\n".join([
        f"Port {port}",
        "ListenAddress 127.0.0.1",
        f"HostKey {host_key}",
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
        f"PidFile {workdir / 'sshd.pid'}",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        "PermitRootLogin prohibit-password",
        "StrictModes no",
        "UsePAM no",
        f"SetEnv PYTHONPATH={pythonpath}",
        "",
    ]))
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
    proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=open(workdir / "sshd.log", "wb"))
    user = subprocess.run(["id", "-un"], check=True, capture_output=True, text=True).stdout.strip()
    ssh_opts = f"-i {user_key} -o UserKnownHostsFile={workdir / 'known_hosts'} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes"
    server = LocalSshd(proc, port, user, ssh_opts, workdir)
    deadline = time.monotonic() + 10
    while True:
        r = subprocess.run(["ssh", "-p", str(port), "-o", "BatchMode=yes", *ssh_opts.split(), server.host, "true"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return server
        if proc.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"sshd did not come up: {r.stderr}\n{(workdir / 'sshd.log').read_text()}")
        time.sleep(0.2)
