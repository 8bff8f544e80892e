from onboard.vocab.landmark_names import find_mentions, tolerance
from onboard.vocab.text_fold import edit_distance, fold

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


# Other names of the gazetteer's landmarks, as a map built from OSM carries them (name:en, name:sv, short_name).
ALIASES = {"Helsinki Cathedral": "Vanha kirkko", "Old Market Hall": "Vanha Kauppahalli", "Gamla Saluhallen":
           "Vanha Kauppahalli", "Defence Command Finland": "Pääesikunta", "Huvudstaben": "Pääesikunta",
           "Museum of Modern Art Kiasma": "Kiasma", "Kamppi Chapel": "Postitalo", "Ernst & Young": "EY",
           "Somewhere Else": "Not In The Gazetteer"}


def alias_names(text):
    return [m.name for m in find_mentions(text, GAZ, ALIASES)]


def test_an_alias_is_read_as_the_name_it_stands_for():
    assert alias_names("200 m north of Helsinki Cathedral") == ["Vanha kirkko"]
    assert alias_names("the old market hall, then 300 m west") == ["Vanha Kauppahalli"]
    assert alias_names("söder om Gamla saluhallen") == ["Vanha Kauppahalli"]
    assert alias_names("past huvudstaben and the Museum of Modern Art Kiasma") == ["Pääesikunta", "Kiasma"]
    assert alias_names("across from Ernst & Young") == ["EY"]


def test_an_alias_tolerates_a_typo_like_a_name():
    assert alias_names("north of Helsinki Cathedrel") == ["Vanha kirkko"]
    assert alias_names("from Defence Comand Finland") == ["Pääesikunta"]


def test_an_alias_gives_no_short_names_and_names_nothing_outside_the_gazetteer():
    # "Kamppi" is a district before it is this chapel's: an alias' words never stand alone for it
    assert alias_names("100 m north of Kamppi") == []
    assert alias_names("near Somewhere Else") == []
    assert names("200 m north of Helsinki Cathedral") == []  # without the aliases: not a landmark


def test_initials_of_an_alias_count_and_a_shared_initial_is_nobodys():
    from onboard.vocab.landmark_names import initials

    spell = (("Defence Command Finland", "Pääesikunta"), ("Pääesikunta", "Pääesikunta"))
    assert initials(spell) == {"DCF": "Pääesikunta"}
    spell += (("Dance Club Finland", "Tanssiklubi"),)
    assert initials(spell) == {}
