"""Run the dashboard app with uvicorn in a background thread of the ground station.

The socket is bound here, before the thread starts, so a taken port is
reported to the caller at once and port 0 yields the real port for the URL.
Uvicorn does not install signal handlers off the main thread, so the ground
station's own SIGINT/SIGTERM handling stays in charge and calls :meth:`stop`.

A dashboard bound beyond loopback without a token would serve every flight to
anyone who can reach it, so it does not start (:class:`DashboardAuthError`).
"""

from __future__ import annotations

import logging
import socket
import threading
from pathlib import Path

from contract.access_token import AccessTokenError, load_token_hash
from ground_station.dashboard.app import DashboardContext, create_app
from ground_station.dashboard.city_layer import map_loader
from ground_station.dashboard.auth import is_loopback
from ground_station.settings import GroundConfig, log_target, resolve

log = logging.getLogger("aerie.ground.dashboard")


class DashboardError(RuntimeError):
    """The dashboard could not listen on its address."""


class DashboardAuthError(DashboardError):
    """The dashboard would be reachable beyond this machine without a token: a configuration error."""


class DashboardServer:
    def __init__(self, ctx: DashboardContext, *, host: str = "127.0.0.1", port: int = 8765) -> None:
        self.ctx = ctx
        self.host = host
        self.port = port
        self.url = ""
        self._server: object | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @classmethod
    def from_config(cls, cfg: GroundConfig, base_dir: str | Path) -> "DashboardServer":
        city = map_loader(resolve(base_dir, cfg.dashboard_map), cfg.dashboard_buildings_radius_m) \
            if cfg.dashboard_map else None
        digest = None
        if not is_loopback(cfg.dashboard_host):
            try:
                digest = load_token_hash(resolve(base_dir, cfg.dashboard_token_hash))
            except AccessTokenError as exc:
                raise DashboardAuthError(
                    f"dashboard_host {cfg.dashboard_host!r} is not a loopback address, so the dashboard needs its "
                    f"token, and there is none: {exc}. Make one with `aerie keys dashboard-token DIR` (or "
                    f"`aerie keys generate`) and set dashboard_token_hash, or bind to 127.0.0.1") from exc
        ctx = DashboardContext(db_path=log_target(cfg, base_dir), poll_interval_s=cfg.dashboard_poll_interval_s,
                               load_world=city, token_digest=digest,
                               max_live_clients=cfg.dashboard_max_live_clients)
        return cls(ctx, host=cfg.dashboard_host, port=cfg.dashboard_port)

    def start(self) -> str:
        """Bind, start serving in a thread and return the URL."""
        import uvicorn

        if self.ctx.token_digest is None and not is_loopback(self.host):
            raise DashboardAuthError(f"dashboard_host {self.host!r} is not a loopback address: the dashboard "
                                     "will not serve it without a token (dashboard_token_hash)")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(64)
        except OSError as exc:
            sock.close()
            raise DashboardError(f"dashboard cannot listen on {self.host}:{self.port} ({exc.strerror})") from exc
        self._sock = sock
        port = sock.getsockname()[1]
        host = f"[{self.host}]" if family == socket.AF_INET6 else self.host
        self.url = f"http://{host}:{port}/"
        config = uvicorn.Config(create_app(self.ctx), log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2, ws="none")
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="dashboard",
                                        daemon=True)
        self._thread.start()
        log.info("dashboard serving", extra={"fields": {"url": self.url, "token": self.ctx.token_digest is not None}})
        return self.url

    def stop(self, timeout: float = 5.0) -> None:
        self.ctx.stopping.set()
        if self._server is not None:
            self._server.should_exit = True   # type: ignore[attr-defined]
        if self._thread is not None:
            self._thread.join(timeout)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> "DashboardServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
