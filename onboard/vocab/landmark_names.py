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

Last, short names: locals drop the generic part of a long name ("Oodi" for
Helsingin keskustakirjasto Oodi, "Kansallisteatteri" for Suomen
Kansallisteatteri). A word of a name of several words stands for that name
when it has at least `SHORT_NAME_MIN_LETTERS` letters, belongs to no other
name of the gazetteer, and is not a word that says what kind of place it is or
whose it is (`NOT_SHORT_NAMES`: "Hotel", "Building", "Helsinki", first names),
nor a Finnish genitive that qualifies the word after it ("Kampin" in Kampin
kappeli is Kamppi's, and "Kaisaniemen" opens the names of a dozen places); it
must be spelt right and stand alone, as above. And official names go by their
initials: "KHO" is Korkein hallinto-oikeus (the initials of its words and
hyphenated parts, at least three, typed in capitals, one name's only).

A landmark's other names (OpenStreetMap's name:en, name:sv, alt_name,
short_name and official_name: "Helsinki Cathedral", "Gamla kyrkan", "LVM")
are matched as the name itself, by every rule above but the short names.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping

from onboard.vocab.goal_name import OPENERS, foreign_word
from onboard.vocab.text_fold import edit_distance, fold

FUZZY_MIN_LETTERS = 6
FUZZY_TWO_LETTERS = 12
# Capitalised words that open a sentence or a clause rather than continue a name.
STARTERS = frozenset({"From", "Find", "Look", "Go", "Starting", "Halfway", "The", "Reach", "Near", "At", "In", "To",
                      "Head", "Then", "There", "You", "It", "A", "An", "Of", "By", "Fly", "Start", "Past", "Target",
                      "Goal", "Reference", "Ref", "Landmark", "Offset"}) | frozenset(w.capitalize() for w in OPENERS)
SHORT_NAME_MIN_LETTERS = 4
# Words of landmark names that name a kind of place, a city, a chain or a person rather than one building
# (folded). Written from what the words mean, not from any description set.
NOT_SHORT_NAMES = frozenset({
    "hotel", "hotelli", "building", "house", "talo", "nation", "plaza", "world", "trade", "center", "centre",
    "helsinki", "helsingin", "suomen", "finland", "vanha", "uusi", "koulu", "pankki", "kappeli", "kirkko",
    "liikenne", "korkein", "pyhan", "lava", "paloasema", "venevaja", "venekerho", "toimitalo", "paarakennus",
    "eurooppalainen", "snagari", "teatern", "svenska", "social-och", "scandic", "johan", "robert", "maria",
    "lilla", "kauppakeskus"})
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


def find_mentions(text: str, gazetteer: list[str], aliases: Mapping[str, str] | None = None) -> list[Mention]:
    """Non-overlapping landmark mentions in `text`, in order of position.

    `aliases` (alias -> a name of the gazetteer: "Helsinki Cathedral" -> Helsingin tuomiokirkko) are
    matched by the same rules as the names, and a mention of one is a mention of the name it stands for.
    """
    folded = fold(text)
    found: list[Mention] = []
    known = set(gazetteer)
    canon = {n: n for n in gazetteer} | {a: n for a, n in (aliases or {}).items() if n in known and a.strip()}

    def free(s: int, e: int) -> bool:
        return all(e <= m.start or s >= m.end for m in found)

    def mention(s: int, e: int, spelling: str, slips: int = 0) -> Mention:
        return Mention(s, e, canon[spelling], slips)

    names = sorted(set(n for n in canon if n.strip()), key=len, reverse=True)
    words = list(_WORD.finditer(folded))
    first_word = {w.start(): i for i, w in enumerate(words)}
    last_word = {w.end(): i for i, w in enumerate(words)}
    for name in names:
        for m in re.finditer(rf"(?<!\w){re.escape(fold(name))}(?!\w)", folded):
            i, j = first_word.get(m.start()), last_word.get(m.end())
            if i is not None and j is not None and _inside_a_name(text, words, i, j):
                continue  # "Original Sokos Hotel Vaakuna", "Ateneum Bistro": another place's name
            if free(m.start(), m.end()):
                found.append(mention(m.start(), m.end(), name))
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
            scored = sorted((edit_distance(span, f, tol), canon[name]) for name, f, tol in cands
                            if f[0] == span[0] and edit_distance(span, f, tol) <= tol)
            best = {}  # one landmark's name and its alias may both be near: the best slip count per landmark
            for slips, name in scored:
                best.setdefault(name, slips)
            ranked = sorted((v, k) for k, v in best.items())
            if ranked and (len(ranked) == 1 or ranked[0][0] < ranked[1][0]):
                found.append(Mention(s, e, ranked[0][1], ranked[0][0]))
    spellings = tuple((n, canon[n]) for n in names)
    short = short_names(spellings)
    acronyms = initials(spellings)
    for i, w in enumerate(words):
        name = short.get(w.group()) or acronyms.get(text[w.start():w.end()])
        if name is not None and free(w.start(), w.end()) and not _inside_a_name(text, words, i, i):
            found.append(Mention(w.start(), w.end(), name))
    # "the Cathedral", "the railway station": the last words of exactly one landmark's name or other name.
    endings = name_endings(spellings)
    for i, w in enumerate(words):
        if w.group() != "the":
            continue
        for count in (3, 2, 1):
            if i + count >= len(words):
                continue
            s, e = words[i + 1].start(), words[i + count].end()
            name = endings.get(" ".join(x.group() for x in words[i + 1:i + count + 1]))
            if name is not None and free(s, e) and not _inside_a_name(text, words, i + 1, i + count):
                found.append(Mention(s, e, name))
                break
    return sorted(found, key=lambda m: m.start)


@functools.lru_cache(maxsize=8)
def name_endings(spellings: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The last one to three words of a name or other name (folded) -> the one landmark they end.

    Locals say "the Cathedral" for Helsingin tuomiokirkko (Helsinki Cathedral) and "the railway station"
    for the central station: a kind of place the city has one of among its landmarks. Endings shared
    by two landmarks ("station": the railway and the fire station), and words that only say what
    a place is owned by or called after (`NOT_SHORT_NAMES`), stand for none.
    """
    owners: dict[str, set[str]] = {}
    for spelling, name in spellings:
        parts = fold(spelling).split()
        for k in (1, 2, 3):
            if len(parts) > k:
                owners.setdefault(" ".join(parts[-k:]), set()).add(name)
    return {end: next(iter(names)) for end, names in owners.items()
            if len(names) == 1 and end.split()[-1] not in NOT_SHORT_NAMES and sum(ch.isalpha() for ch in end) >= 5}


@functools.lru_cache(maxsize=8)
def initials(spellings: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Capital initials (three or more) -> the one name of the gazetteer they abbreviate.

    `spellings`: (a name or an alias, the gazetteer's name it is); initials of a name and of its
    alias that agree stand for the one landmark."""
    owners: dict[str, set[str]] = {}
    for spelling, name in spellings:
        parts = [p for p in re.split(r"[\s-]+", spelling) if p and p[0].isalpha() and p.lower() not in _GLUE_WORDS]
        if len(parts) >= 3:
            owners.setdefault("".join(p[0] for p in parts).upper(), set()).add(name)
    taken = {fold(s) for s, _ in spellings}
    return {k: next(iter(v)) for k, v in owners.items() if len(v) == 1 and fold(k) not in taken}


_GLUE_WORDS = frozenset({"ja", "och", "by", "of", "and", "the", "i", "af"})


@functools.lru_cache(maxsize=8)
def short_names(spellings: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Folded word -> the one name of several words it can stand for (see the module's rule).

    `spellings`: (a name or an alias, the gazetteer's name it is). Short names come from the names
    only: an alias is another whole name ("Helsinki Cathedral"), and its words are English or Swedish
    words of kind ("Chapel", "kapell") or of a district ("Kamppi") far more often than the local
    name's are. Its words still count as taken: a word in two landmarks' spellings is neither's."""
    owners: dict[str, set[str]] = {}
    for spelling, name in spellings:
        for w in _WORD.findall(fold(spelling)):
            owners.setdefault(w, set()).add(name)
    whole = {fold(s) for s, _ in spellings}
    out: dict[str, str] = {}
    for spelling, name in spellings:
        words = _WORD.findall(fold(spelling))
        if spelling != name or len(words) < 2:
            continue
        for k, w in enumerate(words):
            genitive = w.endswith("n") and k + 1 < len(words)
            if (not genitive and len(owners[w]) == 1 and w not in NOT_SHORT_NAMES and w not in whole
                    and sum(ch.isalpha() for ch in w) >= SHORT_NAME_MIN_LETTERS):
                out[w] = name
    return out


def _inside_a_name(text: str, words: list[re.Match], first: int, last: int) -> bool:
    """Whether the span of words first..last runs on into a capitalised neighbour (space-separated), or into a
    word that is not English ("Suomen Pankin rahamuseo" is a museum, not Suomen Pankki misspelt).

    A neighbour in capitals only ("FROM", "N", "KPMG") is a label, a direction or a name of its own,
    not the rest of this one.
    """
    if first > 0:
        prev = words[first - 1]
        word = text[prev.start():prev.end()]
        if _adjacent(text[prev.end():words[first].start()]) and _capitalised(word) and word not in STARTERS:
            return True
    if last + 1 < len(words):
        nxt = words[last + 1]
        following = text[nxt.start():nxt.end()]
        if _adjacent(text[words[last].end():nxt.start()]) and (_capitalised(following) or foreign_word(following)):
            return True
    return False


def _adjacent(gap: str) -> bool:
    """Two words of one name: only spaces between them (a line break ends a form's field)."""
    return not gap.strip() and "\n" not in gap and "\r" not in gap


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and any(ch.islower() for ch in word)
