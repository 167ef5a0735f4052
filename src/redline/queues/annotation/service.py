"""Rules of annotation queues (annotation-queues.txt, wire-clients.md §1.4): making, changing, listing
and emptying queues, and putting traces (or spans of them) into one and taking them out.

A queue lives in a project: reading it (and its items) takes `read` there, changing it `write`.
Anything the caller can't see is not found, with the seed's sentence shape.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.orm import Session

from redline.db import in_chunks, new_id, parse_id, utcnow
from redline.db.id_pages import IdPage, id_page, named_and_updated_by
from redline.errors import Conflict, Forbidden, Invalid, NotFound, not_in_workspace
from redline.identity.service import Actor, ProjectRole, require_project_role, visible_projects, wire_project
from redline.queues.annotation import places, reviewers
from redline.queues.annotation.items import WHOLE_TRACE, delete_items, insert_items, touch_queue
from redline.queues.annotation.schemas import ItemRef, QueueChange, QueueIn
from redline.queues.models import Queue, QueueItem, QueueReviewKey, QueueRule
from redline.reviews.models import ReviewKey
from redline.reviews.targets import span_not_found
from redline.reviews.traceviews import trace_not_found
from redline.traces.models import Span, Trace
from redline.traces.selection import Added, batches

ANNOTATION = "annotation"


@dataclass(frozen=True)
class QueueView:
    """A queue with what its answer shows besides its row: its review keys and how full it is."""

    queue: Queue
    review_key_ids: list[str]
    items_count: int
    reviewed_count: int


def queue_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("annotation-queue", "Annotation queue", ident, actor.workspace_id)


def item_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("annotation-queue-item", "Annotation queue item", ident, actor.workspace_id)


# ------------------------------------------------------------------------------------------------ access


def _project_for(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID | None,
    needed: ProjectRole,
    missing: NotFound | None = None,
) -> None:
    """`needed` in the project (a project the actor can't see is `missing`, when given); a queue without
    one (legacy) is the workspace's: read by its members, changed by its admins."""
    if project_id is None:
        if needed != "read" and not actor.workspace_admin:
            raise Forbidden("Only a workspace admin can change a queue that belongs to no project.")
        return
    require_project_role(session, actor, project_id, needed, missing)


def queue_for(session: Session, actor: Actor, queue_id: uuid.UUID, needed: ProjectRole) -> Queue:
    """The annotation queue, if the actor holds `needed` in its project; not found if it can't see it."""
    queue = session.get(Queue, queue_id)
    if queue is None or queue.kind != ANNOTATION or queue.workspace_id != actor.workspace_id:
        raise queue_not_found(actor, queue_id)
    _project_for(session, actor, queue.project_id, needed, queue_not_found(actor, queue_id))
    return queue


# ------------------------------------------------------------------------------------------------- views


def chosen_review_keys(session: Session, queue_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    """The review keys chosen for each queue, in the queue's order."""
    found: dict[uuid.UUID, list[str]] = {queue_id: [] for queue_id in queue_ids}
    for chunk in in_chunks(list(queue_ids)):
        rows = session.execute(
            select(QueueReviewKey.queue_id, QueueReviewKey.review_key_id)
            .where(QueueReviewKey.queue_id.in_(chunk))
            .order_by(QueueReviewKey.queue_id, QueueReviewKey.position)
        )
        for queue_id, key_id in rows:
            found[queue_id].append(str(key_id))
    return found


def views(session: Session, queues: Sequence[Queue]) -> list[QueueView]:
    keys = chosen_review_keys(session, [queue.id for queue in queues])
    return [QueueView(q, keys[q.id], q.items_count, q.reviewed_count) for q in queues]


def view(session: Session, queue: Queue) -> QueueView:
    [one] = views(session, [queue])
    return one


def review_keys(session: Session, queue: Queue) -> list[ReviewKey]:
    """What the queue is reviewed with: the keys chosen for it, in order, or, with none chosen, every
    review key of its project (as a queue with a project resolves them, §1.4)."""
    chosen = list(
        session.scalars(
            select(ReviewKey)
            .join(QueueReviewKey, QueueReviewKey.review_key_id == ReviewKey.id)
            .where(QueueReviewKey.queue_id == queue.id)
            .order_by(QueueReviewKey.position)
        )
    )
    if chosen or queue.project_id is None:
        return chosen
    return list(
        session.scalars(
            select(ReviewKey).where(ReviewKey.project_id == queue.project_id).order_by(ReviewKey.key)
        )
    )


# --------------------------------------------------------------------------------------------- the queue


def list_queues(
    session: Session,
    actor: Actor,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    search: str | None = None,
    updated_by: str | None = None,
) -> tuple[IdPage[Queue], list[QueueView]]:
    """The annotation queues of every project the actor can read, newest first.

    `search` keeps those whose name holds it (any case); `updated_by` those last changed by one of the
    comma-separated principal ids.
    """
    readable = [project.id for project, _ in visible_projects(session, actor)]
    query = select(Queue).where(
        Queue.workspace_id == actor.workspace_id,
        Queue.kind == ANNOTATION,
        or_(Queue.project_id.in_(readable), Queue.project_id.is_(None)),
    )
    query = named_and_updated_by(query, Queue.name, Queue.updated_by, search=search, updated_by=updated_by)
    page = id_page(
        session,
        query,
        [Queue.created_at, Queue.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
    )
    return page, views(session, page.items)


def create_queue(session: Session, actor: Actor, body: QueueIn) -> QueueView:
    project = wire_project(session, actor, body.project_id, "write")
    now = utcnow()
    queue = Queue(
        id=new_id(),
        workspace_id=actor.workspace_id,
        project_id=project.id,
        kind=ANNOTATION,
        name=body.display_name,
        description=body.description,
        reviewers_per_item=reviewers.DEFAULT_REVIEWERS_PER_ITEM
        if body.reviewers_per_item is None
        else reviewers.checked_reviewers_per_item(body.reviewers_per_item),
        hold_minutes=reviewers.DEFAULT_HOLD_MINUTES
        if body.hold_minutes is None
        else reviewers.checked_hold_minutes(body.hold_minutes),
        blind=body.blind,
        reviewers=reviewers.stored_reviewers(session, actor, project.id, body.reviewers),
        created_by=actor.principal_id,
        updated_by=actor.principal_id,
        created_at=now,
        updated_at=now,
    )
    session.add(queue)
    session.flush()
    return QueueView(queue, [], 0, 0)


def get_queue(session: Session, actor: Actor, queue_id: uuid.UUID, needed: ProjectRole = "read") -> QueueView:
    """The queue's view, for an actor holding `needed` in its project (`write` for the pages that change
    it: its edit form and the questions before clearing or deleting it)."""
    return view(session, queue_for(session, actor, queue_id, needed))


def _set_review_keys(session: Session, queue: Queue, key_ids: list[str]) -> None:
    """Choose the queue's review keys, in the order given; each must be a key of the queue's project."""
    wanted = list(dict.fromkeys(key_ids))
    parsed = {ident: parse_id(ident) for ident in wanted}
    found: set[uuid.UUID] = set()
    valid = [value for value in parsed.values() if value is not None]
    if valid:
        found = set(
            session.scalars(
                select(ReviewKey.id).where(ReviewKey.id.in_(valid), ReviewKey.project_id == queue.project_id)
            )
        )
    for ident, value in parsed.items():
        if value is None or value not in found:
            raise Invalid(
                f"human_review_ids: {ident} is not a human review of this queue's project.",
                details={"field": "human_review_ids"},
            )
    session.execute(delete(QueueReviewKey).where(QueueReviewKey.queue_id == queue.id))
    session.add_all(
        QueueReviewKey(queue_id=queue.id, review_key_id=parsed[ident], position=position)
        for position, ident in enumerate(wanted)
    )


def update_queue(session: Session, actor: Actor, queue_id: uuid.UUID, change: QueueChange) -> QueueView:
    """Change the fields sent. Setting `project_id` clears the chosen review keys (§1.4); keys sent in the
    same request are then chosen among the new project's. A queue moves only while it holds no items
    and no automation, since both are its old project's."""
    queue = queue_for(session, actor, queue_id, "write")
    sent = change.model_fields_set
    if "display_name" in sent and change.display_name is not None:
        queue.name = change.display_name
    if "description" in sent and change.description is not None:
        queue.description = change.description
    if "project_id" in sent and change.project_id is not None:
        project = wire_project(session, actor, change.project_id, "write")
        if project.id != queue.project_id:
            has_items = session.scalar(select(QueueItem.id).where(QueueItem.queue_id == queue.id).limit(1))
            has_rules = session.scalar(
                select(QueueRule.rule_id)
                .where(QueueRule.queue_id == queue.id, QueueRule.unregistered_at.is_(None))
                .limit(1)
            )
            if has_items or has_rules:
                raise Conflict(
                    "A queue moves to another project only while it is empty and has no automations: "
                    "its items and automations are its project's.",
                    code="annotation-queue-not-empty",
                )
            queue.project_id = project.id
        session.execute(delete(QueueReviewKey).where(QueueReviewKey.queue_id == queue.id))
    if "human_review_ids" in sent and change.human_review_ids is not None:
        _set_review_keys(session, queue, change.human_review_ids)
    _change_reviewing(session, actor, queue, change)
    queue.updated_at = utcnow()
    queue.updated_by = actor.principal_id
    session.flush()
    return view(session, queue)


def _change_reviewing(session: Session, actor: Actor, queue: Queue, change: QueueChange) -> None:
    """The overlap settings sent: `blind` and `reviewers` sent as null go back to their defaults; a new
    number of reviewers per item re-decides which items are fully reviewed (`places.change_places`)."""
    sent = change.model_fields_set
    if "hold_minutes" in sent and change.hold_minutes is not None:
        queue.hold_minutes = reviewers.checked_hold_minutes(change.hold_minutes)
    if "blind" in sent:
        queue.blind = change.blind
    if "reviewers" in sent:
        queue.reviewers = reviewers.stored_reviewers(session, actor, queue.project_id, change.reviewers)
    if "reviewers_per_item" in sent and change.reviewers_per_item is not None:
        wanted = reviewers.checked_reviewers_per_item(change.reviewers_per_item)
        if wanted != queue.reviewers_per_item:
            places.change_places(session, queue, wanted)


def delete_queue(session: Session, actor: Actor, queue_id: uuid.UUID) -> None:
    """The queue goes with its items and automations; the review values saved from it stay on the traces."""
    queue = queue_for(session, actor, queue_id, "write")
    session.execute(delete(QueueItem).where(QueueItem.queue_id == queue.id))
    session.execute(delete(QueueRule).where(QueueRule.queue_id == queue.id))
    session.delete(queue)
    session.flush()


def clear_queue(session: Session, actor: Actor, queue_id: uuid.UUID) -> None:
    """Take every item out; the queue, its automations and the values saved from it stay."""
    queue = queue_for(session, actor, queue_id, "write")
    delete_items(session, queue.id)
    touch_queue(session, queue.id, actor.principal_id)
    session.flush()


# ------------------------------------------------------------------------------------------------- items


def list_items(
    session: Session,
    actor: Actor,
    queue_id: uuid.UUID,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> IdPage[QueueItem]:
    """A queue's items in the order they came (the order a reviewer steps through them)."""
    queue = queue_for(session, actor, queue_id, "read")
    query = select(QueueItem).where(QueueItem.queue_id == queue.id)
    return id_page(
        session,
        query,
        [QueueItem.seq, QueueItem.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
        descending=False,
    )


def item_of(session: Session, actor: Actor, queue: Queue, item_id: uuid.UUID) -> QueueItem:
    item = session.get(QueueItem, item_id)
    if item is None or item.queue_id != queue.id:
        raise item_not_found(actor, item_id)
    return item


def get_item(session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID) -> QueueItem:
    return item_of(session, actor, queue_for(session, actor, queue_id, "read"), item_id)


def _traces_by_ref(session: Session, project_id: uuid.UUID, refs: set[str]) -> dict[str, uuid.UUID]:
    """The project's traces named by the refs: Redline's id, or the external id the tracer gave."""
    found: dict[str, uuid.UUID] = {}
    ordered = sorted(refs)
    for chunk in in_chunks(ordered):
        ids = [parsed for ref in chunk if (parsed := parse_id(ref))]
        # Two lookups, each on its own index, rather than one OR of the two, which the planners answered
        # by scanning the project's traces: by id on the primary key alone (the project is checked here,
        # so no planner walks the project's index instead), by external id on the project's.
        by_id = session.execute(
            select(Trace.id, Trace.external_id, Trace.project_id).where(Trace.id.in_(ids))
        )
        rows = [(trace_id, external_id) for trace_id, external_id, project in by_id if project == project_id]
        by_external_id = session.execute(
            select(Trace.id, Trace.external_id).where(
                Trace.project_id == project_id, Trace.external_id.in_(chunk)
            )
        )
        rows += [(trace_id, external_id) for trace_id, external_id in by_external_id]
        for trace_id, external_id in rows:
            if external_id in refs:
                found[external_id] = trace_id
            if str(trace_id) in refs:
                found[str(trace_id)] = trace_id
    return found


def _spans_of(session: Session, pairs: set[tuple[uuid.UUID, str]]) -> set[tuple[uuid.UUID, str]]:
    trace_ids = sorted({trace_id for trace_id, _ in pairs}, key=str)
    known: set[tuple[uuid.UUID, str]] = set()
    for chunk in in_chunks(trace_ids):
        rows = session.execute(select(Span.trace_id, Span.span_id).where(Span.trace_id.in_(chunk)))
        known.update((trace_id, span_id) for trace_id, span_id in rows if (trace_id, span_id) in pairs)
    return known


def _resolve(
    session: Session, actor: Actor, queue: Queue, refs: Sequence[ItemRef]
) -> list[tuple[uuid.UUID, str]]:
    """Each ref as (trace, span key), refusing the first that names nothing in the queue's project."""
    assert queue.project_id is not None
    traces = _traces_by_ref(session, queue.project_id, {ref.trace_id for ref in refs})
    wanted: list[tuple[uuid.UUID, str]] = []
    for ref in refs:
        trace_id = traces.get(ref.trace_id)
        if trace_id is None:
            raise trace_not_found(actor, ref.trace_id)
        whole = ref.span_id in (ref.trace_id, str(trace_id))
        wanted.append((trace_id, WHOLE_TRACE if whole else ref.span_id))
    spans = {pair for pair in wanted if pair[1] != WHOLE_TRACE}
    known = _spans_of(session, spans) if spans else set()
    for (trace_id, span_key), ref in zip(wanted, refs, strict=True):
        if span_key != WHOLE_TRACE and (trace_id, span_key) not in known:
            raise span_not_found(actor, ref.span_id)
    return wanted


def _items_at(
    session: Session, queue_id: uuid.UUID, keys: Sequence[tuple[uuid.UUID, str]]
) -> dict[tuple[uuid.UUID, str], QueueItem]:
    found: dict[tuple[uuid.UUID, str], QueueItem] = {}
    trace_ids = sorted({trace_id for trace_id, _ in keys}, key=str)
    wanted = set(keys)
    for chunk in in_chunks(trace_ids):
        for item in session.scalars(
            select(QueueItem).where(QueueItem.queue_id == queue_id, QueueItem.trace_id.in_(chunk))
        ):
            key = (item.trace_id, item.span_key)
            if key in wanted:
                found[key] = item
    return found


def add_items(
    session: Session, actor: Actor, queue_id: uuid.UUID, refs: Sequence[ItemRef]
) -> list[QueueItem]:
    """Put spans (or whole traces) into the queue, all or none. An item already there is answered as it
    is, unchanged: adding is idempotent, and a trace is never in a queue twice."""
    queue = queue_for(session, actor, queue_id, "write")
    wanted = list(dict.fromkeys(_resolve(session, actor, queue, refs)))
    rows = [
        {
            "type": "span",
            "trace_id": trace_id,
            "span_key": span_key,
            "datapoint_id": None,
            "added_by_rules": None,
            "added_by": actor.principal_id,
        }
        for trace_id, span_key in wanted
    ]
    if insert_items(session, queue.id, rows):
        touch_queue(session, queue.id, actor.principal_id)
    session.flush()
    existing = _items_at(session, queue.id, wanted)
    return [existing[key] for key in wanted if key in existing]


def add_traces(session: Session, actor: Actor, queue_id: uuid.UUID, refs: Iterable[str]) -> Added:
    """Put whole traces into the queue as people choose them (the console's paste form and the traces
    list's selection): each ref is Redline's id or the external id the tracer gave.

    Unlike `add_items` (the /v2 route, all or none as its document says), the traces found go in and the
    refs that name no trace of the queue's project come back as given, so a person fixes only those. A
    trace already in the queue stays where it is and counts as already there. Refs are read a chunk at a
    time, so a selection of every trace matching a filter is never held whole.
    """
    queue = queue_for(session, actor, queue_id, "write")
    if queue.project_id is None:
        raise Invalid("This queue belongs to no project, so it takes no traces: move it to a project first.")
    done = Added()
    for chunk in batches(refs):
        found = _traces_by_ref(session, queue.project_id, set(chunk))
        wanted = list(dict.fromkeys(found[ref] for ref in chunk if ref in found))
        rows = [
            {
                "type": "span",
                "trace_id": trace_id,
                "span_key": WHOLE_TRACE,
                "datapoint_id": None,
                "added_by_rules": None,
                "added_by": actor.principal_id,
            }
            for trace_id in wanted
        ]
        added = insert_items(session, queue.id, rows)
        done += Added(added, len(wanted) - added, [ref for ref in chunk if ref not in found])
    if done.added:
        touch_queue(session, queue.id, actor.principal_id)
    session.flush()
    return done


def trace_ids(session: Session, actor: Actor, queue_id: uuid.UUID) -> list[uuid.UUID]:
    """The traces the queue holds (whole or by a span), in the order they came, each once: what a
    reward model trained "on a queue" learns from. Datapoint items have no trace and are left out."""
    queue = queue_for(session, actor, queue_id, "read")
    rows = session.scalars(
        select(QueueItem.trace_id)
        .where(QueueItem.queue_id == queue.id, QueueItem.trace_id.is_not(None))
        .order_by(QueueItem.seq)
    )
    return list(dict.fromkeys(trace_id for trace_id in rows if trace_id is not None))


def remove_items(session: Session, actor: Actor, queue_id: uuid.UUID, span_ids: Sequence[str]) -> None:
    """Take out the items of these spans (a trace's id takes out its whole-trace item); ids that name
    nothing in the queue are passed over, so removing twice is harmless."""
    queue = queue_for(session, actor, queue_id, "write")
    wanted = sorted(set(span_ids))
    removed = 0
    for chunk in in_chunks(wanted):
        trace_ids = [parsed for ident in chunk if (parsed := parse_id(ident))]
        removed += delete_items(
            session,
            queue.id,
            or_(
                and_(QueueItem.span_key != WHOLE_TRACE, QueueItem.span_key.in_(chunk)),
                and_(QueueItem.span_key == WHOLE_TRACE, QueueItem.trace_id.in_(trace_ids)),
            ),
        )
    if removed:
        touch_queue(session, queue.id, actor.principal_id)
    session.flush()
