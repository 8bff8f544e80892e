"""The kind of thing a description asks for ("the red kiosk", "a person by the fountain"), when it names one.

A goal is found by its name when a sign spells it; a goal that is a kind of
thing ("a person", "the red kiosk") has no sign, and only a detector can see it.
The kind is the first word of `KINDS` that an article ("a", "an", "the") opens,
with at most `MAX_ADJECTIVES` lower-case words between ("the tall red kiosk"):
the thing asked for comes first in the descriptions operators write ("a person
by the fountain"), the places it is near come after. The word is kept as typed
(the agent knows the goal by the words of the text, `GoalDescription.names_goal`),
the phrase with its adjectives is what an open-vocabulary detector is asked.

A listed vocabulary rather than any noun: a closed list keeps a kind from being
read into a name ("the Kiasma museum" is a landmark, not a kind to detect) and is
the set of words the detections' labels are matched against (`same_kind`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from onboard.vocab.text_fold import fold

# Kind -> the words that name it (singular; a plural "s" is accepted). "person" is the shipped
# detector's one class; the rest are things an open-vocabulary detector (Grounding DINO) is asked for.
KINDS: dict[str, tuple[str, ...]] = {
    "person": ("person", "people", "pedestrian", "human", "man", "woman", "child", "hiker", "runner", "cyclist"),
    "kiosk": ("kiosk", "booth", "stall", "stand"),
    "car": ("car", "taxi"),
    "van": ("van",),
    "truck": ("truck", "lorry"),
    "bus": ("bus",),
    "bicycle": ("bicycle", "bike"),
    "bench": ("bench",),
    "statue": ("statue", "sculpture", "monument"),
    "fountain": ("fountain",),
    "tent": ("tent",),
    "boat": ("boat",),
    "dog": ("dog",),
    "umbrella": ("umbrella", "parasol"),
}
ARTICLES = ("a", "an", "the")
MAX_ADJECTIVES = 3
_WORD = re.compile(r"[^\W\d_][\w'-]*")


@dataclass(frozen=True)
class GoalKind:
    """A kind the description asks for: `kind` (a key of `KINDS`), `word` as typed, `phrase` with its adjectives."""

    kind: str
    word: str
    phrase: str


def kind_of_word(word: str) -> str | None:
    """The kind a word names ("hikers" -> "person"), or None."""
    w = fold(word.strip(" .,;:!?'\"")).lower()
    for kind, words in KINDS.items():
        if w in words or (w.endswith("s") and w[:-1] in words) or (w.endswith("es") and w[:-2] in words):
            return kind
    return None


def goal_kind(text: str) -> GoalKind | None:
    """The first kind an article opens in `text` ("Find the red kiosk" -> kiosk, "red kiosk"); None without one."""
    words = [(m.group(0), m.start()) for m in _WORD.finditer(text)]
    for i, (w, _) in enumerate(words):
        if fold(w) not in ARTICLES:
            continue
        for j in range(i + 1, min(len(words), i + 2 + MAX_ADJECTIVES)):
            word = words[j][0]
            if not word.islower():
                break  # a capitalised word: a name ("the Kiasma museum"), not a kind
            kind = kind_of_word(word)
            if kind is not None:
                return GoalKind(kind, word, " ".join(x for x, _ in words[i + 1:j + 1]))
    return None


def same_kind(label: str, kind: str) -> bool:
    """Whether a detector's label ("person", "red kiosk") names `kind`: any word of it does."""
    return any(kind_of_word(w) == kind for w in label.split())
