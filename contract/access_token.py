"""The dashboard's access token: made with the link keys, shown once, stored only as its hash.

Only the SHA-256 of the token is written to disk, so the ground station can
check a token without holding it, and a copied key folder does not give
access to the dashboard. The token itself is printed once by ``aerie keys``;
lost, it is replaced with ``aerie keys dashboard-token DIR``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

# File name of the token's hash in a key folder.
TOKEN_HASH_FILE = "dashboard.token_sha256"


class AccessTokenError(RuntimeError):
    """The token's hash file is missing or not a SHA-256 digest."""


def generate_token(directory: str | Path) -> tuple[str, Path]:
    """A fresh token and the file its hash is written to (mode 0600, replacing an older one)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    path = directory / TOKEN_HASH_FILE
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(hashlib.sha256(token.encode("ascii")).hexdigest() + "\n")
    os.replace(tmp, path)
    return token, path


def load_token_hash(path: str | Path) -> bytes:
    """The digest in ``path`` (32 bytes)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise AccessTokenError(f"{path}: cannot read the dashboard token hash ({exc})") from exc
    try:
        digest = bytes.fromhex(text)
    except ValueError:
        digest = b""
    if len(digest) != 32:
        raise AccessTokenError(f"{path}: not a SHA-256 digest (make one with `aerie keys dashboard-token DIR`)")
    return digest


def token_matches(given: bytes, digest: bytes) -> bool:
    """Whether ``given`` is the token of ``digest``, in time independent of where they differ."""
    return hmac.compare_digest(hashlib.sha256(given).digest(), digest)
