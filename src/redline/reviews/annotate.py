"""Saying things about spans: human review values, corrections of evaluator results, evaluator results.

Who may: the write role in the trace's project. What a value is kept as: one `Annotation` row with the
span, the span's trace, the key, the value and its author.

One value per author per key per span: a person who rates a span again replaces their own value, and
leaves everyone else's alone. The author is the caller's principal together with the `identity_id` the
request's metadata names, so one service key saving its end users' ratings keeps one value per end user.
A correction of an evaluator result is likewise one per author per result. The evaluator's own result
is never changed by a correction: the correction is linked to it (`parent_id`) and shown beside it.

A deployment span that names its log (`targets.LOG_ATTRIBUTE`) passes every value saved on it, and
every removal, on to that log, as the document's "Deployment Span Propagation" asks.

Queues call `save_values` too, to save what a reviewer picks on a queue's review screen.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import new_id, utcnow
from redline.errors import Invalid, NotFound
from redline.identity.service import Actor
from redline.reviews.models import ReviewKey
from redline.reviews.schemas import EvaluationIn, ValueIn
from redline.reviews.service import by_keys, key_not_found
from redline.reviews.targets import Target, find_target, linked_log
from redline.reviews.values import check_correction, check_result, check_value

MAX_ANNOTATIONS = 10
MAX_REMOVED_KEYS = 10
MAX_METADATA_TEXT = 200
HUMAN = "human"
EVALUATOR = "evaluator"

# The metadata fields the document names, in the curl form (camelCase) and as the SDK sends them.
_METADATA_FIELDS = {
    "identity_id": "identity_id",
    "identityId": "identity_id",
    "source": "source",
    "reviewer_id": "reviewer_id",
    "reviewerId": "reviewer_id",
}


def normalise_metadata(metadata: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The attribution a request carries, in snake_case; None when it carries none.

    Absent, `{}`, the SDK's `{identity_id}` and the curl form `{identityId, source, reviewerId}` are
    all accepted; other fields are not the document's and are left out.
    """
    found: dict[str, str] = {}
    for name, value in (metadata or {}).items():
        field = _METADATA_FIELDS.get(name)
        if field is None or value is None:
            continue
        if not isinstance(value, str) or len(value) > MAX_METADATA_TEXT:
            raise Invalid(
                f"metadata.{name}: a string of at most {MAX_METADATA_TEXT} characters.",
                details={"field": f"metadata.{name}"},
            )
        found[field] = value
    return found or None


def _identity(meta: Mapping[str, Any] | None) -> str | None:
    return (meta or {}).get("identity_id")


def _by_author(actor: Actor) -> Any:
    return (
        Annotation.author_id.is_(None)
        if actor.principal_id is None
        else Annotation.author_id == actor.principal_id
    )


def _on(target: Target) -> Any:
    """Rows said about exactly this span (or the trace itself, for no span)."""
    where_span = Annotation.span_id.is_(None) if target.span is None else Annotation.span_id == target.span.id
    return and_(Annotation.trace_id == target.trace.id, where_span)


def _new_row(actor: Actor, target: Target, meta: dict[str, str] | None, **fields: Any) -> Annotation:
    now = utcnow()
    return Annotation(
        id=new_id(),
        trace_id=target.trace.id,
        span_id=target.span.id if target.span is not None else None,
        label_error=False,
        meta=meta,
        author_id=actor.principal_id,
        author_name=actor.name,
        created_at=now,
        updated_at=now,
        **fields,
    )


# ------------------------------------------------------------------------------------------------ checks


def _check_request(values: Sequence[ValueIn]) -> None:
    if not values:
        raise Invalid("annotations: send at least one annotation.", details={"field": "annotations"})
    if len(values) > MAX_ANNOTATIONS:
        raise Invalid(
            f"A request adds at most {MAX_ANNOTATIONS} annotations; this one has {len(values)}.",
            details={"field": "annotations"},
        )
    seen: dict[str, int] = {}
    for index, value in enumerate(values):
        name = value.key if value.key is not None else f"parent_annotation_id {value.parent_annotation_id}"
        what = (
            f'key "{value.key}"'
            if value.key is not None
            else f'parent_annotation_id "{value.parent_annotation_id}"'
        )
        if name in seen:
            raise Invalid(
                f"annotations[{index}]: the {what} is also annotations[{seen[name]}]; "
                "send one value for each.",
                details={"field": f"annotations[{index}]", "index": index},
            )
        seen[name] = index


def _result_not_found(actor: Actor, target: Target, ident: str) -> NotFound:
    place = f"span {target.span_key}" if target.span is not None else f"trace {target.trace.id}"
    return NotFound(
        "evaluator-result",
        ident,
        f"The evaluator result with id {ident} on {place} for workspace {actor.workspace_id} was not found.",
    )


def _evaluator_results(
    session: Session, actor: Actor, target: Target, idents: Sequence[str]
) -> dict[str, Annotation]:
    """The evaluator results on the target these ids name, by id as sent; any other id is not found."""
    parsed: dict[str, uuid.UUID] = {}
    for ident in idents:
        try:
            parsed[ident] = uuid.UUID(ident)
        except ValueError:
            raise _result_not_found(actor, target, ident) from None
    if not parsed:
        return {}
    rows = session.scalars(
        select(Annotation).where(
            _on(target), Annotation.source == EVALUATOR, Annotation.id.in_(list(parsed.values()))
        )
    )
    found = {row.id: row for row in rows}
    results: dict[str, Annotation] = {}
    for ident, parsed_id in parsed.items():
        if parsed_id not in found:
            raise _result_not_found(actor, target, ident)
        results[ident] = found[parsed_id]
    return results


# ------------------------------------------------------------------------------------------------- write


def _own(session: Session, actor: Actor, identity: str | None, where: Any) -> list[Annotation]:
    """The actor's rows (for this identity) matching `where`, oldest first.

    The identity is narrowed in SQL too: a service saving its end users' values keeps a row per end
    user per key on a span, and loading all of them to keep one made a request's cost grow with them.
    """
    said_by = Annotation.meta["identity_id"].as_string()
    rows = session.scalars(
        select(Annotation)
        .where(where, _by_author(actor), said_by.is_(None) if identity is None else said_by == identity)
        .order_by(Annotation.created_at, Annotation.id)
    )
    return [row for row in rows if _identity(row.meta) == identity]


@dataclass
class _Mine:
    """The actor's rows on one place (for one identity) that a request's values replace, oldest first:
    by key for values, by the evaluator result they correct for corrections."""

    by_key: dict[str, list[Annotation]]
    by_result: dict[uuid.UUID, list[Annotation]]


def _mine(
    session: Session,
    actor: Actor,
    place: Target,
    identity: str | None,
    keys: Sequence[str],
    result_ids: Sequence[uuid.UUID],
) -> _Mine:
    """One query for what a whole request replaces on a place, rather than one per value: building and
    running ten statements was most of a ten-value request's time (bench/README.md, "Reviews")."""
    mine = _Mine(defaultdict(list), defaultdict(list))
    wanted = []
    if keys:
        wanted.append(
            and_(Annotation.key.in_(list(keys)), Annotation.parent_id.is_(None), Annotation.source == HUMAN)
        )
    if result_ids:
        wanted.append(Annotation.parent_id.in_(list(result_ids)))
    if not wanted:
        return mine
    for row in _own(session, actor, identity, and_(_on(place), or_(*wanted))):
        if row.parent_id is not None:
            mine.by_result[row.parent_id].append(row)
        else:
            mine.by_key[str(row.key)].append(row)
    return mine


def _put(
    session: Session,
    actor: Actor,
    target: Target,
    meta: dict[str, str] | None,
    existing: list[Annotation],
    fields: dict[str, Any],
) -> Annotation:
    """The actor's `existing` row (the oldest) changed to say `fields`, or a new one when there is none;
    any later duplicates go."""
    if not existing:
        row = _new_row(actor, target, meta, **fields)
        session.add(row)
        return row
    row, *extra = existing
    for name, value in fields.items():
        setattr(row, name, value)
    row.meta = meta
    row.updated_at = utcnow()
    for duplicate in extra:
        session.delete(duplicate)
    return row


def save_values(
    session: Session,
    actor: Actor,
    trace_id: uuid.UUID | str,
    span_key: str,
    values: Sequence[ValueIn],
    metadata: Mapping[str, Any] | None = None,
) -> list[Annotation]:
    """Save up to 10 values on a span (`span_key` "" for the trace itself), all or none.

    Each is `{key, value}` (the project must define the key and the value must fit it) or
    `{parent_annotation_id, value, explanation?}` (a correction of an evaluator result on this span, of
    the evaluator's output type). Returns the rows written, the propagated ones after the span's own.
    """
    _check_request(values)
    meta = normalise_metadata(metadata)
    target = find_target(session, actor, trace_id, span_key, "write", lock=True)
    definitions: dict[str, ReviewKey] = by_keys(
        session, target.trace.project_id, [value.key for value in values if value.key is not None]
    )
    results = _evaluator_results(
        session,
        actor,
        target,
        [value.parent_annotation_id for value in values if value.parent_annotation_id is not None],
    )
    checked: list[tuple[ValueIn, Any]] = []
    for index, value in enumerate(values):
        if value.key is not None:
            if value.key not in definitions:
                raise key_not_found(actor, value.key)
            checked.append((value, check_value(definitions[value.key], value.value, index)))
        else:
            result = results[str(value.parent_annotation_id)]
            checked.append(
                (value, check_correction(str(result.key), str(result.output_type), value.value, index))
            )

    written: list[Annotation] = []
    log = linked_log(session, target, lock=True)
    identity = _identity(meta)
    keys = [value.key for value in values if value.key is not None]
    for place in (target, log):
        if place is None:
            continue
        result_ids = [result.id for result in results.values()] if place is target else []
        mine = _mine(session, actor, place, identity, keys, result_ids)
        for value, stored in checked:
            if value.key is None:
                if place is not target:
                    continue  # the evaluator result is the deployment span's; the log has none to correct
                result = results[str(value.parent_annotation_id)]
                fields = {
                    "key": result.key,
                    "value": stored,
                    "explanation": value.explanation,
                    "source": HUMAN,
                    "output_type": result.output_type,
                    "parent_id": result.id,
                }
                existing = mine.by_result.get(result.id, [])
            else:
                fields = {
                    "key": value.key,
                    "value": stored,
                    "explanation": value.explanation,
                    "source": HUMAN,
                    "output_type": None,
                    "parent_id": None,
                }
                existing = mine.by_key.get(value.key, [])
            written.append(_put(session, actor, place, meta, existing, fields))
    session.flush()
    return written


def remove_values(
    session: Session,
    actor: Actor,
    trace_id: uuid.UUID | str,
    span_key: str,
    *,
    keys: Sequence[str] = (),
    parent_annotation_ids: Sequence[str] = (),
    metadata: Mapping[str, Any] | None = None,
) -> int:
    """Take back the actor's own values under `keys` and corrections of the evaluator results named.

    With an `identity_id` in the metadata only that identity's are taken back, otherwise all of the
    actor's. Keys whose definition is gone can still be removed; naming something not there removes
    nothing. Returns how many rows went.
    """
    if not keys and not parent_annotation_ids:
        raise Invalid(
            "Name the keys whose values to remove, or the parent_annotation_ids whose corrections to remove.",
            details={"field": "keys"},
        )
    for name, given in (("keys", keys), ("parent_annotation_ids", parent_annotation_ids)):
        if len(given) > MAX_REMOVED_KEYS:
            raise Invalid(
                f"A request removes at most {MAX_REMOVED_KEYS} {name}; this one names {len(given)}.",
                details={"field": name},
            )
    identity = _identity(normalise_metadata(metadata))
    target = find_target(session, actor, trace_id, span_key, "write", lock=True)
    parent_ids: list[uuid.UUID] = []
    for ident in parent_annotation_ids:
        try:
            parent_ids.append(uuid.UUID(ident))
        except ValueError:
            continue
    said = or_(
        and_(Annotation.key.in_(list(keys)), Annotation.parent_id.is_(None)),
        Annotation.parent_id.in_(parent_ids),
    )
    places = [place for place in (target, linked_log(session, target, lock=True)) if place is not None]
    removed = 0
    for place in places:
        for row in session.scalars(
            select(Annotation).where(_on(place), _by_author(actor), Annotation.source == HUMAN, said)
        ):
            if identity is None or _identity(row.meta) == identity:
                session.delete(row)
                removed += 1
    session.flush()
    return removed


def record_evaluation(
    session: Session, actor: Actor, trace_id: uuid.UUID | str, span_key: str, body: EvaluationIn
) -> Annotation:
    """Record an evaluator's result on a span: one per evaluator per span.

    Recording it again with the same output type changes the value in place, so people's corrections
    stay linked to it; with another output type it is a new result, and the old one goes with its
    corrections, which were of the old type.
    """
    target = find_target(session, actor, trace_id, span_key, "write", lock=True)
    value = check_result(body.output_type, body.value)
    existing = session.scalars(
        select(Annotation)
        .where(_on(target), Annotation.source == EVALUATOR, Annotation.key == body.evaluator)
        .order_by(Annotation.created_at, Annotation.id)
    ).all()
    kept = next((row for row in existing if row.output_type == body.output_type), None)
    for row in existing:
        if row is not kept:
            session.delete(row)
    if kept is None:
        kept = _new_row(
            actor,
            target,
            None,
            key=body.evaluator,
            value=value,
            explanation=body.explanation,
            source=EVALUATOR,
            output_type=body.output_type,
        )
        session.add(kept)
    else:
        kept.value = value
        kept.explanation = body.explanation
        kept.updated_at = utcnow()
    session.flush()
    return kept
