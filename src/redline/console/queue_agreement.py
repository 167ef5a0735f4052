"""The Agreement section of a queue's page: per review key, Krippendorff's α with its range, what it rests
on and the share of items everyone agreed on, as a table, then the key's sentences (κ for each pair of
reviewers among them), all from `stats.agreement`, which the API and the CLI say alike."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from redline.identity.service import Actor
from redline.stats import agreement_words as words
from redline.stats.agreement import KeyAgreement, queue_agreement


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


def _row(found: KeyAgreement) -> KeyRow:
    figures = found.alpha
    bounds = figures.bounds if figures is not None else None
    measured = found.level is not None
    return KeyRow(
        key=found.review_key.key,
        title=found.review_key.title,
        metric=found.level or "none (text)",
        alpha=words.figure(figures.alpha) if figures is not None and figures.alpha is not None else "—",
        range=words.range_text(*bounds) if bounds else "—",
        items=f"{found.items:,}" if measured else "—",
        values=f"{found.values:,}" if measured else "—",
        agreed=words.percent(found.share_agreed) if found.share_agreed is not None else "—",
        sentences=found.sentences,
    )


def agreement_rows(session: Session, actor: Actor, queue_id: uuid.UUID) -> list[KeyRow]:
    """A row for each review key the queue is reviewed with, in the queue's order."""
    return [_row(found) for found in queue_agreement(session, actor, queue_id).keys]
