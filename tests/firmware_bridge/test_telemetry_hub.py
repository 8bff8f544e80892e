import asyncio

import pytest

from firmware_bridge.telemetry_hub import DuplicateSubscription, TelemetryHub


async def _never():
    await asyncio.Event().wait()
    yield None


async def test_second_subscription_to_a_stream_is_refused():
    hub = TelemetryHub()
    hub._stream("position", _never, lambda v: None)
    with pytest.raises(DuplicateSubscription, match="position"):
        hub._stream("position", _never, lambda v: None)
    await hub.stop()


async def test_readers_see_latest_value_and_slow_readers_skip_ahead():
    hub = TelemetryHub()
    seen = []

    async def reader():
        async for state in hub.changes():
            seen.append(state.battery_percent)
            if state.battery_percent <= 50:
                return

    task = asyncio.create_task(reader())
    await asyncio.sleep(0)
    for pct in (90.0, 80.0, 70.0, 60.0, 50.0):  # five updates before the reader runs again
        hub._set(battery_percent=pct)
    await asyncio.wait_for(task, 1.0)
    assert seen == [50.0]  # coalesced to the newest, no backlog
    assert hub.state.battery_percent == 50.0


async def test_wait_for_times_out():
    hub = TelemetryHub()
    with pytest.raises(asyncio.TimeoutError):
        await hub.wait_for(lambda s: s.armed, 0.1)


async def test_a_bad_value_does_not_end_the_stream():
    hub = TelemetryHub()
    values = asyncio.Queue()

    async def source():
        while True:
            yield await values.get()

    got = []

    def on_value(v):
        if v == "bad":
            raise ValueError("malformed")
        got.append(v)

    hub._stream("x", source, on_value)
    for v in ("a", "bad", "b"):
        values.put_nowait(v)
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert got == ["a", "b"]
    await hub.stop()
