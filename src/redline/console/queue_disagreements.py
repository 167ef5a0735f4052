"""The Disagreements section of a queue's page and its full list: per item and review key whose reviewers
gave different values, each value with who gave it, how far apart they are, the value settled, and the
form that settles it, all from `stats.disagreements` (its words from `stats.disagreement_words`, which the
CLI says alike). Shown to admins of the queue's project only, as the list is theirs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.orm import Session

from redline.identity.service import Actor
from redline.queues.annotation.adjudication import may_adjudicate
from redline.queues.models import Queue
from redline.stats.disagreement_words import apart_text, said_by, value_text
from redline.stats.disagreements import Disagreement, disagreements

Field = Literal["select", "checkboxes", "number", "text"]
# On the queue's own page: the most apart, with a link to the rest.
FIRST_ON_QUEUE_PAGE = 20


@dataclass(frozen=True)
class Choice:
    """One option of a categorical key's field, chosen when it is (in) the value the field starts at."""

    value: str
    chosen: bool


@dataclass(frozen=True)
class DisagreementRow:
    """One disagreement as the table shows it, with the settle form's field: it starts at the settled
    value, else at the value most reviewers gave."""

    found: Disagreement
    apart: str
    said: list[tuple[str, list[str]]]
    settled: str | None
    field: Field
    choices: list[Choice]
    typed: str
    action: str


def _field(found: Disagreement) -> Field:
    review_key = found.review_key
    if review_key.type == "categorical":
        return "checkboxes" if review_key.multiple else "select"
    return "number" if review_key.type == "range" else "text"


def _starting_value(found: Disagreement) -> Any:
    """The settled value, else the value most reviewers gave (the first by value on a tie)."""
    if found.adjudication is not None:
        return found.adjudication.value
    counts = Counter(value_text(one.value) for one in found.values)
    most = min(counts, key=lambda text: (-counts[text], text))
    return next(one.value for one in found.values if value_text(one.value) == most)


def disagreement_row(found: Disagreement) -> DisagreementRow:
    start = _starting_value(found)
    chosen = set(start) if isinstance(start, list) else {start}
    options = [option["value"] for option in found.review_key.options or []]
    settled = found.adjudication
    return DisagreementRow(
        found=found,
        apart=apart_text(found),
        said=said_by(found.values),
        settled=value_text(settled.value) if settled is not None else None,
        field=_field(found),
        choices=[Choice(option, option in chosen) for option in options],
        typed=value_text(start) if not isinstance(start, list) else "",
        action=f"/ui/queues/{found.item.queue_id}/items/{found.item.id}/adjudications/{found.review_key.key}",
    )


@dataclass(frozen=True)
class Section:
    """The queue page's section: its first rows, and whether more lie on the full list."""

    rows: list[DisagreementRow]
    has_more: bool


def queue_page_section(session: Session, actor: Actor, queue: Queue) -> Section | None:
    """The most apart disagreements for an admin of the queue's project; None for anyone else, who is
    not shown the section (it shows every reviewer's values)."""
    if not may_adjudicate(session, actor, queue):
        return None
    page = disagreements(session, actor, queue.id, limit=FIRST_ON_QUEUE_PAGE)
    return Section([disagreement_row(found) for found in page.items], page.has_more)
