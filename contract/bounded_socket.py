"""Every ZeroMQ socket of Aerie is made here, with a bound on the messages it will read.

Without ``ZMQ_MAXMSGSIZE`` a peer can send one message of any size and ZeroMQ
allocates it before anyone looks at it (a 10 MB subscription message grew a
vehicle by a gigabyte). A message over the bound makes ZeroMQ drop that
connection unread; the owner of a connecting socket that must stay live
re-creates it (see ``ground_station.ingest``). ``tests/faults/test_19_04``
checks that no ``.socket(`` call bypasses :func:`bounded_socket`.
"""

from __future__ import annotations

from typing import Any

# Above this ZeroMQ's int64 option would still accept it, but nothing of ours is that big.
_MAX_LIMIT = 1 << 40


def bounded_socket(ctx: Any, kind: int, max_message_bytes: int, *, linger_ms: int = 0) -> Any:
    """A socket of ``kind`` from ``ctx`` that refuses inbound messages over ``max_message_bytes``."""
    import zmq

    if type(max_message_bytes) is not int or not (1 <= max_message_bytes <= _MAX_LIMIT):
        raise ValueError(f"max_message_bytes must be an integer within [1, 2^40], got {max_message_bytes!r}")
    sock = ctx.socket(kind)
    try:
        sock.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        sock.setsockopt(zmq.LINGER, linger_ms)
    except BaseException:
        sock.close(0)
        raise
    return sock
