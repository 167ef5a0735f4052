"""What a queue's agreement says in words, built once so the API, the console and the CLI say the same;
the corrections' agreement between corrector groups (`group_agreement.py`) says it in the same sentences,
in its own nouns (`Nouns`: runs, verdicts and groups for items, values and reviewers).

Never a bare number: a key with too few items says so and how many it has (as trends do), a figure says
what it rests on, and a range that reaches 0, where the reviewers may agree no more than chance would,
says that too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

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


@dataclass(frozen=True)
class Nouns:
    """What the sentences call the things agreement is measured over: a queue's items, the values on them
    and the reviewers who gave them, unless said otherwise. Each noun's plural adds an s."""

    item: str = "item"
    twice: str = "reviewed twice"
    value: str = "value"
    who: str = "reviewers"
    everyone: str = "everyone"


QUEUE_NOUNS = Nouns()


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


def key_sentences(
    title: str, items: int, values: int, alpha: Alpha, agreed: int, nouns: Nouns = QUEUE_NOUNS
) -> list[str]:
    """What one key's α says: too few items, no spread of values, or the figure with its range, what it
    rests on and the share of items everyone agreed on; then whether the range reaches chance."""
    if items < MIN_ITEMS:
        return [f"{title}: too few {nouns.item}s {nouns.twice} to say ({items} so far)"]
    rests_on = f"{counted(items, nouns.item)} and {counted(values, nouns.value)}"
    if alpha.alpha is None:
        return [
            f"{title}: every one of the {values:,} {nouns.value}s on its {counted(items, nouns.item)} was "
            "the same, so agreement can't be told apart from chance"
        ]
    share = f"{nouns.everyone} agreed on {percent(agreed / items)} of the {nouns.item}s"
    bounds = alpha.bounds
    if bounds is None:
        return [
            f"{title}: Krippendorff's α {figure(alpha.alpha)} from {rests_on}; {share}; no range: too "
            f"few resamples of the {nouns.item}s had {nouns.value}s that differ"
        ]
    said = [
        f"{title}: Krippendorff's α {figure(alpha.alpha)} (95% range {range_text(*bounds)}) "
        f"from {rests_on}; {share}"
    ]
    if bounds[0] <= 0 <= bounds[1]:
        said.append(f"{title}: the range includes 0, so the {nouns.who} may agree no more than chance would")
    return said


def kappa_name(level: Level) -> str:
    return "Cohen's κ" if level == "nominal" else "weighted κ"


def pair_sentence(
    level: Level, first: str, second: str, shared: int, kappa: float | None, nouns: Nouns = QUEUE_NOUNS
) -> str:
    """One pair of reviewers with enough shared items."""
    if kappa is None:
        return (
            f"{first} and {second}: each gave one {nouns.value} throughout their {shared:,} shared "
            f"{nouns.item}s, so agreement can't be told apart from chance"
        )
    return f"{first} and {second}: {kappa_name(level)} {figure(kappa)} over {shared:,} shared {nouns.item}s"


def few_pairs_sentence(pairs: int, nouns: Nouns = QUEUE_NOUNS) -> str | None:
    """The pairs left out of the list, counted."""
    if not pairs:
        return None
    share = f"1 pair of {nouns.who} shares" if pairs == 1 else f"{pairs:,} pairs of {nouns.who} share"
    return f"{share} fewer than {MIN_SHARED_ITEMS} {nouns.item}s: too few to say."


# ---------------------------------------------------------------- how a large queue's figures came to be

# Why a stored figure may no longer hold (`agreement_served.stale_reason`).
KEYS_CHANGED = "the queue's review keys changed since"
ITEMS_CHANGED = "items were added to the queue or taken out since"
VALUES_SAVED = "values were saved on its items since"
MANY_SAVED = "more values were saved since than are looked through one by one"
TOO_OLD = (
    "it is over an hour old, and a value changed or taken back since can't be seen without counting again"
)


def as_of(at: datetime) -> str:
    """When a figure was computed, to the second, in UTC as every time Redline shows."""
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def computing_sentence(items: int) -> str:
    """A large queue's first answer, before the job worker has computed any figure."""
    return (
        f"Agreement is being computed: this queue's {counted(items, 'item')} are too many to count within "
        "a request, so the job worker counts them; ask again in a moment."
    )


def stored_sentence(at: datetime, items: int, stale_reason: str | None) -> str:
    """A stored figure's as-of time, and whether it is being computed again and why."""
    if stale_reason is not None:
        return f"Agreement as of {as_of(at)}: {stale_reason}, so it is being computed again."
    return (
        f"Agreement as of {as_of(at)}, computed by the job worker (this queue's {counted(items, 'item')} are "
        "too many to count within a request); no change seen since."
    )
