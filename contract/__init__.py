"""What crosses a process boundary, and nothing else: the contract every Aerie process shares.

As PX4's modules share only uORB message definitions, the supervisor, the ground
station and the simulator share only this package: the telemetry envelope
(``envelope``), the typed, versioned message payloads (``messages``, one
dataclass per message type in ``payloads``), the experience records that
lessons are made of (``records``), the CurveZMQ key files (``curve_keys``), the
typed-config loader every process reads its YAML with (``typed_config``) and the
JSON-lines log format (``log_setup``).

It imports nothing of ``onboard``, ``ground_station``, ``sim`` or
``firmware_bridge``; a test checks that.
"""
