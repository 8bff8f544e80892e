from onboard.agent.landmark_names import find_mentions, tolerance
from onboard.agent.text_fold import edit_distance, fold

GAZ = ["Pääesikunta", "Kiasma", "Hotelli Torni", "Vanha kirkko", "Vanha Kauppahalli", "EY", "Keva", "Postitalo"]


def names(text):
    return [m.name for m in find_mentions(text, GAZ)]


def test_case_and_diacritics_do_not_matter():
    assert names("300 m west of paaesikunta") == ["Pääesikunta"]
    assert names("HOTELLI TORNI then KIASMA") == ["Hotelli Torni", "Kiasma"]
    assert fold("Pääesikunta Café") == "paaesikunta cafe"
    assert len(fold("Ångström")) == len("Ångström")


def test_one_typo_in_a_long_name_two_in_a_very_long_one():
    assert names("west of Kiamsa") == ["Kiasma"]  # a swap
    assert names("west of Hotelli Tornii") == ["Hotelli Torni"]
    assert names("west of Vanha kirko") == ["Vanha kirkko"]
    assert tolerance("Keva") == 0 and tolerance("Kiasma") == 1 and tolerance("Vanha Kauppahalli") == 2


def test_short_names_match_only_exactly_and_whole():
    assert names("a Kev a") == []
    assert names("Eyes") == []
    assert names("ey") == ["EY"]


def test_a_span_between_two_names_is_left_alone():
    gaz = ["Kaivotalo", "Kaisotalo"]
    assert find_mentions("near Kaiwotalo", gaz) == []


def test_edit_distance_is_capped():
    assert edit_distance("kiasma", "kiamsa", 2) == 1
    assert edit_distance("abcdef", "uvwxyz", 2) == 3
