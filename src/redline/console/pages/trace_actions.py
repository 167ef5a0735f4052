"""The traces list's action bar: add the selected rows, or every trace matching the list's filter, to an
annotation queue or a dataset in one post, and say what was added and what was there already.

The bar offers the queues and datasets the person may write to (a queue only when it is of the list's
project, when the list shows one: a queue holds its project's traces). "All matching the filter" is read
from the same address the list was shown with (`trace_filters`), and walked a page of ids at a time
(`listing.matching_ids`) into the service, so no selection, however large, is held as rows. The post
ends back on the same view (post/redirect/get) with the counts in the address; the list words them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Annotated
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Form
from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response

from redline.console import traces_listing as listing
from redline.console.added_words import Kind, added_sentence, missed_sentence
from redline.console.deps import Changer, Db
from redline.console.formview import view_query
from redline.console.notices import see_other
from redline.console.trace_filters import filters_from
from redline.datasets import service as datasets
from redline.db.id_pages import MAX_LIMIT
from redline.identity.service import Actor, holds, visible_projects
from redline.queues.annotation import service as queues
from redline.traces.selection import Added
from redline.web.addresses import path_id

router = APIRouter()

LIST = "/ui/traces"
# What the list's address carries after a post: which change, its counts and the name it mentions.
SAID = ("added", "already", "missed", "name", "refused")
KINDS: dict[str, Kind] = {"queue": "queue", "dataset": "dataset"}
REFUSALS = {
    "nothing-selected": "Nothing was added: select some traces first, or choose all matching the filter.",
    "no-target": "Nothing was added: choose a queue or a dataset to add the traces to.",
}


@dataclass(frozen=True)
class Target:
    """A queue or a dataset the bar offers: the form's value (`queue:<id>`), its name and project."""

    value: str
    name: str
    project: str


@dataclass(frozen=True)
class ActionBar:
    queues: list[Target]
    datasets: list[Target]
    # How many traces the filter matches, when that is more than the page shows (else None: ticking
    # every row of the page is all of them), as the bar says it: "1,234", or "10,000+" for a filtered
    # list past MATCHING_COUNTED.
    matching: str | None
    # The new-reward-model form, with this view's filter.
    train_url: str


# A filtered list's count stops here: it is only named, and counting a million rows on every view of a
# page is not worth its exact figure. The whole list's count is kept, and exact at any size.
MATCHING_COUNTED = 10_000


def action_bar(
    session: Session,
    actor: Actor,
    asked: Mapping[str, str | None],
    filters: listing.ListFilters,
    *,
    one_page: bool,
) -> ActionBar | None:
    """What the bar offers this person on the view the filter parameters `asked` (read as `filters`)
    show; None when they may write nowhere (a reader)."""
    project_id = filters.project_id
    writable = {
        project.id: project.name for project, role in visible_projects(session, actor) if holds(role, "write")
    }
    if not writable:
        return None
    _, queue_views = queues.list_queues(session, actor, limit=MAX_LIMIT)
    _, dataset_views = datasets.list_datasets(session, actor, limit=MAX_LIMIT)
    offered_queues = [
        Target(f"queue:{view.queue.id}", view.queue.name, writable[view.queue.project_id])
        for view in queue_views
        if view.queue.project_id in writable and project_id in (None, view.queue.project_id)
    ]
    offered_datasets = [
        Target(f"dataset:{view.dataset.id}", view.dataset.name, writable[view.dataset.project_id])
        for view in dataset_views
        if view.dataset.project_id in writable
    ]
    matching = None if one_page else _matching_words(session, actor, filters)
    kept = urlencode([(name, value) for name, value in asked.items() if value])
    train_url = f"/ui/reward-models?{kept}#new-model" if kept else "/ui/reward-models#new-model"
    return ActionBar(offered_queues, offered_datasets, matching, train_url)


def _matching_words(session: Session, actor: Actor, filters: listing.ListFilters) -> str:
    """How many traces "all matching" takes: exact for the whole list (its count is kept), counted no
    further than MATCHING_COUNTED for a filter."""
    counted = listing.count_matching(session, actor, filters, most=MATCHING_COUNTED)
    stopped = counted > MATCHING_COUNTED and not listing.whole_list(filters)
    return f"{MATCHING_COUNTED:,}+" if stopped else f"{counted:,}"


def said(request: Request) -> dict[str, str | None]:
    """The sentence the list shows after a post of the bar: `bar_notice` for what was done, `bar_error`
    for a post refused before anything was added."""
    query = request.query_params
    refused = query.get("refused")
    if refused in REFUSALS:
        return {"bar_notice": None, "bar_error": REFUSALS[refused]}
    kind = KINDS.get(query.get("done", ""))
    numbers = [query.get(name, "0") for name in ("added", "already", "missed")]
    if kind is None or not all(number.isdigit() for number in numbers):
        return {"bar_notice": None, "bar_error": None}
    added, already, missed = (int(number) for number in numbers)
    sentence = added_sentence(added, already, kind, query.get("name") or None)
    if missed:
        sentence += " " + missed_sentence(missed, kind)
    return {"bar_notice": sentence, "bar_error": None}


class AddForm(BaseModel):
    """The bar's fields: the list's address (`view`), where to (`queue:<id>` or `dataset:<id>`), which
    traces (`selected`: the ticked rows' `trace` ids; `matching`: all the filter matches)."""

    view: str = ""
    target: str = ""
    scope: str = "selected"
    trace: list[str] = []


def _add(
    session: Session, actor: Actor, kind: Kind, raw: str, chosen: Iterable[uuid.UUID]
) -> tuple[Added, str]:
    if kind == "queue":
        queue_id = path_id(raw, "annotation-queue", partial(queues.queue_not_found, actor))
        done = queues.add_traces(session, actor, queue_id, (str(trace_id) for trace_id in chosen))
        return done, queues.get_queue(session, actor, queue_id).queue.name
    dataset_id = path_id(raw, "dataset", partial(datasets.dataset_not_found, actor))
    done = datasets.add_traces(session, actor, dataset_id, chosen)
    return done, datasets.get_dataset(session, actor, dataset_id).dataset.name


@router.post("/traces/add")
def add_traces(who: Changer, db: Db, form: Annotated[AddForm, Form()]) -> Response:
    back: list[tuple[str, str]] = view_query(form.view, (), drop=SAID)
    named, _, raw = form.target.partition(":")
    kind = KINDS.get(named)
    if kind is None or not raw:
        return see_other(LIST, [*back, ("refused", "no-target")])
    matching = form.scope == "matching"
    if not matching and not form.trace:
        return see_other(LIST, [*back, ("refused", "nothing-selected")])
    filters = filters_from(dict(parse_qsl(form.view)))
    with db.write() as session:
        chosen: Iterable[uuid.UUID] = (
            listing.matching_ids(session, who.actor, filters)
            if matching
            else [path_id(ident, "run") for ident in form.trace]
        )
        done, name = _add(session, who.actor, kind, raw, chosen)
    counts = {"added": done.added, "already": done.already, "missed": len(done.not_found)}
    return see_other(
        LIST, [*back, ("done", kind), ("name", name), *((key, str(value)) for key, value in counts.items())]
    )
