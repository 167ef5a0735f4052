"""Annotation queues: the list with progress, the create and edit forms, a queue's items, and the
keyboard-driven review screen with its in-place saves (annotation-queues.txt, "Use Annotation Queues").

Datasets have their own module (`datasets.py`); its routes are included here, so the console's app
needs no change to serve them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import partial
from types import SimpleNamespace
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import JSONResponse, RedirectResponse, Response

from redline.annotations import service as feedback
from redline.annotations.schemas import AnnotationIn
from redline.console.added_words import added_sentence, unknown_sentence
from redline.console.areas import Area
from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import Refusal, form_whole, refusal
from redline.console.nav import Crumb
from redline.console.notices import see_other
from redline.console.paging import Cursor, CursorQuery, SearchQuery, id_page_links
from redline.console.queue_agreement import agreement_section
from redline.console.queue_disagreements import queue_page_section
from redline.console.rendering import fragment
from redline.console.session import SignedIn
from redline.datasets import service as datasets
from redline.errors import Invalid, RedlineError
from redline.groups import service as corrector_groups
from redline.groups.service import GroupFilters
from redline.identity.members import list_members
from redline.identity.service import REVIEWER_ROLES, Actor, holds, list_users, visible_projects
from redline.queues.annotation import navigation, progress, reviewing, screen
from redline.queues.annotation import service as queues
from redline.queues.annotation.places import standing
from redline.queues.annotation.reviewers import (
    DEFAULT_HOLD_MINUTES,
    DEFAULT_REVIEWERS_PER_ITEM,
    is_blind,
    who_reviews,
)
from redline.queues.annotation.schemas import (
    MAX_HOLD_MINUTES,
    MAX_REVIEWERS_PER_ITEM,
    QueueChange,
    QueueIn,
    ReviewersIn,
    ReviewValue,
)
from redline.queues.models import Queue, QueueItem
from redline.reviews import annotate
from redline.reviews import service as review_keys
from redline.reviews.schemas import ValueIn
from redline.reviews.values import number_text
from redline.stats.agreement_job import ask_for_figures
from redline.stats.agreement_served import served_agreement
from redline.web.addresses import path_id

router = APIRouter()

PAGE_SIZE = 25
ITEMS_PAGE_SIZE = 50
# The review keys a queue form offers: the service pages them; 200 is its largest page.
MAX_KEYS_OFFERED = 200
MAX_DATASETS_OFFERED = 200
MAX_GROUPS_OFFERED = 200

QUEUES = Crumb("Annotation queues", "/ui/queues")
AREA = Area("queues", "review")


def _queue_id(actor: Actor, raw: str) -> uuid.UUID:
    return path_id(raw, "annotation-queue", partial(queues.queue_not_found, actor))


def _item_id(actor: Actor, raw: str) -> uuid.UUID:
    return path_id(raw, "annotation-queue-item", partial(queues.item_not_found, actor))


# ------------------------------------------------------------------------------------------- the list


@router.get("/queues")
def queue_list(request: Request, who: Viewer, db: Db, listed: SearchQuery) -> Response:
    with db.read() as session:
        found, views = queues.list_queues(session, who.actor, **listed.asked(PAGE_SIZE))
        roles = {project.id: (project.name, role) for project, role in visible_projects(session, who.actor)}
    rows = [
        {
            "view": view,
            "project": roles.get(view.queue.project_id, ("—", None))[0] if view.queue.project_id else "—",
            "can_write": holds(roles.get(view.queue.project_id, ("", None))[1], "write")
            if view.queue.project_id
            else who.actor.workspace_admin,
        }
        for view in views
    ]
    return AREA.page(
        request,
        who,
        "queues",
        "Annotation queues",
        Crumb("Annotation queues"),
        rows=rows,
        q=listed.q or "",
        can_create=any(holds(role, "write") for _, role in roles.values()),
        **id_page_links(request, [view.queue.id for view in views], found.has_more, listed),
    )


# ------------------------------------------------------------------------------------ create and edit


@dataclass(frozen=True)
class FormChoices:
    """What the new and edit forms offer: the projects the actor may make a queue in, the human reviews it
    could be reviewed with, and the people (writers of those projects) and corrector groups who could
    be named as its reviewers."""

    projects: list[tuple[str, str]]
    keys: list[dict[str, str]]
    people: list[tuple[str, str]]
    groups: list[tuple[str, str]]


def _form_choices(db: Db, actor: Actor) -> FormChoices:
    with db.read() as session:
        projects = [
            (str(p.id), p.name) for p, role in visible_projects(session, actor) if holds(role, "write")
        ]
        names = dict(projects)
        keys = review_keys.list_keys(session, actor, project_id=None, limit=MAX_KEYS_OFFERED).items
        people = sorted(
            {
                (str(member.principal.id), member.principal.name)
                for project_id in names
                for member in list_members(session, actor, uuid.UUID(project_id))
                if holds(member.role, "write")
            }
            # Workspace admins write in every project, members or not.
            | {(str(user.id), user.name) for user in list_users(session, actor) if user.workspace_admin},
            key=lambda person: (person[1].casefold(), person[0]),
        )
        found = corrector_groups.list_groups(
            session, actor, GroupFilters(), limit=MAX_GROUPS_OFFERED, cursor=None
        ).items
        groups = [
            (
                str(view.group.id),
                f"{view.group.name} ({corrector_groups.where_it_applies(session, view.group)})",
            )
            for view in found
        ]
    offered = [
        {
            "id": str(k.id),
            "label": f"{k.title} ({k.key})",
            "type": k.type,
            "project": names[str(k.project_id)],
        }
        for k in sorted(keys, key=lambda k: (str(k.project_id), k.key))
        if str(k.project_id) in names
    ]
    return FormChoices(projects, offered, people, groups)


def _queue_form(
    request: Request,
    who: SignedIn,
    db: Db,
    *,
    values: dict[str, Any],
    queue_id: str | None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    choices = _form_choices(db, who.actor)
    editing = queue_id is not None
    title = f"Edit {values['name']}" if editing else "New annotation queue"
    crumbs = [QUEUES]
    if editing:
        crumbs.append(Crumb(values["name"], f"/ui/queues/{queue_id}"))
    crumbs.append(Crumb("Edit" if editing else "New queue"))
    return AREA.page(
        request,
        who,
        "queue_form",
        title,
        *crumbs,
        values=values,
        projects=choices.projects,
        offered=choices.keys,
        people=choices.people,
        groups=choices.groups,
        roles=REVIEWER_ROLES,
        most_per_item=MAX_REVIEWERS_PER_ITEM,
        most_minutes=MAX_HOLD_MINUTES,
        queue_id=queue_id,
        error=error,
        status_code=status_code,
    )


class QueueForm(BaseModel):
    """The new and edit forms' fields as typed, so a refused form comes back as it was sent."""

    name: str = ""
    description: str = ""
    project_id: str = ""
    human_review_ids: list[str] = []
    reviewers_per_item: str = "1"
    hold_minutes: str = "10"
    # auto (on when more than one reviews each item), on or off.
    blind: str = "auto"
    reviewer_ids: list[str] = []
    reviewer_group_ids: list[str] = []
    min_reviewer_role: str = ""

    def reviewing(self) -> dict[str, Any]:
        """How the queue is to be reviewed, as QueueIn and QueueChange take it."""
        per_item = form_whole(self.reviewers_per_item, "reviewers_per_item", "Reviewers per item")
        minutes = form_whole(self.hold_minutes, "hold_minutes", "Hold for (minutes)")
        named = bool(self.reviewer_ids or self.reviewer_group_ids or self.min_reviewer_role)
        return {
            "reviewers_per_item": per_item if per_item is not None else DEFAULT_REVIEWERS_PER_ITEM,
            "hold_minutes": minutes if minutes is not None else DEFAULT_HOLD_MINUTES,
            "blind": {"on": True, "off": False}.get(self.blind),
            "reviewers": ReviewersIn(
                principal_ids=self.reviewer_ids,
                group_ids=self.reviewer_group_ids,
                min_reviewer_role=self.min_reviewer_role or None,
            )
            if named
            else None,
        }


def _form_values(view: queues.QueueView) -> dict[str, Any]:
    """The edit form's fields as the queue has them now."""
    queue = view.queue
    named = queue.reviewers or {}
    return {
        "name": queue.name,
        "description": queue.description,
        "project_id": str(queue.project_id or ""),
        "human_review_ids": view.review_key_ids,
        "reviewers_per_item": str(queue.reviewers_per_item),
        "hold_minutes": str(queue.hold_minutes),
        "blind": "auto" if queue.blind is None else ("on" if queue.blind else "off"),
        "reviewer_ids": list(named.get("principalIds", [])),
        "reviewer_group_ids": list(named.get("groupIds", [])),
        "min_reviewer_role": named.get("minReviewerRole") or "",
    }


@router.get("/queues/new")
def new_queue_form(request: Request, who: Viewer, db: Db) -> Response:
    return _queue_form(request, who, db, values=QueueForm().model_dump(), queue_id=None)


@router.post("/queues/new")
def create_queue(request: Request, who: Changer, db: Db, form: Annotated[QueueForm, Form()]) -> Response:
    chosen = form.human_review_ids
    try:
        body = QueueIn(
            display_name=form.name.strip(),
            description=form.description,
            project_id=form.project_id,
            **form.reviewing(),
        )
        with db.write() as session:
            made = queues.create_queue(session, who.actor, body)
            if chosen:
                queues.update_queue(session, who.actor, made.queue.id, QueueChange(human_review_ids=chosen))
            new_id = made.queue.id
    except (ValidationError, RedlineError) as error:
        return _queue_form(request, who, db, values=form.model_dump(), queue_id=None, **refusal(error))
    return RedirectResponse(f"/ui/queues/{new_id}", status_code=303)


@router.get("/queues/{queue_id}/edit")
def edit_queue_form(request: Request, queue_id: str, who: Viewer, db: Db) -> Response:
    with db.read() as session:
        view = queues.get_queue(session, who.actor, _queue_id(who.actor, queue_id), "write")
    return _queue_form(request, who, db, values=_form_values(view), queue_id=queue_id)


@router.post("/queues/{queue_id}/edit")
def edit_queue(
    request: Request, queue_id: str, who: Changer, db: Db, form: Annotated[QueueForm, Form()]
) -> Response:
    ident = _queue_id(who.actor, queue_id)
    try:
        change = QueueChange(
            display_name=form.name.strip(),
            description=form.description,
            human_review_ids=form.human_review_ids,
            project_id=form.project_id or None,
            **form.reviewing(),
        )
        with db.write() as session:
            queues.update_queue(session, who.actor, ident, change)
    except (ValidationError, RedlineError) as error:
        return _queue_form(request, who, db, values=form.model_dump(), queue_id=queue_id, **refusal(error))
    return RedirectResponse(f"/ui/queues/{queue_id}", status_code=303)


# --------------------------------------------------------------------------------- delete and clear


@dataclass(frozen=True)
class Confirmation:
    """What the page asking before a queue's deletion or clearing says; `action` is where it posts."""

    action: str
    question: str
    consequence: str
    button: str


_ACTIONS = {
    "delete": Confirmation(
        "delete",
        "Delete this queue?",
        "The queue goes with its items and automations. The review values saved from it stay on the traces.",
        "Delete queue",
    ),
    "clear": Confirmation(
        "clear",
        "Take every item out of this queue?",
        "The queue, its automations and the review values saved from it stay.",
        "Clear queue",
    ),
}


@router.get("/queues/{queue_id}/delete")
def confirm_delete(request: Request, queue_id: str, who: Viewer, db: Db) -> Response:
    return _confirm(request, queue_id, "delete", who, db)


@router.get("/queues/{queue_id}/clear")
def confirm_clear(request: Request, queue_id: str, who: Viewer, db: Db) -> Response:
    return _confirm(request, queue_id, "clear", who, db)


def _confirm(request: Request, queue_id: str, action: str, who: SignedIn, db: Db) -> Response:
    """The question before clearing or deleting a queue: for its project's writers, who alone may answer."""
    with db.read() as session:
        view = queues.get_queue(session, who.actor, _queue_id(who.actor, queue_id), "write")
    asked = _ACTIONS[action]
    return AREA.page(
        request,
        who,
        "confirm",
        asked.question,
        QUEUES,
        Crumb(view.queue.name, f"/ui/queues/{queue_id}"),
        Crumb(asked.button),
        view=view,
        asked=asked,
    )


@router.post("/queues/{queue_id}/delete")
def delete_queue(queue_id: str, who: Changer, db: Db) -> Response:
    with db.write() as session:
        queues.delete_queue(session, who.actor, _queue_id(who.actor, queue_id))
    return RedirectResponse("/ui/queues", status_code=303)


@router.post("/queues/{queue_id}/clear")
def clear_queue(queue_id: str, who: Changer, db: Db) -> Response:
    with db.write() as session:
        queues.clear_queue(session, who.actor, _queue_id(who.actor, queue_id))
    return RedirectResponse(f"/ui/queues/{queue_id}", status_code=303)


# ---------------------------------------------------------------------------------------- a queue's page


def _queue_page(
    request: Request,
    who: SignedIn,
    db: Db,
    queue_id: str,
    cursor: Cursor,
    *,
    error: str | None = None,
    notice: str | None = None,
    traces_text: str = "",
    status_code: int = 200,
) -> Response:
    ident = _queue_id(who.actor, queue_id)
    with db.read() as session:
        view = queues.get_queue(session, who.actor, ident)
        found = queues.list_items(session, who.actor, ident, **cursor.asked(ITEMS_PAGE_SIZE))
        rows = screen.item_rows(session, found.items)
        keys = queues.review_keys(session, view.queue)
        can_write = screen.may_write(session, who.actor, view.queue)
        so_far = progress.progress(session, who.actor, ident)
        agreement = served_agreement(session, who.actor, ident, request.app.state.agreement_live_items)
        reviewers_words = who_reviews(session, view.queue)
        disagreeing = queue_page_section(session, who.actor, view.queue)
    if agreement.wants_job:
        with db.write() as session:
            ask_for_figures(session, agreement.queue_id, agreement.reader_id)
    return AREA.page(
        request,
        who,
        "queue",
        view.queue.name,
        QUEUES,
        Crumb(view.queue.name),
        view=view,
        rows=rows,
        keys=keys,
        can_write=can_write,
        progress=so_far,
        agreement=agreement_section(agreement.answer),
        blind=is_blind(view.queue),
        who_reviews=reviewers_words,
        disagreements=disagreeing,
        error=error,
        notice=notice,
        traces_text=traces_text,
        status_code=status_code,
        **id_page_links(
            request,
            [item.id for item in found.items],
            found.has_more,
            cursor,
            path=f"/ui/queues/{queue_id}",
        ),
    )


@router.get("/queues/{queue_id}")
def queue_page(
    request: Request,
    queue_id: str,
    who: Viewer,
    db: Db,
    cursor: CursorQuery,
) -> Response:
    return _queue_page(request, who, db, queue_id, cursor, notice=_added_notice(request))


# The longest ref a pasted line may be: the /v2 items' ids are at most this long.
MAX_REF_CHARS = 200


@router.post("/queues/{queue_id}/items")
def add_traces(
    request: Request, queue_id: str, who: Changer, db: Db, traces: Annotated[str, Form()] = ""
) -> Response:
    """Put traces into the queue by id (or the external id their tracer gave), one a line or comma
    apart. The traces found go in; ids that name no trace of the queue's project are named as typed
    and stay in the field to be fixed (`queues.add_traces`)."""
    refs = list(dict.fromkeys(ref.strip() for ref in traces.replace(",", "\n").splitlines() if ref.strip()))
    if not refs or any(len(ref) > MAX_REF_CHARS for ref in refs):
        refused = Refusal(
            error="Give at least one trace id, one a line (ids of at most 200 characters).", status_code=400
        )
        return _queue_page(request, who, db, queue_id, Cursor(), traces_text=traces, **refused)
    ident = _queue_id(who.actor, queue_id)
    try:
        with db.write() as session:
            done = queues.add_traces(session, who.actor, ident, refs)
    except RedlineError as error:
        return _queue_page(request, who, db, queue_id, Cursor(), traces_text=traces, **refusal(error))
    counts = [("added", str(done.added)), ("already", str(done.already))]
    if not done.not_found:
        return see_other(f"/ui/queues/{queue_id}", [("done", "added"), *counts])
    known = done.added + done.already
    return _queue_page(
        request,
        who,
        db,
        queue_id,
        Cursor(),
        notice=added_sentence(done.added, done.already, "queue") if known else None,
        error=unknown_sentence(done.not_found),
        traces_text="\n".join(done.not_found),
        status_code=200 if known else 400,
    )


def _added_notice(request: Request) -> str | None:
    """What the queue page says after the paste form added traces: the counts its address carries."""
    query = request.query_params
    numbers = [query.get("added", ""), query.get("already", "")]
    if query.get("done") != "added" or not all(number.isdigit() for number in numbers):
        return None
    return added_sentence(int(numbers[0]), int(numbers[1]), "queue")


# ------------------------------------------------------------------------------------- the review screen


@router.get("/queues/{queue_id}/review")
def review_screen(
    request: Request,
    queue_id: str,
    who: Viewer,
    db: Db,
    item: str | None = None,
    go: Literal["next", "previous"] | None = None,
    unreviewed: bool = False,
    edge: Literal["first", "last", "done"] | None = None,
) -> Response:
    """The review screen of one item, held for the reviewer who opens it while a place is free. Without
    an item it starts at the reviewer's next (the first item they could take a place in), else at the
    first unreviewed one; `go` steps to the next or previous item (with `unreviewed`, the reviewer's
    next) and redirects to its address, so the address always names the item on screen and a reload
    stays on it."""
    ident = _queue_id(who.actor, queue_id)
    item_id = _item_id(who.actor, item) if item is not None else None
    base = f"/ui/queues/{queue_id}/review"
    keep = "&unreviewed=1" if unreviewed else ""
    if item_id is None or go is not None:
        reviewer, mine = False, None
        if go != "previous" and (item_id is None or unreviewed):
            with db.write() as session:
                reviewer, mine = navigation.next_for_reviewer(session, who.actor, ident, item_id)
        if mine is not None:
            return RedirectResponse(f"{base}?item={mine.id}{keep}", status_code=303)
        if reviewer and item_id is not None:
            return RedirectResponse(f"{base}?item={item_id}{keep}&edge=done", status_code=303)
        with db.read() as session:
            if item_id is None:
                place = navigation.step(session, who.actor, ident, direction="next", unreviewed_only=True)
                if place.item is None:
                    place = navigation.step(session, who.actor, ident, direction="next")
            else:
                assert go is not None
                place = navigation.step(
                    session, who.actor, ident, item_id=item_id, direction=go, unreviewed_only=unreviewed
                )
        if place.item is not None:
            done = "&edge=done" if reviewer else ""
            return RedirectResponse(f"{base}?item={place.item.id}{keep}{done}", status_code=303)
        if item_id is not None:
            reached = "last" if go == "next" else "first"
            return RedirectResponse(f"{base}?item={item_id}{keep}&edge={reached}", status_code=303)
    if item_id is not None:
        with db.write() as session:
            navigation.open_item(session, who.actor, ident, item_id)
    with db.read() as session:
        on_screen = screen.item_screen(session, who.actor, ident, item_id)
        dataset_choices: list[tuple[str, str]] = []
        if on_screen.can_write and on_screen.trace is not None:
            _, views = datasets.list_datasets(
                session,
                who.actor,
                limit=MAX_DATASETS_OFFERED,
                project_id=str(on_screen.queue.project_id) if on_screen.queue.project_id else None,
            )
            dataset_choices = [(str(v.dataset.id), v.dataset.name) for v in views]
    current = on_screen.place.item
    shown_keys = on_screen.keys
    here = f"{base}?item={current.id}{keep}" if current is not None else base
    return AREA.page(
        request,
        who,
        "screen",
        f"Review · {on_screen.queue.name}",
        QUEUES,
        Crumb(on_screen.queue.name, f"/ui/queues/{queue_id}"),
        Crumb("Review"),
        s=on_screen,
        edge=edge,
        unreviewed=unreviewed,
        next_url=f"{base}?item={current.id}&go=next{keep}" if current is not None else None,
        previous_url=f"{base}?item={current.id}&go=previous{keep}" if current is not None else None,
        toggle_url=(f"{base}?item={current.id}" + ("" if unreviewed else "&unreviewed=1"))
        if current
        else base,
        here=here,
        datasets=dataset_choices,
        save_base=f"/ui/queues/{queue_id}/items/{current.id}" if current is not None else "",
        skip_url=f"/ui/queues/{queue_id}/items/{current.id}/skip{'?unreviewed=1' if unreviewed else ''}"
        if current is not None
        else "",
        numbered_key=next((key.key for key in shown_keys if key.type == "categorical"), None),
        num=number_text,
    )


@router.post("/queues/{queue_id}/items/{item_id}/skip")
def skip_item(queue_id: str, item_id: str, who: Changer, db: Db, unreviewed: bool = False) -> Response:
    """Pass the item over (it leaves the reviewer's next, their hold goes) and go on to their next."""
    q, i = _queue_id(who.actor, queue_id), _item_id(who.actor, item_id)
    base = f"/ui/queues/{queue_id}/review"
    keep = "&unreviewed=1" if unreviewed else ""
    with db.write() as session:
        navigation.skip_item(session, who.actor, q, i)
        _, mine = navigation.next_for_reviewer(session, who.actor, q, i)
    if mine is not None:
        return RedirectResponse(f"{base}?item={mine.id}{keep}", status_code=303)
    return RedirectResponse(f"{base}?item={item_id}{keep}&edge=done", status_code=303)


# ------------------------------------------------------------------------------------- in-place saves


class _Save(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewSave(_Save):
    """One review value; null takes the reviewer's value of that key back."""

    key: str = Field(min_length=1, max_length=200)
    value: Any = None


class CommentSave(_Save):
    comment: str = Field(min_length=1, max_length=10_000)


class CorrectionSave(_Save):
    result_id: str = Field(min_length=1, max_length=200)
    span_id: str = Field("", max_length=200)
    value: Any = None
    explanation: str | None = Field(None, max_length=2_000)


class DatasetSave(_Save):
    dataset_id: str = Field(min_length=1, max_length=200)


def _item_trace(session: Any, who: SignedIn, queue_id: uuid.UUID, item_id: uuid.UUID, why: str) -> uuid.UUID:
    """The trace of the item, for a save that goes on traces; an item that is a datapoint is refused with
    `why` (a 400 the script shows)."""
    found = queues.get_item(session, who.actor, queue_id, item_id)
    if found.trace_id is None:
        raise Invalid(why)
    return found.trace_id


def _answer(session: Any, who: SignedIn, queue_id: uuid.UUID, **fields: Any) -> JSONResponse:
    total, reviewed = screen.progress(session, who.actor, queue_id)
    return JSONResponse({"total": total, "reviewed": reviewed, **fields})


@router.post("/queues/{queue_id}/items/{item_id}/review")
def save_review(queue_id: str, item_id: str, body: ReviewSave, who: Changer, db: Db) -> Response:
    """Selecting a value saves it at once, renews the reviewer's hold, and marks the item reviewed once
    its reviewers are done (with one reviewer per item, at once: annotation-queues.txt)."""
    q, i = _queue_id(who.actor, queue_id), _item_id(who.actor, item_id)
    with db.write() as session:
        if body.value is None or body.value == []:
            queues.queue_for(session, who.actor, q, "write")
            found = queues.get_item(session, who.actor, q, i)
            if found.trace_id is not None:
                annotate.remove_values(session, who.actor, found.trace_id, found.span_key, keys=[body.key])
            return _answer(
                session,
                who,
                q,
                value=None,
                item_reviewed=found.reviewed_at is not None,
                **_my_part(session, who, q, i),
            )
        saved = reviewing.save_review(session, who.actor, q, i, [ReviewValue(key=body.key, value=body.value)])
        return _answer(
            session,
            who,
            q,
            value=body.value,
            item_reviewed=saved.reviewed_at is not None,
            **_my_part(session, who, q, i),
        )


def _my_part(session: Any, who: SignedIn, queue_id: uuid.UUID, item_id: uuid.UUID) -> dict[str, Any]:
    """Where the item stands for the saver after the save: their part (held, reviewed, or none after a
    value taken back) and the screen's hold line as it now reads, which the script puts in place."""
    queue, item = session.get(Queue, queue_id), session.get(QueueItem, item_id)
    now = standing(session, who.actor, item, queue.reviewers_per_item)
    line = fragment(
        "review/_hold_line.html",
        st=now,
        s=_SAVER,
        may_save=True,
        skip_url=f"/ui/queues/{queue_id}/items/{item_id}/skip",
        csrf=who.csrf,
    )
    return {"mine": now.mine, "hold_line": bytes(line.body).decode()}


# Whoever saved may write and is one of the queue's reviewers: the hold line's conditions on the screen.
_SAVER = SimpleNamespace(can_write=True, can_review=True)


@router.post("/queues/{queue_id}/items/{item_id}/comment")
def save_comment(queue_id: str, item_id: str, body: CommentSave, who: Changer, db: Db) -> Response:
    """A comment on the item's trace, as the annotations panel's comment field saves it."""
    q, i = _queue_id(who.actor, queue_id), _item_id(who.actor, item_id)
    with db.write() as session:
        trace_id = _item_trace(session, who, q, i, "This item is a datapoint: comments go on traces.")
        made = feedback.create(session, who.actor, trace_id, AnnotationIn(comment=body.comment))
        return _answer(session, who, q, comment=made.comment, author=made.author_name)


@router.post("/queues/{queue_id}/items/{item_id}/correction")
def save_correction(queue_id: str, item_id: str, body: CorrectionSave, who: Changer, db: Db) -> Response:
    """A person's correction of an evaluator result on the item's trace: of the evaluator's own type."""
    q, i = _queue_id(who.actor, queue_id), _item_id(who.actor, item_id)
    with db.write() as session:
        trace_id = _item_trace(session, who, q, i, "This item is a datapoint: it has no evaluator results.")
        annotate.save_values(
            session,
            who.actor,
            trace_id,
            body.span_id,
            [
                ValueIn(
                    parent_annotation_id=body.result_id,
                    value=body.value,
                    explanation=body.explanation or None,
                )
            ],
        )
        return _answer(
            session, who, q, value=body.value, explanation=body.explanation or None, author=who.actor.name
        )


@router.post("/queues/{queue_id}/items/{item_id}/dataset")
def add_to_dataset(queue_id: str, item_id: str, body: DatasetSave, who: Changer, db: Db) -> Response:
    """Send the item's trace to a dataset; its annotations stay on the trace (annotation-queues.txt)."""
    q, i = _queue_id(who.actor, queue_id), _item_id(who.actor, item_id)
    dataset_id = path_id(body.dataset_id, "dataset", partial(datasets.dataset_not_found, who.actor))
    with db.write() as session:
        datapoint = reviewing.add_to_dataset(session, who.actor, q, i, dataset_id)
        name = datasets.get_dataset(session, who.actor, dataset_id).dataset.name
        return _answer(
            session,
            who,
            q,
            message=f"Added to {name}.",
            url=f"/ui/datasets/{dataset_id}",
            datapoint_id=str(datapoint.id),
        )
