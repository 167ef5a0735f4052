"""Finding a quote again once its step's text changed (`annotations.quotes.anchor`): exactly first, then
approximately above the threshold, else detached; moved, changed, changed too much and removed words,
a quote whose text occurs twice, and the rules that hold for any text (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from redline.annotations.quotes import (
    DETACHED,
    EXACT,
    FUZZY,
    MAX_FUZZY_TEXT,
    SHORT,
    SIMILAR,
    Anchor,
    anchor,
    similarity,
)

QUOTE = "I've issued a full refund"
PREFIX, SUFFIX = "Sure! ", " to your card"
BEFORE = "Sure! I've issued a full refund to your card. Anything else?"


def _found(content: str, text: str = QUOTE, prefix: str = PREFIX, suffix: str = SUFFIX) -> tuple[str, str]:
    """The state and the words the quote is found at (empty when detached)."""
    found = anchor(content, text, prefix, suffix)
    words = content[found.start : found.end] if found.start is not None else ""
    return found.state, words


def test_unchanged_words_are_found_where_they_are() -> None:
    assert anchor(BEFORE, QUOTE, PREFIX, SUFFIX) == Anchor(EXACT, 6, 31)


def test_moved_words_are_found_exactly_at_their_new_place() -> None:
    moved = "Thanks for waiting. Your order 1182 was late, so: Sure! I've issued a full refund to your card."
    start = moved.index(QUOTE)
    assert anchor(moved, QUOTE, PREFIX, SUFFIX) == Anchor(EXACT, start, start + len(QUOTE))


def test_moved_words_with_new_surroundings_are_still_exact() -> None:
    moved = "Done: I've issued a full refund, which reaches you in 3 days."
    assert anchor(moved, QUOTE, PREFIX, SUFFIX) == Anchor(EXACT, 6, 31)


def test_slightly_changed_words_are_found_approximately_as_whole_words() -> None:
    assert _found("Sure! I have issued a full refund to your card.") == (FUZZY, "I have issued a full refund")
    assert _found("Sure! Ive issued a full refund to your card.") == (FUZZY, "Ive issued a full refund")
    assert _found("Sure! I've issued a partial refund to your card.") == (
        FUZZY,
        "I've issued a partial refund",
    )


def test_words_changed_past_the_threshold_are_detached() -> None:
    changed = "Sure! I can't refund this order to your card."
    assert similarity(QUOTE, "I can't refund this order") < SIMILAR
    assert anchor(changed, QUOTE, PREFIX, SUFFIX) == Anchor(DETACHED)


def test_removed_words_are_detached() -> None:
    assert anchor("Your order was delivered on May 3. Anything else?", QUOTE, PREFIX, SUFFIX) == Anchor(
        DETACHED
    )
    assert anchor("", QUOTE, PREFIX, SUFFIX) == Anchor(DETACHED)


TWICE = "I've issued a full refund to your card. Again: I've issued a full refund to your wallet."


def test_of_two_identical_phrases_the_prefix_and_suffix_pick_one() -> None:
    second = TWICE.rindex(QUOTE)
    edited = "Hello. " + TWICE
    assert anchor(edited, QUOTE, "Again: ", " to your wallet") == Anchor(
        EXACT, 7 + second, 7 + second + len(QUOTE)
    )
    assert anchor(edited, QUOTE, "", " to your card") == Anchor(EXACT, 7, 7 + len(QUOTE))


def test_of_two_alike_changed_phrases_the_prefix_and_suffix_pick_one() -> None:
    changed = TWICE.replace("full", "complete")
    first, second = changed.index("I've issued"), changed.rindex("I've issued")
    phrase = "I've issued a complete refund"
    assert anchor(changed, QUOTE, "Again: ", " to your wallet") == Anchor(FUZZY, second, second + len(phrase))
    assert anchor(changed, QUOTE, "", " to your card") == Anchor(FUZZY, first, first + len(phrase))


def test_a_short_quote_is_found_approximately_only_with_its_surroundings() -> None:
    content = "Your parcel has been refundd to our warehouse today."
    assert len("refunded") < SHORT
    assert _found(content, "refunded", "parcel has been ", " to our") == (FUZZY, "refundd")
    # The same near-miss is not taken without surroundings that vouch for it: none, or others.
    assert anchor(content, "refunded") == Anchor(DETACHED)
    assert anchor(content, "refunded", "Your invoice was ", " by the bank") == Anchor(DETACHED)


def test_a_long_quote_is_found_exactly_only() -> None:
    long_quote = "word " * (MAX_FUZZY_TEXT // 5 + 1)
    assert anchor("prefix " + long_quote, long_quote) == Anchor(EXACT, 7, 7 + len(long_quote))
    assert anchor(long_quote.replace("word", "ward", 1), long_quote) == Anchor(DETACHED)


# ---------------------------------------------------------------------------------------- any text

WORDS = st.text(alphabet="abcdefgh ", min_size=0, max_size=120)


@given(
    before=WORDS,
    text=st.text(alphabet="abcdefgh .", min_size=1, max_size=40),
    after=WORDS,
    context=st.integers(0, 32),
)
def test_a_quote_present_exactly_anywhere_is_always_found_exactly(
    before: str, text: str, after: str, context: int
) -> None:
    content = before + text + after
    start = len(before)
    prefix, suffix = before[len(before) - context :] if context else "", after[:context]
    found = anchor(content, text, prefix, suffix)
    assert found.state == EXACT
    assert found.start is not None
    assert content[found.start : found.end] == text
    if content.count(prefix + text + suffix) == 1:
        assert (found.start, found.end) == (start, start + len(text))


@given(
    content=st.text(alphabet="abcd ", max_size=200), text=st.text(alphabet="abcd ", min_size=1, max_size=60)
)
def test_an_approximate_place_is_never_less_similar_than_the_threshold(content: str, text: str) -> None:
    found = anchor(content, text)
    if found.state == DETACHED:
        assert (found.start, found.end) == (None, None)
        return
    assert found.start is not None
    assert found.end is not None
    assert 0 <= found.start < found.end <= len(content)
    if found.state == FUZZY:
        assert text not in content
        assert similarity(text, content[found.start : found.end]) >= SIMILAR
        assert len(text) >= SHORT


@given(
    before=WORDS,
    after=WORDS,
    typo=st.integers(0, len(QUOTE) - 1),
)
def test_one_letter_dropped_from_a_sentence_is_found_approximately_in_any_surroundings(
    before: str, after: str, typo: int
) -> None:
    edited = QUOTE[:typo] + QUOTE[typo + 1 :]
    content = before + " " + edited + " " + after
    found = anchor(content, QUOTE)
    assert found.state == (EXACT if QUOTE in content else FUZZY)
    assert found.start is not None
    assert found.end is not None
    assert similarity(QUOTE, content[found.start : found.end]) >= SIMILAR
    # The place is the edited sentence: it overlaps where it was put.
    start = len(before) + 1
    assert found.start < start + len(edited)
    assert start < found.end
