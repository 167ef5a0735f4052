"""Where a quote's words are in a step's text: exactly, or, once the text has changed, approximately.

A quote is its text plus a little of what surrounded it (prefix, suffix), the scheme Stash uses
(rm-annotations.txt, "Quoted spans") and Hypothesis, the web annotator, calls a text quote selector. A
create needs the text exactly (`exact_place`). When the step's text changes later, the quote is looked
for again (`anchor`): exactly first; then approximately, and kept there only when the words found are
close enough to the quote's that it is the same passage edited, not another one that happens to look
alike; else it is detached, never moved at a guess.

Approximately means rapidfuzz's normalized Indel similarity, 2·LCS / (len a + len b): insertions and
deletions only, so a replaced word costs its letters twice, and a longer or shorter passage is not
padded to the quote's length. `partial_ratio_alignment` (the best window of the quote's length, found
with bit-parallel LCS) places it; its ends are then moved to the length and the whole words that fit the
quote best.

The threshold, SIMILAR = 0.8, was measured with `bench/quote_anchors.py` (seed 1): 200 quotes of each
length cut from the docs at word boundaries, with the 32 characters either side the console keeps, each
looked for in 2,000 characters of other docs text that lacks it, then edited once and put back into it:

| chars | absent: best window p99 / max | taken by mistake | found again: typo / one word / two words |
|---|---|---|---|
| 8 | 0.91 / 0.93 | 0 of 195 | 190 / 20 / 10 of 195 |
| 16 | 0.81 / 0.88 | 0 of 200 | 195 / 78 / 29 of 200 |
| 24 | 0.67 / 0.68 | 0 of 200 | 200 / 131 / 37 of 200 |
| 48 | 0.60 / 0.82 | 1 of 200 | 199 / 162 / 121 of 200 |
| 128 | 0.51 / 0.88 | 1 of 200 | 200 / 188 / 183 of 200 |

At 0.8 a typo, a changed contraction or date format (0.94-0.98) and one word replaced in a sentence
("I've issued a full refund" to "...a partial refund", 0.83) are found again, while the best window of
text that lacks a quote of 24 characters or more stays under it one time in a hundred. The two taken by
mistake were near-copies of the quote (the same JSON with another user message; a curl line with
another token), which no threshold tells from an edit. A shorter quote is near some window of any long
text by chance (8 characters reach 0.91 one time in a hundred), so it is found approximately only with
its surroundings: its prefix, text and suffix together, at least SHORT characters, must then be as
similar to the text around the place. Between places that pass, the surroundings decide as Hypothesis
weighs them: 50 for the text, 20 each for the prefix and the suffix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

AnchorState = Literal["exact", "fuzzy", "detached"]
EXACT: AnchorState = "exact"
FUZZY: AnchorState = "fuzzy"
DETACHED: AnchorState = "detached"

# The least similarity at which changed words are still the quote's (module doc).
SIMILAR = 0.8
# A quote's text shorter than this is found approximately only together with its prefix and suffix.
SHORT = 24
# A longer quote is looked for exactly only: each window costs LCS work on the square of its length
# (500 characters over a 100,000-character step take up to about 70 ms; 5,000 over 10,000 took 17 s).
MAX_FUZZY_TEXT = 500
# How much of the prefix and suffix (those nearest the text) an approximate search weighs.
MAX_CONTEXT = 64
# How far an end of a found window moves, at most, to fit the quote's length: a quarter of the quote.
MAX_SLACK = 64
# The web annotator Hypothesis's weights for choosing between places (its text-quote anchoring).
TEXT_WEIGHT, PREFIX_WEIGHT, SUFFIX_WEIGHT = 50, 20, 20


@dataclass(frozen=True)
class Anchor:
    """Where a quote is in a text, and how it was found: exact or fuzzy at [start, end), or detached
    (found nowhere; no place)."""

    state: AnchorState
    start: int | None = None
    end: int | None = None


def anchor(content: str, text: str, prefix: str = "", suffix: str = "") -> Anchor:
    """The quote found again in `content`: exactly where it can be, else approximately, else detached."""
    place = exact_place(content, text, prefix, suffix)
    if place is not None:
        return Anchor(EXACT, *place)
    place = fuzzy_place(content, text, prefix, suffix)
    if place is not None:
        return Anchor(FUZZY, *place)
    return Anchor(DETACHED)


# ------------------------------------------------------------------------------------------------- exact


def _matched_before(content: str, start: int, prefix: str) -> int:
    """How many of the prefix's last characters stand right before `start`.

    A binary search of C-level comparisons (a match of m characters implies one of m - 1) that never
    slices the content: slicing it at every occurrence made a short quote on a long step quadratic.
    """
    low, high = 0, min(start, len(prefix))
    while low < high:
        middle = (low + high + 1) // 2
        if content.startswith(prefix[len(prefix) - middle :], start - middle):
            low = middle
        else:
            high = middle - 1
    return low


def _matched_after(content: str, end: int, suffix: str) -> int:
    """How many of the suffix's first characters stand right after `end` (as `_matched_before`)."""
    low, high = 0, min(len(content) - end, len(suffix))
    while low < high:
        middle = (low + high + 1) // 2
        if content.startswith(suffix[:middle], end):
            low = middle
        else:
            high = middle - 1
    return low


def exact_place(content: str, text: str, prefix: str = "", suffix: str = "") -> tuple[int, int] | None:
    """Where the text is in the content: of several occurrences, the one whose surroundings best match
    the prefix and suffix (most characters matching next to it; the first on a tie); None if nowhere."""
    whole = content.find(prefix + text + suffix)
    if whole != -1:
        # The whole anchor matches here and nowhere earlier: no occurrence can score higher.
        start = whole + len(prefix)
        return start, start + len(text)
    best: tuple[int, int] | None = None
    best_score = -1
    start = content.find(text)
    while start != -1:
        end = start + len(text)
        score = _matched_before(content, start, prefix) + _matched_after(content, end, suffix)
        if score > best_score:
            best, best_score = (start, end), score
        start = content.find(text, start + 1)
    return best


# ------------------------------------------------------------------------------------------------- fuzzy


def similarity(a: str, b: str) -> float:
    """Normalized Indel similarity, 0 to 1 (module doc)."""
    return Indel.normalized_similarity(a, b)


def fuzzy_place(content: str, text: str, prefix: str = "", suffix: str = "") -> tuple[int, int] | None:
    """The place most like the quote, if it passes the threshold (module doc); None otherwise.

    Two places are weighed: the window most like the text anywhere in the content, and the one most
    like it where the whole anchor (prefix, text, suffix) fits best, which is where two alike passages
    are told apart.
    """
    if not content or len(text) > MAX_FUZZY_TEXT:
        return None
    prefix, suffix = prefix[-MAX_CONTEXT:], suffix[:MAX_CONTEXT]
    places = {_window(content, text, prefix, suffix, 0, len(content))}
    whole = prefix + text + suffix
    if whole != text:
        near = fuzz.partial_ratio_alignment(whole, content)
        if near is not None:
            low = max(0, near.dest_start - _slack(text))
            high = min(len(content), near.dest_end + _slack(text))
            places.add(_window(content, text, prefix, suffix, low, high))
    scored = [
        (score, -start, (start, end))
        for start, end in places
        if (score := _passing_score(content, start, end, text, prefix, suffix)) is not None
    ]
    return max(scored)[2] if scored else None


def _slack(text: str) -> int:
    return min(MAX_SLACK, max(4, len(text) // 4))


def _window(content: str, text: str, prefix: str, suffix: str, low: int, high: int) -> tuple[int, int]:
    """The window of content[low:high] most like the text: rapidfuzz's best window of the text's length,
    its ends then moved to the length that fits best, and out to whole words."""
    found = fuzz.partial_ratio_alignment(text, content[low:high])
    start, end = (low + found.dest_start, low + found.dest_end) if found is not None else (low, high)
    start, end = _fitted(content, text, start, end)
    return _whole_words(content, text, prefix, suffix, start, end)


def _fitted(content: str, text: str, start: int, end: int) -> tuple[int, int]:
    """The window's end, then its start, moved (by at most the slack) to where the text is most like it;
    twice, since each move changes the other's best. Of equal fits, the wider window."""
    slack = _slack(text)
    best = (similarity(text, content[start:end]), end - start)
    for _ in range(2):
        for candidate in range(max(start + 1, end - slack), min(len(content), end + slack) + 1):
            fit = (similarity(text, content[start:candidate]), candidate - start)
            if fit > best:
                best, end = fit, candidate
        for candidate in range(max(0, start - slack), min(end - 1, start + slack) + 1):
            fit = (similarity(text, content[candidate:end]), end - candidate)
            if fit > best:
                best, start = fit, candidate
    return start, end


def _whole_words(content: str, text: str, prefix: str, suffix: str, start: int, end: int) -> tuple[int, int]:
    """The window without spaces at its ends that the quote does not have there; and where the quote
    began (or ended) on a word's edge, the reviewer selected whole words, so that end of the window moves
    to the word edge near it (within the slack, or out to the edge of the word it cuts) most like the
    text."""
    if not text[0].isspace():
        while start < end - 1 and content[start].isspace():
            start += 1
    if not text[-1].isspace():
        while end > start + 1 and content[end - 1].isspace():
            end -= 1
    slack = _slack(text)
    if text[0].isalnum() and not (prefix and prefix[-1].isalnum()):
        cut = start
        while cut > 0 and content[cut - 1].isalnum():
            cut -= 1
        edges = [
            cut,
            *(
                p
                for p in range(max(0, start - slack), min(end, start + slack + 1))
                if _starts_word(content, p)
            ),
        ]
        start = max(edges, key=lambda edge: (similarity(text, content[edge:end]), end - edge))
    if text[-1].isalnum() and not (suffix and suffix[0].isalnum()):
        cut = end
        while cut < len(content) and content[cut].isalnum():
            cut += 1
        edges = [
            cut,
            *(
                p
                for p in range(max(start + 1, end - slack), min(len(content), end + slack) + 1)
                if _ends_word(content, p)
            ),
        ]
        end = max(edges, key=lambda edge: (similarity(text, content[start:edge]), edge - start))
    return start, end


def _starts_word(content: str, at: int) -> bool:
    return content[at].isalnum() and (at == 0 or not content[at - 1].isalnum())


def _ends_word(content: str, at: int) -> bool:
    return content[at - 1].isalnum() and (at == len(content) or not content[at].isalnum())


def _passing_score(content: str, start: int, end: int, text: str, prefix: str, suffix: str) -> float | None:
    """The place's weighted score (module doc), or None when it is not similar enough to be the quote's."""
    found = content[start:end]
    text_score = similarity(text, found)
    if text_score < SIMILAR:
        return None
    before = content[max(0, start - len(prefix)) : start]
    after = content[end : end + len(suffix)]
    if len(text) < SHORT:
        whole = prefix + text + suffix
        if len(whole) < SHORT or similarity(whole, before + found + after) < SIMILAR:
            return None
    prefix_score = similarity(prefix, before) if prefix else 1.0
    suffix_score = similarity(suffix, after) if suffix else 1.0
    return TEXT_WEIGHT * text_score + PREFIX_WEIGHT * prefix_score + SUFFIX_WEIGHT * suffix_score
