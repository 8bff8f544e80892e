"""Onboard telemetry: msgpack envelopes over ZeroMQ PUB, with a store-and-forward SQLite journal.

Every message is ``{v, type, vehicle_id, seq, t_ns, payload}`` (:mod:`.envelope`);
``seq`` increases per vehicle without gaps and survives restarts because the
journal (:mod:`.journal`) commits each message before it goes on the wire and
keeps it until the ground station acknowledges it. A ROUTER socket
(:mod:`.replay_server`) answers status and replay requests and takes acks.
Both sockets are CurveZMQ servers admitting only authorized ground keys
(:mod:`.curve_keys`, ``aerie keys generate DIR``).

Supervisor usage::

    from onboard.telemetry.publisher import TelemetryPublisher
    from contract.messages import AgentStep, FlightEnd, FlightStart, MapImage, Pose, State, bridge_event_listener

    pub = TelemetryPublisher(cfg.telemetry, cfg.vehicle_id, data_dir=cfg.data_dir).start()
    bridge.events.add_listener(bridge_event_listener(pub.publish))   # BridgeEvent -> "event"
    pub.flight_start(FlightStart(mission=mission_id))
    pub.publish("state", State.from_state(bridge.state))   # call freely; throttled to state_rate_hz
    pub.event("anchor_created", {"anchor_id": 12})
    pub.publish("agent_step", AgentStep(step=n, current_state=s, action=a, reason=r,
                                        pose=Pose(x, y), distance_estimate_m=d))
    pub.publish("map", MapImage(png_bytes, step=n))  # throttled; oversized -> payload_refused event
    pub.flight_end(FlightEnd(reason="landed"))
    pub.close()

Memory sync (vehicle side): :class:`.memory_sync.MemorySyncServer`.
Nothing here imports ``sim/``, ``ground_station/`` or ``firmware_bridge/``.
"""
