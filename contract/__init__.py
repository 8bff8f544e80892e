"""What crosses a process boundary, and nothing else: the contract every Aerie process shares.

As PX4's modules share only uORB message definitions, the supervisor, the ground
station and the simulator share only this package: the telemetry envelope
(``envelope``), the typed, versioned message payloads (``messages``, one
dataclass per message type in ``payloads``), the frames of every other socket
(``wire``: the world feed, replay and ack, memory sync, the simulator's control
socket, the status socket, the fleet and exploration channels, each in its own
module), the experience records that lessons are made of (``records``, with
``bundle`` their file) and the CurveZMQ key files (``curve_keys``). What the
processes share without sending it (config loading, logging, geodesy) is in
``common``.

It imports nothing of ``common``, ``onboard``, ``ground_station``, ``sim`` or
``firmware_bridge``; a test checks that.
"""
