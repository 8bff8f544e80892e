"""The dashboard's token gate: off loopback, every route needs the token made by ``aerie keys``.

On a loopback address only this machine can reach the dashboard, and it is
open. Bound anywhere else it would serve every flight's telemetry to whoever
can reach the port, so each request must carry the token, as an
``Authorization: Bearer`` header (scripts) or the cookie set by opening the
page once with ``?token=`` (browsers: the page's own requests and its SSE
stream then carry the cookie). The login redirects to the same URL without the
token, so it does not stay in the address bar. Tokens are compared by hash in
constant time (:mod:`contract.access_token`).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlencode

from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from contract.access_token import token_matches

COOKIE = "aerie_dashboard_token"
# Seconds a browser keeps the login cookie.
COOKIE_MAX_AGE_S = 30 * 24 * 3600


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address ("" and 0.0.0.0 are every interface: not)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    if not host:
        return False
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        return False
    addrs = {str(info[4][0]).split("%", 1)[0] for info in infos}
    return bool(addrs) and all(ipaddress.ip_address(a).is_loopback for a in addrs)


def _refuse(why: str) -> PlainTextResponse:
    return PlainTextResponse(f"401 Unauthorized: {why}. Send 'Authorization: Bearer TOKEN' or open this "
                             "dashboard once at URL?token=TOKEN (the token `aerie keys` printed).\n",
                             status_code=401, headers={"WWW-Authenticate": 'Bearer realm="aerie-dashboard"',
                                                       "Cache-Control": "no-store"})


class TokenGate:
    """ASGI middleware: pass a request carrying the token, answer 401 to any other."""

    def __init__(self, app: ASGIApp, digest: bytes) -> None:
        self.app = app
        self.digest = digest

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":    # the dashboard has none; refused, not passed on unchecked
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        login = conn.query_params.get("token")
        if login is not None:
            if not token_matches(login.encode("utf-8", "surrogateescape"), self.digest):
                await _refuse("wrong token")(scope, receive, send)
                return
            rest = urlencode([(k, v) for k, v in conn.query_params.multi_items() if k != "token"])
            response = RedirectResponse(conn.url.path + (f"?{rest}" if rest else ""), status_code=303,
                                        headers={"Cache-Control": "no-store"})
            response.set_cookie(COOKIE, login, max_age=COOKIE_MAX_AGE_S, path="/", httponly=True, samesite="strict")
            await response(scope, receive, send)
            return
        given = None
        auth = conn.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            given = auth[7:].strip().encode("latin-1", "replace")
        elif COOKIE in conn.cookies:
            given = conn.cookies[COOKIE].encode("utf-8", "surrogateescape")
        if given is None:
            await _refuse("this dashboard needs its token")(scope, receive, send)
        elif not token_matches(given, self.digest):
            await _refuse("wrong token")(scope, receive, send)
        else:
            await self.app(scope, receive, send)
