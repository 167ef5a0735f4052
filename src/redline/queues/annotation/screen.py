"""What the console's review screen shows of the item a reviewer is on, read in a handful of queries.

The annotation-queues document's screen has three panels: Inputs (the trace's mapped variables),
Metrics (latency, cost, tokens) and Task (model, provider, other settings) on the left, the whole
interaction in the centre, and the Annotations panel (the queue's human reviews, a comment, evaluator
results with their corrections) on the right. The console renders it; this module only reads, through
`navigation.step` for the place (one index seek however long the queue), then one trace's rows.

A trace that does not record something (no token counts, no cost) leaves it None: the screen says "not
recorded" rather than showing a number nobody measured.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import in_chunks
from redline.identity.models import Project
from redline.identity.service import Actor, holds, principal_names, project_role
from redline.queues.annotation.blind import blindness, hidden_from
from redline.queues.annotation.navigation import Place, step
from redline.queues.annotation.places import REVIEWED, Standing, standing
from redline.queues.annotation.reviewers import reviews_queue
from redline.queues.annotation.service import queue_for, review_keys
from redline.queues.models import Queue, QueueItem, QueueItemReviewer
from redline.reviews.models import ReviewKey
from redline.reviews.said import Said, own_value, said_about
from redline.traces.attributes import (
    COST,
    INPUT_TOKENS,
    MODEL_ATTRIBUTES,
    OUTPUT_TOKENS,
    PROVIDER_ATTRIBUTES,
    TOTAL_TOKENS,
    number_attribute,
    text_attribute,
)
from redline.traces.models import Span, Step, Trace
from redline.traces.service import producer_names

# Configuration a Task panel shows beside model and provider, as tracers name it.
SETTINGS = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "max_output_tokens",
    "seed",
    "stop",
    "frequency_penalty",
    "presence_penalty",
    "response_format",
    "tool_choice",
)
_SETTING_PREFIXES = ("gen_ai.request.", "llm.invocation_parameters.")


@dataclass(frozen=True)
class Metrics:
    """None where the trace records nothing: the screen says so rather than inventing a zero."""

    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost: float | None


@dataclass
class ItemScreen:
    """Everything the review screen shows of one item; `trace` None past either end of the queue."""

    queue: Queue
    place: Place
    can_write: bool
    keys: list[ReviewKey]
    trace: Trace | None = None
    agent_name: str | None = None
    span: Span | None = None
    steps: list[Step] = field(default_factory=list)
    inputs: list[tuple[str, Any]] = field(default_factory=list)
    metrics: Metrics | None = None
    task: list[tuple[str, str]] = field(default_factory=list)
    # The reviewer's own value of each of the queue's keys on the item, by key.
    mine: dict[str, Any] = field(default_factory=dict)
    # Everyone else's values on the item, but those blind review hides from the actor.
    others: list[Said] = field(default_factory=list)
    evaluations: list[Said] = field(default_factory=list)
    comments: list[Annotation] = field(default_factory=list)
    # Whether the actor may review the queue (write, and one of its reviewers), and where the item on
    # screen stands for them: their own part, and its places done and held by others.
    can_review: bool = False
    standing: Standing | None = None
    # Whether the others' values are hidden from the actor here until they have saved their own (blind.py).
    blinded: bool = False


def may_write(session: Session, actor: Actor, queue: Queue) -> bool:
    """Whether the actor may save reviews in this queue (write in its project), so the screen offers
    controls only to those who may use them."""
    if queue.project_id is None:
        return actor.workspace_admin
    project = session.get(Project, queue.project_id)
    return project is not None and holds(project_role(session, actor, project), "write")


def item_screen(session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID | None) -> ItemScreen:
    """The screen of an item (none: the queue's first), placed by `navigation.step`; read access to the
    queue is enough to see it. Moving along the queue is the page's: it steps, then shows where it landed."""
    place = step(session, actor, queue_id, item_id=item_id)
    queue = queue_for(session, actor, queue_id, "read")
    screen = ItemScreen(queue, place, may_write(session, actor, queue), review_keys(session, queue))
    item = place.item
    if item is not None:
        screen.can_review = reviews_queue(session, actor, queue)
        screen.standing = standing(session, actor, item, queue.reviewers_per_item)
        screen.blinded = blindness(session, actor).blinds(queue.id) and screen.standing.mine != REVIEWED
    if item is None or item.trace_id is None:
        return screen
    trace = session.get(Trace, item.trace_id)
    if trace is None:
        return screen
    _fill(session, actor, screen, item, trace)
    return screen


def _fill(session: Session, actor: Actor, screen: ItemScreen, item: QueueItem, trace: Trace) -> None:
    screen.trace = trace
    agents, flows = producer_names(session, [trace])
    screen.agent_name = agents.get(trace.agent_id) if trace.agent_id else flows.get(trace.flow_id)  # type: ignore[arg-type]
    screen.steps = list(session.scalars(select(Step).where(Step.trace_id == trace.id).order_by(Step.index)))
    spans = list(session.scalars(select(Span).where(Span.trace_id == trace.id)))
    if item.span_key:
        screen.span = next((span for span in spans if span.span_id == item.span_key), None)
        spans = _with_descendants(spans, item.span_key)
    screen.inputs = named_inputs(trace.input)
    screen.metrics = _metrics(trace, screen.span, spans)
    screen.task = _task(trace, screen.agent_name, spans)
    target = item.span_key or None
    for said in said_about(session, [trace.id], hidden_from(session, actor))[trace.id]:
        annotation = said.annotation
        if said.is_evaluation:
            if target is None or said.span_key == target:
                screen.evaluations.append(said)
        elif said.span_key == target:
            if own_value(said, actor):
                screen.mine[str(annotation.key)] = annotation.value
            else:
                screen.others.append(said)
    screen.comments = list(
        session.scalars(
            select(Annotation)
            .where(
                Annotation.trace_id == trace.id,
                Annotation.step_id.is_(None),
                Annotation.key.is_(None),
                Annotation.comment.is_not(None),
            )
            .order_by(Annotation.created_at, Annotation.id)
        )
    )


def _with_descendants(spans: Sequence[Span], root: str) -> list[Span]:
    """The span an item names and every span under it: what its metrics and task are about."""
    children: dict[str | None, list[Span]] = {}
    for span in spans:
        children.setdefault(span.parent_span_id, []).append(span)
    picked = [span for span in spans if span.span_id == root]
    queue = list(picked)
    seen = {root}
    while queue:
        for child in children.get(queue.pop().span_id, []):
            if child.span_id not in seen:
                seen.add(child.span_id)
                picked.append(child)
                queue.append(child)
    return picked


def named_inputs(value: Any) -> list[tuple[str, Any]]:
    """Inputs as named variables (a trace's input, or an experiment result's copy of its datapoint's): an
    object's fields, or the whole value as `input`."""
    if value is None:
        return []
    if isinstance(value, dict):
        return list(value.items())
    return [("input", value)]


def _total(values: Iterable[float | None]) -> float | None:
    found = [value for value in values if value is not None]
    return sum(found) if found else None


def _metrics(trace: Trace, span: Span | None, spans: Sequence[Span]) -> Metrics:
    started, ended = (
        (span.started_at, span.ended_at) if span is not None else (trace.started_at, trace.ended_at)
    )
    latency = (ended - started).total_seconds() * 1000 if started is not None and ended is not None else None
    attributes = [span.attributes or {} for span in spans]
    if span is None and trace.meta:
        attributes.append(trace.meta)
    tokens_in = _total(number_attribute(one, INPUT_TOKENS) for one in attributes)
    tokens_out = _total(number_attribute(one, OUTPUT_TOKENS) for one in attributes)
    total = _total(number_attribute(one, TOTAL_TOKENS) for one in attributes)
    if total is None and (tokens_in is not None or tokens_out is not None):
        total = (tokens_in or 0) + (tokens_out or 0)
    return Metrics(
        latency_ms=latency,
        input_tokens=int(tokens_in) if tokens_in is not None else None,
        output_tokens=int(tokens_out) if tokens_out is not None else None,
        total_tokens=int(total) if total is not None else None,
        cost=_total(number_attribute(one, COST) for one in attributes),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _task(trace: Trace, agent_name: str | None, spans: Sequence[Span]) -> list[tuple[str, str]]:
    """Model, provider and settings as the spans name them (first found), with the agent and version."""
    found: dict[str, str] = {}
    for span in spans:
        attributes = span.attributes or {}
        for label, names in (("Model", MODEL_ATTRIBUTES), ("Provider", PROVIDER_ATTRIBUTES)):
            named = text_attribute(attributes, names)
            if label not in found and named is not None:
                found[label] = named
        for name, value in attributes.items():
            setting = name
            for prefix in _SETTING_PREFIXES:
                setting = setting.removeprefix(prefix)
            if setting in SETTINGS and setting not in found and value is not None:
                found[setting] = _text(value)
    task: list[tuple[str, str]] = [
        (label, found.pop(label)) for label in ("Model", "Provider") if label in found
    ]
    if agent_name:
        task.append(("Agent", agent_name))
    if trace.agent_version:
        task.append(("Version", trace.agent_version))
    task.extend(sorted(found.items()))
    return task


# ----------------------------------------------------------------------------------------- the queue page


@dataclass(frozen=True)
class ItemRow:
    """One line of a queue's page: the item, its trace's title, who reviewed it (the last of its
    reviewers) and how many of its reviewers are done."""

    item: QueueItem
    title: str | None
    reviewer: str | None
    reviewers_done: int = 0


def item_rows(session: Session, items: Sequence[QueueItem]) -> list[ItemRow]:
    """A page of items with their traces' titles, reviewers' names and how many people are done with
    each, in three queries for the page."""
    done: dict[uuid.UUID, int] = {}
    for chunk in in_chunks([item.id for item in items]):
        for item_id, count in session.execute(
            select(QueueItemReviewer.item_id, func.count())
            .where(QueueItemReviewer.item_id.in_(chunk), QueueItemReviewer.state == REVIEWED)
            .group_by(QueueItemReviewer.item_id)
        ):
            done[item_id] = count
    trace_ids = [item.trace_id for item in items if item.trace_id is not None]
    titles: dict[uuid.UUID, str | None] = {}
    for chunk in in_chunks(trace_ids):
        for trace_id, title, external_id in session.execute(
            select(Trace.id, Trace.title, Trace.external_id).where(Trace.id.in_(chunk))
        ):
            titles[trace_id] = title or external_id
    names = principal_names(session, [item.reviewed_by for item in items if item.reviewed_by is not None])
    return [
        ItemRow(
            item,
            titles.get(item.trace_id) if item.trace_id else None,
            names.get(item.reviewed_by) if item.reviewed_by else None,
            done.get(item.id, 0),
        )
        for item in items
    ]


def progress(session: Session, actor: Actor, queue_id: uuid.UUID) -> tuple[int, int]:
    """(items, reviewed) as the queue's row says now: its counters change by SQL updates during a save,
    so the row is read again rather than taken from the session."""
    queue = queue_for(session, actor, queue_id, "read")
    session.refresh(queue, ["items_count", "reviewed_count"])
    return queue.items_count, queue.reviewed_count
