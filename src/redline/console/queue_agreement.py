"""The Agreement section of a queue's page: per review key, Krippendorff's α with its range, what it rests
on and the share of items everyone agreed on, as a table, then the key's sentences (κ for each pair of
reviewers among them); for a large queue, the as-of time of the figures the job worker computed, or that
they are being computed. All from the answer `GET …/agreement` gives (`stats.agreement_served`), so the
page, the API and the CLI say the same."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redline.stats import agreement_words as words


@dataclass(frozen=True)
class KeyRow:
    """One review key as the table shows it: its figures as text, "—" where there is none."""

    key: str
    title: str
    metric: str
    alpha: str
    range: str
    items: str
    values: str
    agreed: str
    sentences: list[str]


@dataclass(frozen=True)
class AgreementSection:
    """The rows, and how the figures came to be (`state`, `computed_at`, `stale` and their sentence)."""

    rows: list[KeyRow]
    state: str
    computed_at: str | None
    stale: bool
    sentence: str | None

    @property
    def shown(self) -> bool:
        """A queue reviewed with no key has nothing to show, unless its figures are being computed."""
        return bool(self.rows or self.sentence)


def _row(key: dict[str, Any]) -> KeyRow:
    measured = key["metric"] is not None
    bounds = key["range"]
    return KeyRow(
        key=key["key"],
        title=key["display_name"],
        metric=key["metric"] or "none (text)",
        alpha=words.figure(key["alpha"]) if key["alpha"] is not None else "—",
        range=words.range_text(bounds["low"], bounds["high"]) if bounds else "—",
        items=f"{key['items']:,}" if measured else "—",
        values=f"{key['values']:,}" if measured else "—",
        agreed=words.percent(key["share_agreed"]) if key["share_agreed"] is not None else "—",
        sentences=key["sentences"],
    )


def agreement_section(answer: dict[str, Any]) -> AgreementSection:
    """The section of a served answer (`agreement_served.served_agreement`)."""
    return AgreementSection(
        [_row(key) for key in answer["keys"]],
        answer["state"],
        answer["computed_at"],
        answer["stale"],
        answer["state_sentence"],
    )
