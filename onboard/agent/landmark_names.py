"""Find the gazetteer's landmark names in a description, as people type them.

The rule, stated once: a name matches where the text has it, ignoring case and
diacritics ("paaesikunta" is Pääesikunta), at word boundaries; longer names
win over names inside them. Failing that, a typo is tolerated in a span of the
same number of words whose first letter agrees: one slip (an insertion,
deletion, substitution or swap of neighbours) in a name of at least
`FUZZY_MIN_LETTERS` letters, two slips from `FUZZY_TWO_LETTERS` letters. A
span as close to two names is left alone: a guess between two buildings is
worse than no landmark, which the reader reports as such. And a typo match
must stand alone, not inside a longer capitalised name: "Bar Hotel Torni" is a
bar, not Hotelli Torni misspelt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from onboard.agent.text_fold import edit_distance, fold

FUZZY_MIN_LETTERS = 6
FUZZY_TWO_LETTERS = 12
# Capitalised words that open a sentence or a clause rather than continue a name.
STARTERS = frozenset({"From", "Find", "Look", "Go", "Starting", "Halfway", "The", "Reach", "Near", "At", "In", "To",
                      "Head", "Then", "There", "You", "It", "A", "An", "Of", "By", "Fly", "Start", "Past", "Target",
                      "Goal", "Reference", "Ref", "Landmark", "Offset"})
_WORD = re.compile(r"\w(?:[\w'’&/.-]*\w)?")


@dataclass(frozen=True)
class Mention:
    """Where the text names a landmark: [start, end) in the text, the gazetteer's spelling, slips."""

    start: int
    end: int
    name: str
    slips: int = 0


def tolerance(name: str) -> int:
    letters = sum(ch.isalnum() for ch in name)
    return 2 if letters >= FUZZY_TWO_LETTERS else 1 if letters >= FUZZY_MIN_LETTERS else 0


def find_mentions(text: str, gazetteer: list[str]) -> list[Mention]:
    """Non-overlapping landmark mentions in `text`, in order of position."""
    folded = fold(text)
    found: list[Mention] = []

    def free(s: int, e: int) -> bool:
        return all(e <= m.start or s >= m.end for m in found)

    names = sorted(set(n for n in gazetteer if n.strip()), key=len, reverse=True)
    for name in names:
        for m in re.finditer(rf"(?<!\w){re.escape(fold(name))}(?!\w)", folded):
            if free(m.start(), m.end()):
                found.append(Mention(m.start(), m.end(), name))
    words = list(_WORD.finditer(folded))
    by_count: dict[int, list[tuple[str, str, int]]] = {}
    for name in names:
        tol = tolerance(name)
        if tol:
            f = " ".join(fold(name).split())
            by_count.setdefault(len(f.split(" ")), []).append((name, f, tol))
    for count, cands in sorted(by_count.items(), reverse=True):
        for i in range(len(words) - count + 1):
            s, e = words[i].start(), words[i + count - 1].end()
            if not free(s, e):
                continue
            if _inside_a_name(text, words, i, i + count - 1):
                continue
            span = " ".join(w.group() for w in words[i:i + count])
            scored = sorted((edit_distance(span, f, tol), name) for name, f, tol in cands
                            if f[0] == span[0] and edit_distance(span, f, tol) <= tol)
            if scored and (len(scored) == 1 or scored[0][0] < scored[1][0]):
                found.append(Mention(s, e, scored[0][1], scored[0][0]))
    return sorted(found, key=lambda m: m.start)


def _inside_a_name(text: str, words: list[re.Match], first: int, last: int) -> bool:
    """Whether the span of words first..last runs on into a capitalised neighbour (space-separated)."""
    if first > 0:
        prev = words[first - 1]
        if not text[prev.end():words[first].start()].strip() and text[prev.start()].isupper() \
                and text[prev.start():prev.end()] not in STARTERS:
            return True
    if last + 1 < len(words):
        nxt = words[last + 1]
        if not text[words[last].end():nxt.start()].strip() and text[nxt.start()].isupper():
            return True
    return False
