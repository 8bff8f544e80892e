"""The shared vocabulary of the onboard packages: the words and types several layers speak.

The lowest layer inside `onboard/` (the order is in `tests/contract/test_layers.py`):
it imports no other onboard package, so the map, perception, the fleet channel, the
agent and the mission runner can all read names and sightings alike without one of
them owning what the others need.

``text_fold`` (folding text for matching; ASCII for OpenCV's fonts), ``landmark_names``
(names in an instruction, and how far a typed name may be from the real one),
``goal_name`` (where a place name ends), ``compass_words`` and ``spoken_numbers``
(bearings and distances in words), ``observation`` (what the agent perceives and
commands: observations, sightings, actions, the findings peers share).
"""
