"""One typed, versioned dataclass per telemetry message type; :mod:`contract.messages` is the front door."""
