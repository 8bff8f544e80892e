"""How to reach the target: ssh/rsync command lines and remote step calls.

Every target-side step is a case of deploy/remote.sh, piped over SSH on
stdin, so nothing has to be installed on the Jetson before the first flash
and the script that runs is always the one in this checkout.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REMOTE_SCRIPT = Path(__file__).with_name("remote.sh")


@dataclass(frozen=True)
class Target:
    """``user@host`` plus the SSH options that reach it (port, key, known hosts)."""

    host: str
    port: int = 22
    ssh_options: tuple[str, ...] = ()

    def ssh_base(self) -> list[str]:
        # BatchMode: a flash must fail, not hang, on a password prompt.
        return ["ssh", "-p", str(self.port), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", *self.ssh_options]

    def ssh_argv(self, remote_command: str) -> list[str]:
        return [*self.ssh_base(), self.host, remote_command]

    def rsync_argv(self, source_dir: Path, remote_dir: str) -> list[str]:
        # No -t/-o/-g: content decides (--checksum), so re-sending an identical
        # release changes nothing, not even a timestamp. -L copies the files
        # that local model links point at; --chmod makes everything readable by
        # the service user whatever the local file modes were.
        rsh = shlex.join(self.ssh_base())
        return ["rsync", "-rlpL", "--checksum", "--itemize-changes", "--chmod=D755,F644", "-e", rsh,
                f"{source_dir}/", f"{self.host}:{remote_dir}/"]


@dataclass(frozen=True)
class StepOutput:
    """What a remote step printed: RESULT/CHECK lines parsed, the rest kept as log."""

    returncode: int
    results: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    @property
    def result(self) -> str:
        return self.results[-1] if self.results else ""


def remote_command(step: str, *args: str) -> str:
    return shlex.join(["bash", "-s", "--", step, *args])


def run_remote(target: Target, step: str, *args: str, timeout_s: float = 3600) -> StepOutput:
    """Run one step of remote.sh on the target; stdout parsed line by line."""
    proc = subprocess.run(target.ssh_argv(remote_command(step, *args)), input=REMOTE_SCRIPT.read_bytes(),
                          capture_output=True, timeout=timeout_s)
    out = StepOutput(proc.returncode)
    for line in proc.stdout.decode("utf-8", "replace").splitlines() + proc.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("RESULT "):
            out.results.append(line[7:])
        elif line.startswith("CHECK "):
            out.checks.append(line[6:])
        elif line.startswith("SKIP "):
            out.skips.append(line[5:])
            out.log.append(line)
        else:
            out.log.append(line)
    return out
