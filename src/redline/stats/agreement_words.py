"""What a queue's agreement says in words, built once so the API, the console and the CLI say the same.

Never a bare number: a key with too few items says so and how many it has (as trends do), a figure says
what it rests on, and a range that reaches 0, where the reviewers may agree no more than chance would,
says that too.
"""

from __future__ import annotations

from redline.sentences import counted
from redline.stats.agreement_figures import Alpha, Level

# Fewer items with two values or more than this make α's range too wide to say anything.
MIN_ITEMS = 10
# Fewer items reviewed by both people than this, and a pair's κ says nothing.
MIN_SHARED_ITEMS = 10

NO_TEXT_MEASURE = (
    "{title}: free text has no agreement measure: two texts can say the same thing in other words, "
    "and there is no distance between texts to weigh their differences by."
)


def figure(value: float) -> str:
    """α and κ as people read them: two decimals, a true minus sign."""
    return f"{value:.2f}".replace("-", "−")


def range_text(low: float, high: float) -> str:
    """ "0.41 to 1.00": "to", since a dash between two numbers that may be negative reads as a minus."""
    return f"{figure(low)} to {figure(high)}"


def percent(share: float) -> str:
    return f"{round(share * 100)}%"


def text_key(title: str) -> str:
    return NO_TEXT_MEASURE.format(title=title)


def key_sentences(title: str, items: int, values: int, alpha: Alpha, agreed: int) -> list[str]:
    """What one key's α says: too few items, no spread of values, or the figure with its range, what it
    rests on and the share of items everyone agreed on; then whether the range reaches chance."""
    if items < MIN_ITEMS:
        return [f"{title}: too few items reviewed twice to say ({items} so far)"]
    rests_on = f"{counted(items, 'item')} and {counted(values, 'value')}"
    if alpha.alpha is None:
        return [
            f"{title}: every one of the {values:,} values on its {counted(items, 'item')} was the same, "
            "so agreement can't be told apart from chance"
        ]
    share = f"everyone agreed on {percent(agreed / items)} of the items"
    bounds = alpha.bounds
    if bounds is None:
        return [
            f"{title}: Krippendorff's α {figure(alpha.alpha)} from {rests_on}; {share}; no range: too "
            "few resamples of the items had values that differ"
        ]
    said = [
        f"{title}: Krippendorff's α {figure(alpha.alpha)} (95% range {range_text(*bounds)}) "
        f"from {rests_on}; {share}"
    ]
    if bounds[0] <= 0 <= bounds[1]:
        said.append(f"{title}: the range includes 0, so the reviewers may agree no more than chance would")
    return said


def kappa_name(level: Level) -> str:
    return "Cohen's κ" if level == "nominal" else "weighted κ"


def pair_sentence(level: Level, first: str, second: str, shared: int, kappa: float | None) -> str:
    """One pair of reviewers with enough shared items."""
    if kappa is None:
        return (
            f"{first} and {second}: each gave one value throughout their {shared:,} shared items, so "
            "agreement can't be told apart from chance"
        )
    return f"{first} and {second}: {kappa_name(level)} {figure(kappa)} over {shared:,} shared items"


def few_pairs_sentence(pairs: int) -> str | None:
    """The pairs left out of the list, counted."""
    if not pairs:
        return None
    share = "1 pair of reviewers shares" if pairs == 1 else f"{pairs:,} pairs of reviewers share"
    return f"{share} fewer than {MIN_SHARED_ITEMS} items: too few to say."
