"""The combined reader: when the model is asked, and that a model answer the text does not support is refused.

The `generate` functions here are scripted model answers (garbage, a landmark the
text never names, a valid answer), to exercise the validator; the real SmolLM2
reads in tests/inference/test_instruction_reader_model.py.
"""

import json

import pytest

from onboard.agent.instruction_reader import TextFacts, read_instruction, reading_schema, unsettled
from onboard.agent.goal_description import parse_goal_description

GAZ = ["Postitalo", "Kiasma", "Stockmann"]
# The parser reads Kiasma's relation and Stockmann's, and leaves a direction unexplained: a shape it cannot settle.
ODD = "Kiasma 300 m east, Stockmann stands west of the bar Loose, look 200 m north or so"


def answer(*relations):
    text = json.dumps({"relations": [dict(zip(("landmark", "direction", "metres", "landmark_is_subject"), r))
                                     for r in relations]})
    calls = []

    def generate(messages, schema):
        calls.append((messages, schema))
        return text
    generate.calls = calls
    return generate


def test_a_settled_reading_never_asks_the_model():
    gen = answer(("Kiasma", "north", 0, False))
    r = read_instruction("Bar Loose is 300 m east of Kiasma.", GAZ, gen)
    assert r.reader == "parser" and not gen.calls
    assert [(x.landmarks, x.direction, x.distance) for x in r.goal.relations] == [(("Kiasma",), 2, 300.0)]


def test_unsettled_shapes_are_named():
    facts = TextFacts.of(ODD, GAZ)
    assert facts.landmarks == ("Kiasma", "Stockmann") and facts.distances == (300.0, 200.0)
    why = unsettled(parse_goal_description(ODD, GAZ), facts)
    assert why
    assert unsettled(parse_goal_description("Bar X near Kiasma", GAZ), TextFacts.of("Bar X near Kiasma", GAZ)) \
        == "no relation read"


def test_the_schema_offers_only_what_the_text_says():
    props = reading_schema(TextFacts.of(ODD, GAZ))["properties"]["relations"]["items"]["properties"]
    assert props["landmark"]["enum"] == ["Kiasma", "Stockmann"]
    assert props["metres"]["enum"] == [0, 200, 300]
    assert set(props["direction"]["enum"]) == {"east", "north", "west"}


def test_a_valid_model_reading_replaces_the_parsers():
    gen = answer(("Kiasma", "east", 300, False), ("Stockmann", "west", 0, True))
    r = read_instruction(ODD, GAZ, gen)
    assert r.reader == "model" and len(gen.calls) == 1
    assert [(x.kind, x.landmarks, x.direction, x.distance) for x in r.goal.relations] == [
        ("offset", ("Kiasma",), 2, 300.0), ("ray", ("Stockmann",), 2, None)]  # Stockmann is W of the goal: goal E


@pytest.mark.parametrize("gen, error", [
    (answer(("Postitalo", "east", 300, False)), "not named in the text"),
    (answer(("Kiasma", "south", 300, False)), "not written in the text"),
    (answer(("Kiasma", "east", 450, False)), "not a distance the text states"),
    (answer(("Kiasma", "east", 300, False), ("Kiasma", "north", 200, False)), "repeats landmark"),
    (lambda m, s: "{\"relations\": [", "not JSON"),
    (lambda m, s: "[]", "must be a list"),
])
def test_a_model_reading_the_text_does_not_support_is_refused_and_the_parser_kept(gen, error):
    r = read_instruction(ODD, GAZ, gen)
    assert r.reader == "parser" and r.unsettled
    assert r.goal.relations == parse_goal_description(ODD, GAZ).relations
    assert error in r.model_errors[0]


def test_a_model_that_raises_leaves_the_parsers_reading():
    def broken(messages, schema):
        raise TimeoutError("model did not answer within 2 s")
    r = read_instruction(ODD, GAZ, broken)
    assert r.reader == "parser" and "TimeoutError" in r.model_errors[0]


def test_the_parser_reader_never_asks():
    gen = answer(("Kiasma", "east", 300, False))
    assert read_instruction(ODD, GAZ, gen, reader="parser").reader == "parser" and not gen.calls
    with pytest.raises(ValueError, match="unknown reader"):
        read_instruction(ODD, GAZ, gen, reader="oracle")


def test_the_agent_reads_a_landmarks_english_name_as_the_landmark():
    """Hand-written: an operator uses the names OSM gives in English and Swedish; the agent plans on the local one."""
    from onboard.agent.agent import GraphAgent

    aliases = {"Central Post Office": "Postitalo", "Posthuset": "Postitalo",
               "Museum of Modern Art Kiasma": "Kiasma"}
    agent = GraphAgent(gazetteer=GAZ, aliases=aliases)
    agent.reset("Find Café Regatta, 250 m north-east of the Central Post Office.")
    (rel,) = agent.reading.goal.relations
    assert (rel.landmarks, rel.direction, rel.distance) == (("Postitalo",), 1, 250.0)
    two = read_instruction("Bar Ölhalle: 300 m south of posthuset and 100 m east of museum of modern art kiasma",
                           GAZ, aliases=aliases)
    assert [r.landmarks for r in two.goal.relations] == [("Postitalo",), ("Kiasma",)]
    assert read_instruction("Find Café Regatta, 250 m north-east of the Central Post Office.", GAZ).goal.relations == ()
