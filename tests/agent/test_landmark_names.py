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


SHORT_GAZ = ["Helsingin keskustakirjasto Oodi", "Suomen Kansallisteatteri", "Kampin kappeli", "Kaisaniemen venevaja",
             "Nordstrom Building", "Hotelli Torni", "Hotel Lilla Robert", "Kiasma"]


def short(text):
    return [m.name for m in find_mentions(text, SHORT_GAZ)]


def test_a_distinctive_word_stands_for_its_long_name():
    assert short("Cafe X is 300 m north of Oodi.") == ["Helsingin keskustakirjasto Oodi"]
    assert short("fly 200 m south of kansallisteatteri") == ["Suomen Kansallisteatteri"]
    assert short("150 m east of Torni") == ["Hotelli Torni"]
    assert short("Nordstrom, then Kiasma") == ["Nordstrom Building", "Kiasma"]


def test_kinds_genitives_and_words_inside_other_names_are_not_short_names():
    assert short("the Building is 100 m north of the Hotel") == []  # kinds of place, not one building
    assert short("the goal is 200 m east of Robert") == []  # a first name
    assert short("Kaisaniemen ala-aste is 400 m north of Kiasma") == ["Kiasma"]  # a district's genitive
    assert short("Kampin kirjasto is 100 m west of Kiasma") == ["Kiasma"]
    assert short("Bar Torni is 100 m west of Kiasma") == ["Kiasma"]  # inside another capitalised name
    assert short("300 m north of Oodin") == []  # spelt right or not at all


def test_a_word_two_names_share_stands_for_neither():
    gaz = ["Vanha kirkko", "Vanha Kauppahalli", "Hotelli Torni", "Torni Bar"]
    assert [m.name for m in find_mentions("400 m north of Torni", gaz)] == []
    assert [m.name for m in find_mentions("400 m north of Kauppahalli", gaz)] == ["Vanha Kauppahalli"]
