import pytest

from onboard.vocab.spoken_numbers import digits_for_words, words_value


@pytest.mark.parametrize("text, out", [
    ("five hundred and fifty meters north", "550 m north"),
    ("a quarter of a kilometre south", "250 m south"),
    ("half a kilometre", "500 m"),
    ("three quarters of a km", "750 m"),
    ("one point two kilometres", "1200 m"),
    ("a kilometre and a half", "1500 m"),
    ("one and a half kilometres", "1500 m"),
    ("a hundred metres", "100 m"),
    ("four hundred and twenty-five m", "425 m"),
    ("go one thousand two hundred metres", "go 1200 m"),
    ("seventy five meters", "75 m"),
])
def test_spelled_distances_become_digits(text, out):
    assert digits_for_words(text) == out


@pytest.mark.parametrize("text", ["It is 400 m north of a kilometre marker", "and of a m", "a bar 300 m north",
                                  "Kolme Kruunua is 200 m east"])
def test_other_text_is_left_alone(text):
    assert digits_for_words(text) == text


def test_words_without_a_number_say_none():
    assert words_value(["and", "of"]) is None
    assert words_value(["three", "quarters"]) == 0.75
