"""Quote resolution (rm-annotations.txt, "Quoted spans"): the occurrence whose surroundings best match
the prefix and suffix, the first on a tie; checked against the rule written out plainly."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.annotations.schemas import QuoteIn
from redline.annotations.service import QUOTE_NOT_IN_STEP, resolve_quote
from redline.errors import Invalid

# A small alphabet, so texts recur and contexts half-match: the cases where the choice is hard.
TEXT = st.text(alphabet="ab ", max_size=40)


def _plainly(content: str, quote: QuoteIn) -> tuple[int, int] | None:
    """The rule as stated: score every occurrence by matching characters either side, keep the first best."""

    def before(start: int) -> int:
        count = 0
        while (
            count < min(start, len(quote.prefix)) and content[start - 1 - count] == quote.prefix[-1 - count]
        ):
            count += 1
        return count

    def after(end: int) -> int:
        count = 0
        while (
            count < min(len(content) - end, len(quote.suffix)) and content[end + count] == quote.suffix[count]
        ):
            count += 1
        return count

    starts = [i for i in range(len(content) - len(quote.text) + 1) if content.startswith(quote.text, i)]
    if not starts:
        return None
    scores = [before(start) + after(start + len(quote.text)) for start in starts]
    best = starts[scores.index(max(scores))]
    return best, best + len(quote.text)


@given(content=TEXT, text=TEXT.filter(bool), prefix=TEXT, suffix=TEXT)
def test_resolution_follows_the_rule(content: str, text: str, prefix: str, suffix: str) -> None:
    quote = QuoteIn(text=text, prefix=prefix, suffix=suffix)
    expected = _plainly(content, quote)
    if expected is None:
        with pytest.raises(Invalid, match=QUOTE_NOT_IN_STEP):
            resolve_quote(content, quote)
    else:
        assert resolve_quote(content, quote) == expected


def test_the_context_picks_the_second_of_two_identical_phrases() -> None:
    content = "Sure! I've issued a full refund to your card. Again: I've issued a full refund to your wallet."
    text = "I've issued a full refund"
    second = content.rindex(text)
    assert resolve_quote(content, QuoteIn(text=text, suffix=" to your wallet")) == (
        second,
        second + len(text),
    )
    assert resolve_quote(content, QuoteIn(text=text, prefix="Sure! ")) == (6, 6 + len(text))


def test_a_short_quote_on_a_long_repetitive_step_is_not_quadratic() -> None:
    """Slicing the content at every occurrence took over a minute on a megabyte of one character."""
    started = time.perf_counter()
    assert resolve_quote("a" * 1_000_000, QuoteIn(text="a", prefix="a" * 10)) == (10, 11)
    assert resolve_quote("a" * 200_000, QuoteIn(text="aa", prefix="b")) == (0, 2)
    assert time.perf_counter() - started < 5
