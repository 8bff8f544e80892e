"""The field phrasing families (dev side): labels say exactly what the text says, the original families are unchanged.

Numbers are read back here by this file's own small patterns (not by the vehicle's reader):
feet/yards/miles convert exactly to the label's metres, legs add up to the label, a written
bearing is the label's bearing, a correction's label is the corrected value.
"""

from __future__ import annotations

import collections
import functools
import json
import math
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sim.benchmark.compass import DIRECTION_RE, direction_index, index_of_bearing
from sim.benchmark.field_phrasing import FIELD_FAMILIES, FIELD_FAMILY_NAMES, FIELD_SHAPE
from sim.benchmark.field_words import FT, MI, NM, YD, imperial, legs_of, legs_sum, round_bearing
from sim.benchmark.ordinary import phrase
from sim.benchmark.phrasing import FAMILY_NAMES, SHAPES, TruthRelation
from sim.instructions_bench import HAND_FILES, SPLIT_SEEDS, relation_right
from tests.sim._world_fixture import helsinki

TASKS = Path(__file__).resolve().parents[2] / "bench" / "tasks"
FIELD_DEV = TASKS / "helsinki_field_dev.json"
FIELD_HAND = TASKS / "instructions_field_hand.json"


@pytest.fixture(scope="module")
def world():
    return helsinki()


@functools.lru_cache(maxsize=1)
def _items() -> tuple:
    from sim.benchmark.instruction_set import labelled_descriptions

    return tuple(labelled_descriptions(helsinki(), n=12 * len(FIELD_FAMILY_NAMES), seed=11, families=FIELD_FAMILY_NAMES))


# --- this file's own reading of numbers --------------------------------------------------------

_NUM = r"\d[\d,]*(?:[.,]\d+)?"
_IMPERIAL = re.compile(
    rf"(?P<n>{_NUM}|[¼½¾⅓⅛]|\d/\d)\s?(?P<u>ft|feet|yards|yds|yd|miles|mile|mi|NM|nm|nautical miles)\b"
    r"|(?P<w>an eighth of a mile|a quarter of a mile|a quarter mile|a third of a mile|half a mile|a half mile"
    r"|three quarters of a mile)")
_WORD_MILES = {"an eighth of a mile": Fraction(1, 8), "a quarter of a mile": Fraction(1, 4),
               "a quarter mile": Fraction(1, 4), "a third of a mile": Fraction(1, 3), "half a mile": Fraction(1, 2),
               "a half mile": Fraction(1, 2), "three quarters of a mile": Fraction(3, 4)}
_GLYPHS = {"¼": Fraction(1, 4), "½": Fraction(1, 2), "¾": Fraction(3, 4), "⅓": Fraction(1, 3), "⅛": Fraction(1, 8)}
_UNITS = {"ft": FT, "feet": FT, "yd": YD, "yds": YD, "yards": YD, "mi": MI, "mile": MI, "miles": MI, "NM": NM, "nm": NM,
          "nautical miles": NM}
_METRIC = re.compile(rf"(?<![\w.,])(?P<n>{_NUM})\s?(?P<u>m|metres|meters|km|kilometres)\b")
_DIRS = r"north[\s-]?east|north[\s-]?west|south[\s-]?east|south[\s-]?west|north|south|east|west|NE|NW|SE|SW|N|E|S|W"


def _masked(text: str, names: list[str]) -> str:
    for n in sorted(names, key=len, reverse=True):
        text = text.replace(n, " ")
    return text


def _number(s: str) -> float:
    if s in _GLYPHS:
        return float(_GLYPHS[s])
    if "/" in s:
        a, b = s.split("/")
        return int(a) / int(b)
    if re.fullmatch(r"\d{1,3}(,\d{3})+", s):  # a thousands separator
        return float(s.replace(",", ""))
    return float(s.replace(",", "."))  # a decimal comma


def imperial_metres(text: str) -> list[float]:
    out = []
    for m in _IMPERIAL.finditer(text):
        if m.group("w"):
            out.append(float(_WORD_MILES[m.group("w")]) * MI)
        else:
            out.append(_number(m.group("n")) * _UNITS[m.group("u")])
    return out


def metric_metres(text: str) -> list[float]:
    return [_number(m.group("n")) * (1000.0 if m.group("u").startswith("k") else 1.0) for m in _METRIC.finditer(text)]


def directions(text: str) -> list[int]:
    """Compass directions written in `text`, leaving out negated ones ("not SE as I wrote", "west, not east")."""
    text = re.sub(rf"\bnot ({_DIRS})\b", " ", text)
    return [direction_index(m.group("word") or m.group("abbr")) for m in DIRECTION_RE.finditer(text)]


# after a keyword; with a degree sign or "degrees"; or three digits that are no distance ("190/0.3NM", "325, no, 145")
_BEARING = re.compile(r"(?:bearing(?: of)?|heading|bears|track|@)\s+(\d{1,3})\b"
                      r"|(?<![\d.,#-])(\d{1,3})(?:°| degrees)"
                      r"|(?<![\d.,#/-])(\d{3})(?![\d°]|[.,]\d|\s?(?:m|metres|meters|km|kilometres|ft|feet|yd|yds|yards"
                      r"|mi|miles|NM|nm)\b)")


def bearings(text: str) -> list[int]:
    return [int(next(g for g in m.groups() if g)) % 360 for m in _BEARING.finditer(text)]


_LEG = re.compile(rf"(?:turn (?P<turn>left|right)(?: and go|,)\s+)?(?:keep going (?P<kd>{_DIRS}) for another\s+)?"
                  rf"(?P<n>\d+)\s?(?P<u>m|metres|meters|yards)\b(?:\s+more)?(?:\s+(?P<d>{_DIRS}))?")


def legs_total(text: str) -> tuple[float, float]:
    """(distance, bearing) of the legs written in `text` (names must be masked), added up."""
    v, prev = np.zeros(2), None
    for m in _LEG.finditer(text):
        if m.group("turn"):
            k = (prev + (2 if m.group("turn") == "right" else 6)) % 8
        elif m.group("kd"):
            k = direction_index(m.group("kd"))
        elif m.group("d"):
            k = direction_index(m.group("d"))
        else:
            k = prev  # "another 250 m" with no word: the same way on
        metres = int(m.group("n")) * (YD if m.group("u") == "yards" else 1.0)
        r = math.radians(45.0 * k)
        v += metres * np.array([math.sin(r), math.cos(r)])
        prev = k
    return float(np.hypot(*v)), math.degrees(math.atan2(v[0], v[1])) % 360.0


def _gap(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def check_written(style: str, text: str, names: list[str], rel: dict) -> None:
    """The numbers and directions written in `text` are the label `rel` (the last one stated, for a correction)."""
    t = _masked(text, names)
    where = (style, text, rel)
    if rel["bearing"] is not None:
        assert index_of_bearing(rel["bearing"]) == rel["direction"], where
    if style == "walking_legs":
        d, b = legs_total(t)
        assert abs(d - rel["distance"]) <= 0.5 and _gap(b, rel["bearing"]) <= 0.05, (where, d, b)
        return
    if style == "imperial":
        assert imperial_metres(t) and abs(imperial_metres(t)[-1] - rel["distance"]) <= 0.5, (where, imperial_metres(t))
    else:
        written = imperial_metres(t) + metric_metres(t)  # NM for pilots, metres and km (with a comma) for the rest
        if not written and style != "reference_last":  # "half a kilometre" in one hand-written item
            raise AssertionError(where)
        if written:
            assert abs(written[-1] - rel["distance"]) <= 0.5, (where, written)
    if rel["bearing"] is not None:
        assert bearings(t) and bearings(t)[-1] == round(rel["bearing"]) % 360, (where, bearings(t))
        assert rel["bearing"] == round(rel["bearing"]), where  # people write whole degrees
    else:
        assert directions(t) and directions(t)[-1] == rel["direction"], (where, directions(t))
        if style != "correction":
            assert set(directions(t)) == {rel["direction"]}, (where, directions(t))


# --- the families -------------------------------------------------------------------------------

def test_at_least_eight_field_families_apart_from_the_original_twelve():
    assert len(FIELD_FAMILY_NAMES) >= 8
    assert not set(FIELD_FAMILY_NAMES) & set(FAMILY_NAMES)
    assert len(FAMILY_NAMES) == 12 and set(FIELD_SHAPE) == set(FIELD_FAMILIES)
    assert set(FIELD_SHAPE.values()) <= set(SHAPES)
    assert SPLIT_SEEDS["field-dev"] not in (SPLIT_SEEDS["dev"], SPLIT_SEEDS["test"])
    assert "field-hand" in HAND_FILES and HAND_FILES["field-hand"] == FIELD_HAND


def test_every_family_writes_text_whose_label_resolves_near_the_goal(world):
    pos = {lm.name: lm.centroid for lm in world.landmarks}
    goals = {g.name: g.xy for g in world.goals}
    items = _items()
    assert collections.Counter(i["family"] for i in items) == {f: 12 for f in FIELD_FAMILY_NAMES}
    for it in items:
        assert it["goal_name"] in it["text"], it
        (rel,) = it["relations"]
        assert rel["landmarks"][0] in it["text"], it
        b = math.radians(rel["bearing"] if rel["bearing"] is not None else 45.0 * rel["direction"])
        est = pos[rel["landmarks"][0]] + rel["distance"] * np.array([math.sin(b), math.cos(b)])
        assert np.hypot(*(est - goals[it["goal_name"]])) <= 160.0 + 1.0, it


def test_written_numbers_are_the_label(world):
    names = [lm.name for lm in world.landmarks]
    for it in _items():
        check_written(it["family"], it["text"], names + [it["goal_name"]], it["relations"][0])


def test_bearing_families_carry_the_written_degrees_and_compass_families_none():
    items = _items()
    by = collections.defaultdict(list)
    for it in items:
        by[it["family"]].append(it["relations"][0]["bearing"])
    assert all(b is not None for b in by["atc_bearing"] + by["walking_legs"])
    assert all(b % 5 == 0 for b in by["atc_bearing"])
    for fam in ("question", "imperial", "refer_back", "name_then_verb", "reference_last"):
        assert all(b is None for b in by[fam]), fam


def test_imperial_figures_convert_exactly():
    rng = np.random.default_rng(3)
    seen = set()
    for d in np.linspace(120.0, 900.0, 400):
        text, metres = imperial(float(d), rng)
        (back,) = imperial_metres(text)
        assert abs(back - metres) < 1e-6, text
        assert abs(metres - d) <= 0.10 * d, (text, d)
        seen.add(text.split()[-1] if " " in text else text)
    assert {"ft", "feet"} & seen and {"yd", "yards", "yds"} & seen and {"mi", "mile", "miles"} & seen
    assert imperial_metres("1,300 ft") == [1300 * 0.3048] and imperial_metres("½ mi") == [1609.344 / 2]


def test_legs_add_up_and_follow_compass_words():
    rng = np.random.default_rng(5)
    for b in np.linspace(0.0, 359.0, 90):
        legs = legs_of(400.0, float(b), rng)
        assert 2 <= len(legs) <= 3 and all(m >= 40 and m % 10 == 0 for m, _ in legs)
        d, sb = legs_sum(legs)
        assert abs(d - 400.0) <= 60.0 and _gap(sb, b) <= 12.0, (b, legs, d, sb)
    # 140 m north then 140 m east: one offset of 198 m at 045
    d, b = legs_sum([(140, 0), (140, 2)])
    assert round(d) == 198 and abs(b - 45.0) < 1e-9


def test_round_bearing_is_to_five_or_ten_degrees():
    rng = np.random.default_rng(0)
    for b in np.linspace(0.0, 359.9, 500):
        r = round_bearing(float(b), rng)
        assert 0 <= r < 360 and r % 5 == 0 and _gap(r, b) <= 5.0


def test_a_correction_labels_the_corrected_value():
    truth = (TruthRelation("offset", ("Kiasma",), 1, 412.0, bearing_deg=47.0),)
    for seed in range(30):
        p = phrase("correction", truth, "Café X", "cafe", np.random.default_rng(seed))
        (r,) = p.relations
        assert r.distance_m == 400.0 and r.direction == 1, p
        assert r.bearing_deg in (None, 45.0, 50.0), p
        check_written("correction", p.text, ["Kiasma", "Café X"], r.label())


# --- the original families are untouched -------------------------------------------------------

# labelled_descriptions(world, n=48, seed=404) before the field families existed (captured on main)
BEFORE_404 = {
    0: ("abbrev", "Raffaello is S.E. of Sanomatalo by 550 metres.", [("offset", ["Sanomatalo"], 3, 550)]),
    1: ("subject", "Pukukoppi lies around 500 metres to the northwest of Viisas hiiri.", [("offset", ["Pukukoppi"], 3, 500)]),
    2: ("ray", "Look northwest of Aikatalo but north of Sokos; Red Apple is there.",
        [("ray", ["Aikatalo"], 7, None), ("ray", ["Sokos"], 0, None)]),
    5: ("imperative", "Go about 300 m south-west from Espan lava and look for Rikhardinkadun kirjasto.",
        [("offset", ["Espan lava"], 5, 300)]),
    9: ("label", "target=Levytukku; ref=Lasipalatsi; 600 m east", [("offset", ["Lasipalatsi"], 2, 600)]),
    20: ("two_sentence", "Start at Pukukoppi. Scandic Paasi is 500 m to the north.", [("offset", ["Pukukoppi"], 0, 500)]),
    33: ("two_relations", "The hotel Hotel Haven is about 550 m south of Topelia and around 500m southeast of Aikatalo.",
         [("offset", ["Topelia"], 4, 550), ("offset", ["Aikatalo"], 3, 500)]),
    47: ("object", "Cafe Ekberg is located about 500 metres south west of Kirjatalo.", [("offset", ["Kirjatalo"], 5, 500)]),
}


def test_the_original_families_write_what_they_wrote_before(world):
    from sim.benchmark.instruction_set import labelled_descriptions

    items = labelled_descriptions(world, n=48, seed=404)
    for i, (fam, text, rels) in BEFORE_404.items():
        assert items[i]["family"] == fam and items[i]["text"] == text, (i, items[i])
        assert items[i]["relations"] == [{"kind": k, "landmarks": lm, "direction": d, "distance": m, "bearing": None}
                                         for k, lm, d, m in rels]


# --- scoring ------------------------------------------------------------------------------------

def _read(direction, distance, bearing="absent", landmark="Kiasma"):
    fields = {"kind": "offset", "landmarks": (landmark,), "direction": direction, "distance": distance}
    if bearing != "absent":
        fields["bearing_deg"] = bearing
    return SimpleNamespace(**fields)


def test_relation_right_uses_the_bearing_when_the_label_has_one():
    lab = {"kind": "offset", "landmarks": ["Kiasma"], "direction": 1, "distance": 400, "bearing": 30.0}
    assert relation_right(_read(1, 400.0, 31.5), lab)
    assert relation_right(_read(0, 400.0, 27.5), lab)  # the sector does not matter, the angle does
    assert not relation_right(_read(1, 400.0, 45.0), lab)  # rounded to north-east: 15 degrees off
    assert not relation_right(_read(1, 400.0), lab)  # a reading without a bearing
    assert not relation_right(_read(1, 400.0, None), lab)
    assert not relation_right(_read(1, 480.0, 30.0), lab)
    north = {**lab, "direction": 0, "bearing": 359.0}
    assert relation_right(_read(0, 400.0, 1.5), north)  # wraps at 360
    compass = {**lab, "bearing": None}
    assert relation_right(_read(1, 400.0, 80.0), compass)  # no bearing in the label: the 8-point direction
    assert relation_right(_read(1, 400.0), {k: v for k, v in compass.items() if k != "bearing"})  # old labels
    assert not relation_right(_read(2, 400.0), compass)


# --- the shipped dev-side files ---------------------------------------------------------------

def test_the_field_task_file_is_what_the_generator_writes_and_keeps_off_other_goals(world):
    from sim.benchmark.ordinary import generate_ordinary
    from sim.benchmark.tasks import dump_tasks, load_tasks

    taken = {t.goal_name for name in ("dev", "test", "dev2")
             for t in load_tasks(TASKS / f"helsinki_ordinary_{name}.json")[1]}
    tasks = generate_ordinary(world, 100, seed=505, prefix="f", exclude_goals=taken, families=FIELD_FAMILY_NAMES)
    assert json.loads(FIELD_DEV.read_text(encoding="utf-8")) == dump_tasks(tasks)
    assert not {t.goal_name for t in tasks} & taken and len({t.goal_name for t in tasks}) == 100
    assert collections.Counter(t.extra["family"] for t in tasks) == {f: 10 for f in FIELD_FAMILY_NAMES}
    names = [lm.name for lm in world.landmarks]
    for t in tasks:
        check_written(t.extra["family"], t.description, names + [t.goal_name], t.extra["relations"][0])


@functools.lru_cache(maxsize=1)
def _hand() -> dict:
    return json.loads(FIELD_HAND.read_text(encoding="utf-8"))


def test_the_hand_file_covers_every_family_with_ten_or_more():
    doc = _hand()
    assert doc["version"] == 1 and doc["about"].strip()
    counts = collections.Counter(it["style"] for it in doc["items"])
    assert set(counts) == set(FIELD_FAMILY_NAMES) and min(counts.values()) >= 10, counts
    ids = [it["id"] for it in doc["items"]]
    assert len(ids) == len(set(ids))
    for it in doc["items"]:
        assert set(it) == {"id", "style", "text", "goal_name", "relations"}, it["id"]
        assert it["goal_name"] in it["text"], it["id"]
        for r in it["relations"]:
            assert set(r) == {"kind", "landmarks", "direction", "distance", "bearing"}, it["id"]
            assert r["kind"] == "offset" and 0 <= r["direction"] <= 7 and r["distance"] > 0, it["id"]


def test_the_hand_labels_say_what_the_hand_wrote(world):
    landmarks = [lm.name for lm in world.landmarks]
    goal_names = {g.name for g in world.goals}
    for it in _hand()["items"]:
        assert it["goal_name"] in goal_names, it["id"]
        (rel,) = it["relations"]
        assert rel["landmarks"][0] in landmarks, it["id"]
        check_written(it["style"], it["text"], landmarks + [it["goal_name"]], rel)


# --- the commands -------------------------------------------------------------------------------

@pytest.mark.parametrize("split, n, want", [("field-dev", "20", 20), ("field-hand", "20", None)])
def test_the_field_splits_run_parser_only(tmp_path, split, n, want):
    out = tmp_path / "field.json"
    done = subprocess.run([sys.executable, "-m", "aerie", "bench", "instructions", "--split", split, "-n", n,
                           "--no-model", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    res = json.loads(out.read_text())
    assert res["split"] == split and set(res["parser_family_accuracy"]) == set(FIELD_FAMILY_NAMES)
    assert res["descriptions"] == (want if want is not None else len(_hand()["items"]))


def test_families_option_needs_ordinary_generation(capsys):
    from sim.nav_bench import main

    assert main(["--families", "field"]) == 2
    assert "--families needs --generate --draw ordinary" in capsys.readouterr().err
