from onboard.agent.strategy_control import (Effect, ErrorThresholdController, classify_effect, is_ababa, is_stuck,
                                            would_ababa)


def test_effect_classification():
    assert classify_effect(True, 300.0, 250.0, 10.0) == Effect.SUCCESS
    assert classify_effect(True, 250.0, 300.0, 10.0) == Effect.FAILURE
    assert classify_effect(True, 250.0, 245.0, 10.0) == Effect.INEFFECTIVE
    assert classify_effect(False, 300.0, 250.0, 10.0) == Effect.FAILURE  # commanded, not achieved
    assert classify_effect(True, None, None, 10.0) == Effect.INEFFECTIVE


def test_consecutive_failures_trigger_a_detour_reflection():
    c = ErrorThresholdController(max_consecutive_failures=3, ttl_steps=5)
    trail = [1, 2, 3, 4]
    assert c.record(Effect.FAILURE, 1, trail[:2]) is None
    assert c.record(Effect.SUCCESS, 2, trail[:3]) is None  # a success resets the count
    assert c.record(Effect.INEFFECTIVE, 3, trail) is None
    assert c.record(Effect.FAILURE, 4, trail + [5]) is None
    r = c.record(Effect.FAILURE, 5, trail + [5, 6])
    assert r is not None and r.avoid == frozenset({3, 4, 5}) and r.active(9) and not r.active(10)
    assert "did not bring the target closer" in r.text


def test_loop_detection():
    assert is_ababa([7, 1, 2, 1, 2, 1]) and not is_ababa([1, 2, 1, 2, 3])
    assert would_ababa([1, 2, 1], 2) and not would_ababa([1, 2, 3], 2)
    assert is_stuck([1, 2, 3] * 4) and not is_stuck(list(range(12)))
    c = ErrorThresholdController()
    r = c.record(Effect.SUCCESS, 5, [1, 2, 1, 2, 1])
    assert r is not None and r.avoid == frozenset({2}) and "ABABA" in r.text
