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

from onboard.vocab.compass_words import ABBREVIATIONS_16, POINTS_16
from onboard.vocab.spoken_numbers import UNIT_WORDS

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
_UNIT = re.compile(rf"(?i)(?:nautical|{UNIT_WORDS}|degrees?|deg|°)$")  # one word of a unit, as the reader reads it
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
    if not word or word[0] in "\x00\x02" or not any(ch.isalnum() for ch in word):
        return False  # a dash, a quote, a landmark: the name has ended
    if word[0].isdigit() and not word.isdigit():
        return False  # "500m", "1.2km", "0,4"
    if word.isdigit():  # "Westerback 1897" goes on; "X 400 m north", "X 1,2 km" do not
        unit = re.match(r"[ \t]*([^\s.,;:]+)", after[m.end():])
        return m.group("word") == word and not (unit and _structure(unit.group(1)))
    if _structure(word) or word.lower() in OPENERS:
        return False
    return _capitalised(word) or not is_english(word)


# Words a description puts before the goal's name ("Find X", "Target: X", "the place I want is X").
_CUE = re.compile(
    r"(?i)(?:\b(?:goal|target|tgt|destination|dest|objective|site|inspect|deliver\s+to|find|reach|look\s+for|"
    r"search\s+for|locate|check(?:\s+on)?|called|named|place\s+i\s+want\s+is|goal\s+is|you(?:'|’)re\s+at|"
    r"you\s+are\s+at|that(?:'|’)s\s+where)\b[ \t]*[:=]?[ \t]*)"
    r"(?P<name>[^\s\x00\x02\d][^\n;\x00\x02]*?)"
    r"(?=[ \t]*(?:[.;,!?](?:\s|$)|[;\n|]|[ \t][—–-][ \t]|[—–]|[ \t]\(an?[ \t]|[ \t](?:is|lies|sits|stands|should|will|"
    r"would|can|it|which|that|from|at|near|about|around|roughly|approximately|some|in|on\s+your|will|first|"
    r"there)\b|\x00|$))")
# The goal as the subject: "X is 300 m north of ...", "X: 300 m ...", "X — 300 m ...".
_SUBJECT = re.compile(
    r"(?i)^[ \t]*(?P<name>[^\s\x00\x02\d][^\n;:\x00\x02]*?)(?=[ \t]+(?:is|lies|sits|stands|can\s+be|should\s+be|"
    r"will\s+be)\b|[ \t]*[:—–,]|[ \t]+-[ \t])")
# Words that say what kind of place the goal is rather than name it ("the restaurant Pastor", "X (a museum)").
KIND_WORDS = frozenset("""restaurant cafe café coffee bar pub shop store kiosk hotel hostel museum gallery pharmacy
bakery boutique salon hairdresser barber bank atm office clinic dentist optician bookshop bookstore florist
supermarket grocery market cinema theatre theater club nightclub school library church artwork sculpture statue
fountain memorial monument embassy station stop parking car park garage gym spa sauna venue place spot
building clothes shoes jewellery jeweller toy gift cosmetics beauty tattoo laundry dry cleaner travel agency
bicycle bike rental ice cream pizzeria sushi kebab burger diner bistro brasserie tavern wine fast food""".split())


def goal_name_in(text: str) -> str | None:
    """The name a description asks for; the landmarks in `text` are masked (NUL).

    First where the words point at it ("Find X", "Target: X", "the place I want is X"), then the
    subject of a sentence that says where it is ("X is 300 m north of ..."), then the longest run of
    name-like words, failing which (a description typed all in lower case, of a place named in
    ordinary words) the longest run of words that are not the description's own (directions,
    numbers, verbs of going and finding). None when the text has no such word.
    """
    for line in re.split(r"[\n]|(?<=[.!?])\s+(?=[A-Z])", text):
        for m in _CUE.finditer(line):
            name = _tidy(m.group("name"), cued=True)
            if name:  # what follows "find", "your goal is": a name, even in ordinary words ("Yes!", "yes yes yes")
                return _longest_run(name, _name_like, opening=True) or name
    for sentence in re.split(r"[\n;]|(?<=[.!?])\s+", text):
        m = _SUBJECT.match(sentence)
        if m and (name := _tidy(m.group("name"))) and (run := _longest_run(name, _name_like)):
            return run
    best = _longest_run(text, _name_like)
    return best if best is not None else _longest_run(text, lambda w, first: not _function(w))


def _tidy(name: str, cued: bool = False) -> str | None:
    """A candidate name without what only frames it: "the restaurant", "(a museum)", quotes; None if nothing
    of a name is left (only directions, numbers and ordinary words of a description)."""
    name = re.sub(r"[ \t]*\((?:an?|the)[ \t][^)]*\)[ \t]*$", "", name.strip())
    name = name.strip(" \t\"'“”‘’`.,")
    words = name.split()
    if words and words[0].lower() in ("the", "a", "an") and len(words) > 1 and (
            words[1].lower() in KIND_WORDS or words[0].islower()):
        words = words[1:]
    while len(words) > 1 and words[0].lower() in KIND_WORDS and (words[0].islower() or words[1][:1].isupper()) \
            and not words[1][:1].isupper() or len(words) > 1 and words[0].islower() and words[0] in KIND_WORDS:
        words = words[1:]
    name = " ".join(words)
    if not name or not any(ch.isalpha() for ch in name):
        return None
    words = re.findall(r"[\w'’&+.-]+", name)
    if all(_structure(w) for w in words) or not cued and all(_structure(w) or w.lower() in _FUNCTION for w in words):
        return None
    return name


def _only_openers(name: str) -> bool:
    return all(w.lower() in OPENERS or _structure(w) for w in name.split())


def _longest_run(text: str, keep, opening: bool = False) -> str | None:
    """The longest run of words `keep` takes; `opening`: the text starts with the name (after a cue), so
    its first capitalised word is the name's even when it is English ("The Cock", "Mount Everest")."""
    runs: list[list[str]] = []
    for n, piece in enumerate(_BREAK.split(text)):
        tokens = [t.group() for t in _TOKEN.finditer(piece)]
        current: list[str] = []
        for i, w in enumerate(tokens):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if opening and n == 0 and i == 0 and _capitalised(w) and not _structure(w):
                current.append(w)
            elif w in "&/" and current:
                current.append(w)
            elif current and w.islower() and w in _JOINERS and nxt and _capitalised(nxt) and not _structure(nxt):
                current.append(w)  # "Liberty Or Death", "Kehruu ja Metsästys", "Shop Without a Name"
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


_JOINERS = frozenset("of and or ja och et de del la le by a an the on in at y und".split())
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
