"""The kind a description asks for: the first listed kind an article opens, names and landmarks aside."""

from onboard.vocab.goal_kind import goal_kind, kind_of_word, same_kind


def test_the_thing_asked_for_comes_first():
    k = goal_kind("Find a person by the fountain in Esplanadi park.")
    assert (k.kind, k.word, k.phrase) == ("person", "person", "person")
    k = goal_kind("Fly to the tall red kiosk 50 m north of Kiasma.")
    assert (k.kind, k.word, k.phrase) == ("kiosk", "kiosk", "tall red kiosk")
    assert goal_kind("Look for the two hikers near the lake").word == "hikers"  # plural, a synonym; "two" an adjective


def test_names_and_plain_goals_have_no_kind():
    assert goal_kind("Find Alepa Kallio. It is about 200 m north of Kiasma.") is None
    assert goal_kind("Go to the Kiasma museum kiosk") is None  # a capitalised word: a name, not a kind
    assert goal_kind("The person") is not None and goal_kind("person by the lake") is None  # no article


def test_labels_are_matched_by_kind():
    assert same_kind("person", "person") and same_kind("red kiosk", "kiosk") and same_kind("booth", "kiosk")
    assert not same_kind("car", "person") and not same_kind("", "person")
    assert kind_of_word("Buses") == "bus" and kind_of_word("fountain.") == "fountain" and kind_of_word("Kiasma") is None
