"""Which OSM tags become a building's aliases, and which aliases the reader may use."""

from __future__ import annotations

import math

import numpy as np

from onboard.map.city import Building, Poi, landmark_aliases
from onboard.map.osm_extract import aliases_of


def test_other_names_are_split_trimmed_and_never_the_name_itself():
    tags = ("Helsinki Cathedral", "Helsingfors domkyrka", "Tuomiokirkko;  St Nicholas'  Church ", None, math.nan)
    assert aliases_of("Helsingin tuomiokirkko", tags) == ("Helsinki Cathedral", "Helsingfors domkyrka",
                                                          "Tuomiokirkko", "St Nicholas' Church")
    assert aliases_of("Kiasma", ("KIASMA", "kiasma ", "")) == ()  # the name again, in other case
    assert aliases_of("Suomen Pankki", ("The Bank of Finland",)) == ("Bank of Finland",)


def test_an_alias_two_landmarks_share_or_that_is_another_landmarks_name_is_nobodys():
    sq = np.zeros((3, 2))
    lms = [Building(0, "Postitalo", sq, 1.0, "default", aliases=("Posthuset", "Central Post")),
           Building(1, "Sanomatalo", sq, 1.0, "default", aliases=("Sanomahuset", "Central Post")),
           Building(2, "Lasipalatsi", sq, 1.0, "default", aliases=("Postitalo",))]
    assert landmark_aliases(lms, []) == {"Posthuset": "Postitalo", "Sanomahuset": "Sanomatalo"}


def test_an_alias_that_is_also_a_places_name_is_left_to_the_place():
    """A goal may be that place: read as the building, its name would become a landmark."""
    sq = np.zeros((3, 2))
    lms = [Building(0, "Kansallisarkisto", sq, 1.0, "default", aliases=("National Archives of Finland", "Riksarkivet"))]
    archive = Poi(0, "The National Archives of Finland", "archive", np.zeros(2), 60.17, 24.95)
    assert landmark_aliases(lms, [archive]) == {"Riksarkivet": "Kansallisarkisto"}
