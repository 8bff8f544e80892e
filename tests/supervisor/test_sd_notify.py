"""sd_notify against a real Unix datagram socket, including one nobody reads."""

import socket
import threading

from onboard.supervisor.sd_notify import notify, watchdog_period_s


def test_notify_delivers_and_never_blocks_on_a_full_socket(tmp_path):
    path = tmp_path / "n.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as rx:
        rx.bind(str(path))
        env = {"NOTIFY_SOCKET": str(path)}
        assert notify("READY=1", env)
        assert rx.recv(100) == b"READY=1"
        results: list[bool] = []
        sender = threading.Thread(target=lambda: results.extend(notify("WATCHDOG=1", env) for _ in range(2000)),
                                  daemon=True)   # far more than the queue holds; a blocking send never returns
        sender.start()
        sender.join(60.0)
        assert not sender.is_alive(), "notify blocked on a full socket"
        assert results[0] and not results[-1]  # the overflow is dropped, not waited for
    assert notify("READY=1", {}) is False  # not under systemd
    assert notify("READY=1", {"NOTIFY_SOCKET": str(tmp_path / "gone.sock")}) is False


def test_watchdog_period_is_half_of_systemds():
    assert watchdog_period_s({"WATCHDOG_USEC": "10000000"}) == 5.0
    assert watchdog_period_s({}) is None and watchdog_period_s({"WATCHDOG_USEC": "junk"}) is None
