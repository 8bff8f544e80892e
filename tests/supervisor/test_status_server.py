"""The supervisor's status socket read by `aerie status`'s own client."""

import asyncio

from onboard.status import STATUS_SOCKET_NAME, read_supervisor
from onboard.supervisor.status_server import StatusServer


def test_status_socket_reports_live_checks(tmp_path):
    state = {"bridge": False}

    def broken():
        raise RuntimeError("memory file vanished")

    async def scenario():
        server = await StatusServer(tmp_path, {"bridge": lambda: (state["bridge"], "link"),
                                               "models": lambda: (True, "planner loaded"),
                                               "memory": broken}).start()
        sock = tmp_path / STATUS_SOCKET_NAME
        try:
            first = await asyncio.to_thread(read_supervisor, sock)
            state["bridge"] = True
            second = await asyncio.to_thread(read_supervisor, sock)
        finally:
            await server.close()
        return first, second, sock.exists()

    first, second, left = asyncio.run(scenario())
    f = {c.name: c for c in first}
    s = {c.name: c for c in second}
    assert f["supervisor"].ok and not f["bridge (live)"].ok and s["bridge (live)"].ok  # computed when asked
    assert not s["memory (live)"].ok and "vanished" in s["memory (live)"].detail
    assert not left


def test_stale_socket_file_is_replaced(tmp_path):
    (tmp_path / STATUS_SOCKET_NAME).write_text("left by a killed supervisor")

    async def scenario():
        server = await StatusServer(tmp_path, {"bridge": lambda: (True, "ok")}).start()
        try:
            return await asyncio.to_thread(read_supervisor, tmp_path / STATUS_SOCKET_NAME)
        finally:
            await server.close()

    assert asyncio.run(scenario())[0].ok
