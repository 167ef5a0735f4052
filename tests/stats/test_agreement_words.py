"""What a queue's agreement says: never a bare number. Too few items say so, a figure says what it rests
on, a range that reaches chance says that too, and text keys and pairs say theirs."""

from __future__ import annotations

import random

from redline.stats.agreement_figures import Alpha
from redline.stats.agreement_maths import alpha, patterns
from redline.stats.agreement_words import (
    MIN_ITEMS,
    few_pairs_sentence,
    key_sentences,
    pair_sentence,
    text_key,
)


def test_too_few_items_say_how_many_so_far() -> None:
    assert key_sentences("Rating", 3, 7, Alpha(None, None, None), 2) == [
        "Rating: too few items reviewed twice to say (3 so far)"
    ]
    assert key_sentences("Rating", MIN_ITEMS - 1, 30, Alpha(0.9, 0.5, 1.0), 5)[0].endswith(
        f"too few items reviewed twice to say ({MIN_ITEMS - 1} so far)"
    )


def test_a_figure_says_its_range_what_it_rests_on_and_the_share_agreed() -> None:
    assert key_sentences("Rating", 120, 365, Alpha(0.7412, 0.52, 0.891), 82) == [
        "Rating: Krippendorff's α 0.74 (95% range 0.52 to 0.89) from 120 items and 365 values; "
        "everyone agreed on 68% of the items"
    ]


def test_labels_given_at_random_say_the_range_reaches_chance() -> None:
    rng = random.Random(1)
    units = [[rng.choice(["good", "bad"]) for _ in range(3)] for _ in range(600)]
    figures = alpha("nominal", patterns("nominal", [(unit, 1) for unit in units]))
    said = key_sentences("Rating", 600, 1800, figures, 150)
    assert said[0].startswith("Rating: Krippendorff's α ")
    assert said[1] == "Rating: the range includes 0, so the reviewers may agree no more than chance would"
    negative = key_sentences("Rating", 40, 80, Alpha(-0.12, -0.3, 0.05), 10)
    assert "α −0.12 (95% range −0.30 to 0.05)" in negative[0]
    assert negative[1].endswith("may agree no more than chance would")


def test_one_value_throughout_cant_be_told_from_chance() -> None:
    assert key_sentences("Rating", 12, 24, Alpha(None, None, None), 12) == [
        "Rating: every one of the 24 values on its 12 items was the same, so agreement can't be told "
        "apart from chance"
    ]


def test_text_keys_and_pairs() -> None:
    assert text_key("Note").startswith("Note: free text has no agreement measure: ")
    assert (
        pair_sentence("nominal", "Ann", "Bo", 14, 0.6123) == "Ann and Bo: Cohen's κ 0.61 over 14 shared items"
    )
    assert (
        pair_sentence("interval", "Ann", "Bo", 14, -0.2)
        == "Ann and Bo: weighted κ −0.20 over 14 shared items"
    )
    assert pair_sentence("nominal", "Ann", "Bo", 12, None) == (
        "Ann and Bo: each gave one value throughout their 12 shared items, so agreement can't be told "
        "apart from chance"
    )
    assert few_pairs_sentence(0) is None
    assert few_pairs_sentence(1) == "1 pair of reviewers shares fewer than 10 items: too few to say."
    assert few_pairs_sentence(3) == "3 pairs of reviewers share fewer than 10 items: too few to say."
