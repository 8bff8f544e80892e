"""The ground station: subscribes to vehicles, fills gaps by replay, keeps a SQLite flight log.

``aerie ground --config FILE`` runs :class:`.ingest.GroundStation` (settings in
:mod:`.settings`, example in ``ground.example.yaml``). Per vehicle it holds a
SUB socket (live telemetry) and a DEALER socket (status, replay, ack); it
detects holes in ``seq`` (and, by polling status, loss at the tail), asks the
vehicle's journal for them, stores everything idempotently in
:class:`.flight_log.FlightLog` (flights, messages, events, rejected-frame
counters) and acknowledges only what is committed. Bad frames are counted by
reason, never fatal.

``aerie ground sync --config FILE --vehicle ID BUNDLE`` delivers a memory
export bundle (:mod:`.memory_sync`); ``aerie ground`` itself writes each ended
flight's lessons (:mod:`.post_flight`) and delivers every bundle to every
vehicle, late to one that was off (:mod:`.lesson_courier`).
"""
