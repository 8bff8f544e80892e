"""Text folded for matching names as people type them: lower case, no diacritics, same length.

Operators type "paaesikunta" for Pääesikunta and "cafe" for Café. Folding one
character into exactly one keeps every position in the folded text valid in
the original, so a match found in the folded text can be masked, cut or
reported in the text the user wrote.
"""

from __future__ import annotations

import unicodedata


def fold_char(c: str) -> str:
    """One character: its base letter without accents, lower case ("Ä" -> "a", "ß" -> "ß")."""
    base = unicodedata.normalize("NFKD", c)
    kept = [b for b in base if not unicodedata.combining(b)]
    out = (kept[0] if kept else c).lower()
    return out if len(out) == 1 else c.lower()[:1] or c


def fold(text: str) -> str:
    """`text` lower-cased and stripped of diacritics, character for character (same length)."""
    return "".join(fold_char(c) for c in text)


def ascii_text(text: str) -> str:
    """`text` in ASCII, for OpenCV's fonts, which draw nothing else: "Metsätalo" -> "Metsatalo"."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (insert, delete, substitute, swap two neighbours), capped at limit + 1.

    A swap counts once because that is the commonest typing slip ("Kiamsa").
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)
