"""Where a place's name ends in a description, and which name the description asks for.

A name ends where the words stop being a name, not where a listed word begins.
"…, and Mumin Kaffe should be right there" ends the name before "should"
because "should" is an ordinary English word, whatever the list of verbs a
reader was designed on. Ordinary English is measured, not listed: `wordfreq`'s
English frequencies (Zipf scale), where a word at or above
`ENGLISH_ZIPF` is one people use in sentences. A capitalised word, a word that
is not English ("Eteläesplanadi kaupunkipyöräasema"), an "&" or a "/" between
two parts, a number that is no distance ("Westerback 1897") goes on with the
name; so "Alepa" is not the goal of "Alepa Rautatientori", which is another
shop of the same chain.

The same test picks the goal's name out of the description for the vehicle to
say back before it flies: the longest run of name-like words outside the
landmarks the text names.
"""

from __future__ import annotations

import functools
import re

from onboard.agent.compass_words import ABBREVIATIONS_16, POINTS_16

ENGLISH_ZIPF = 3.0
# Words that open a sentence or a clause, or label a field, rather than start a name.
OPENERS = frozenset("""
from find look go starting halfway the reach near at in to head then there you it a an of by fly start past
target goal reference ref landmark offset your please can could would check search locate deliver inspect
proceed navigate take land walk drive turn continue correction sorry destination objective task mission
bearing heading range distance our my we i is where what meet visit survey note see spot approximately about roughly
datum there's here's it's that's edit
some approx abt ca c est and but or so now next after once when if this that these those its his her their
drop pick bring send fly-to route via toward towards ok okay hey hi hello yes no wait actually also job
order ticket request pickup dropoff delivery inspection asset site location position area sector brief
briefing subject missing person casualty last seen lkp rv lz poi waypoint wp tgt dest how which who why
""".split())
_UNIT = re.compile(r"(?i)(?:nautical|nmi|nm|kilomet\w*|km|klicks?|clicks?|met(?:re|er)s?|mtrs?|mts|feet|foot|"
                   r"ft|yards?|yds?|miles?|mi|m|degrees?|deg|°)$")
_DIRECTION_WORDS = frozenset(p.replace("-", "") for p in POINTS_16) | frozenset(POINTS_16) | frozenset(
    a.lower() for a in ABBREVIATIONS_16) | {"northeast", "northwest", "southeast", "southwest"}
_TOKEN = re.compile(r"[^\W_](?:[\w'’.!-]*[^\W_]|!)?|[&/]|\d+")
_NUMBER_WORDS = frozenset("""zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
hundred thousand half quarter""".split())
_BREAK = re.compile(r"[.;:,!?()\[\]{}\"“”\n\x00\x02\x03]|\s[—–-]\s|—|–")


@functools.lru_cache(maxsize=65536)
def is_english(word: str) -> bool:
    """Whether `word` (any case) is an ordinary English word."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en") >= ENGLISH_ZIPF


def _structure(word: str) -> bool:
    """Numbers, units and directions: the description's own words, never a name's."""
    w = word.lower().strip(".")
    return (w.replace(".", "").isdigit() or bool(_UNIT.match(w)) or w in _DIRECTION_WORDS
            or w in _NUMBER_WORDS or w.replace(".", "") in {"n", "s", "e", "w", "ne", "nw", "se", "sw"})


def foreign_word(word: str) -> bool:
    """A word in lower case that is no ordinary English and none of a description's own: the rest of a name
    ("rahamuseo" of "Suomen Pankin rahamuseo", "kaupunkipyöräasema")."""
    return word[:1].islower() and not _structure(word) and word not in OPENERS and not is_english(word)


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def name_goes_on(after: str) -> bool:
    """Whether the text right after a name (`after`, up to the end of its line) continues that name."""
    m = re.match(r"[ \t]*(?P<glue>[&/+][ \t]*)?(?P<word>\(?[^\s]+)", after)
    if m is None:
        return False
    if m.group("glue"):
        return True
    word = m.group("word")
    if word.startswith("("):  # "Zio (Shoe store)" is a name; "Zio (a shoe store)" says what kind of place
        inner = word[1:].rstrip(".,;:)")
        return inner[:1].isupper() and inner.lower() not in OPENERS and not _structure(inner)
    word = word.rstrip(".,;:!?)\"'’”")
    if not word or word[0] in "\x00\x02":
        return False
    if word[0].isdigit() and not word.isdigit():
        return False  # "500m", "1.2km", "0,4"
    if word.isdigit():  # "Westerback 1897" goes on; "X 400 m north", "X 1,2 km" do not
        unit = re.match(r"[ \t]*([^\s.,;:]+)", after[m.end():])
        return m.group("word") == word and not (unit and _structure(unit.group(1)))
    if _structure(word) or word.lower() in OPENERS:
        return False
    return _capitalised(word) or not is_english(word)


def goal_name_in(text: str) -> str | None:
    """The name a description asks for: the longest run of name-like words, the landmarks masked (NUL).

    Failing any name-like word (a description typed all in lower case, of a place named in ordinary
    words), the longest run of words that are not the description's own (directions, numbers, verbs of
    going and finding). None when the text has no such word.
    """
    best = _longest_run(text, _name_like)
    return best if best is not None else _longest_run(text, lambda w, first: not _function(w))


def _longest_run(text: str, keep) -> str | None:
    runs: list[list[str]] = []
    for piece in _BREAK.split(text):
        tokens = [t.group() for t in _TOKEN.finditer(piece)]
        current: list[str] = []
        for i, w in enumerate(tokens):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if w in "&/" and current:
                current.append(w)
            elif keep(w, i == 0) or (i == 0 and _capitalised(w) and w.lower() not in OPENERS and not _structure(w)
                                      and nxt and (nxt in "&/" or keep(nxt, False))):
                current.append(w)  # "Day & Nite", "Good Life Coffee": an English word opening a name
            else:
                if current:
                    runs.append(current)
                current = []
        if current:
            runs.append(current)
    runs = [r[:-1] if r[-1] in "&/" else r for r in runs]
    runs = [r for r in runs if r]
    if not runs:
        return None
    return " ".join(max(runs, key=lambda r: (len(r), sum(len(w) for w in r))))


_FUNCTION = OPENERS | frozenset("""lies lie sits stands located found be will should would are was were on for with
right just here there it's you'll see reach look can't won't don't is isn't has have had been being get got
""".split())


def _function(word: str) -> bool:
    return _structure(word) or word.lower() in _FUNCTION or word[0].isdigit()


def _name_like(word: str, clause_start: bool) -> bool:
    if _structure(word) or word.lower() in OPENERS or word[0].isdigit():
        return False
    if _capitalised(word):
        return not (clause_start and is_english(word))
    return not is_english(word)
