"""CurveZMQ key files and socket setup shared by the vehicle and the ground station.

Key files are the ZeroMQ certificate format written by ``zmq.auth``
(``NAME.key`` public, ``NAME.key_secret`` secret). The vehicle is the CURVE
server on both of its sockets and admits only clients whose public key is in
its authorized directory (ZAP); the ground station is the client and pins the
vehicle's public key, so a peer with any other key is refused in both
directions.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

# ZAP domain of Aerie's CURVE servers; the authenticator admits keys for this domain only.
ZAP_DOMAIN = "aerie"


class CurveKeyError(RuntimeError):
    """A key file is missing or unreadable, or CURVE is unavailable in libzmq."""


def generate_keypair(directory: str | Path, name: str) -> tuple[Path, Path]:
    """Write ``NAME.key`` and ``NAME.key_secret`` into ``directory``; returns both paths."""
    import zmq.auth

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    public, secret = zmq.auth.create_certificates(str(directory), name)
    Path(secret).chmod(0o600)
    return Path(public), Path(secret)


def generate_link_keys(directory: str | Path, *, vehicle: str = "vehicle", ground: str = "ground") -> dict[str, Path]:
    """Key pairs for one vehicle and one ground station, and the vehicle's authorized directory."""
    directory = Path(directory)
    v_pub, v_sec = generate_keypair(directory, vehicle)
    g_pub, g_sec = generate_keypair(directory, ground)
    authorized = directory / "authorized"
    authorized.mkdir(parents=True, exist_ok=True)
    shutil.copy(g_pub, authorized / g_pub.name)
    return {"vehicle_public": v_pub, "vehicle_secret": v_sec, "ground_public": g_pub,
            "ground_secret": g_sec, "authorized_dir": authorized}


def load_secret(path: str | Path) -> tuple[bytes, bytes]:
    """(public, secret) from a ``.key_secret`` file."""
    import zmq.auth

    path = Path(path)
    try:
        public, secret = zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as exc:
        raise CurveKeyError(f"{path}: cannot load secret key ({exc})") from exc
    if not secret:
        raise CurveKeyError(f"{path}: no secret key in this file")
    return public, secret


def load_public(path: str | Path) -> bytes:
    import zmq.auth

    path = Path(path)
    try:
        public, _ = zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as exc:
        raise CurveKeyError(f"{path}: cannot load public key ({exc})") from exc
    return public


def start_authenticator(context: Any, authorized_dir: str | Path) -> Any:
    """Start ZAP on ``context`` admitting only the public keys in ``authorized_dir``."""
    import zmq
    from zmq.auth.thread import ThreadAuthenticator

    if not zmq.has("curve"):
        raise CurveKeyError("this libzmq has no CURVE support")
    authorized_dir = Path(authorized_dir)
    if not authorized_dir.is_dir():
        raise CurveKeyError(f"{authorized_dir}: authorized keys directory does not exist")
    auth = ThreadAuthenticator(context)
    auth.start()
    auth.configure_curve(domain=ZAP_DOMAIN, location=str(authorized_dir))
    return auth


def make_server(socket: Any, secret_file: str | Path) -> None:
    """Make ``socket`` a CURVE server with the key pair in ``secret_file`` (before bind)."""
    import zmq

    public, secret = load_secret(secret_file)
    socket.curve_secretkey = secret
    socket.curve_publickey = public
    socket.curve_server = True
    socket.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN.encode())


def make_client(socket: Any, secret_file: str | Path, server_public_file: str | Path) -> None:
    """Make ``socket`` a CURVE client pinning the server's public key (before connect)."""
    public, secret = load_secret(secret_file)
    socket.curve_secretkey = secret
    socket.curve_publickey = public
    socket.curve_serverkey = load_public(server_public_file)
