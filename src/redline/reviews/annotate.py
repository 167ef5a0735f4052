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
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, delete, insert, or_, select, update
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import new_id, utcnow
from redline.errors import Invalid, NotFound
from redline.identity.service import Actor
from redline.reviews.schemas import EvaluationIn, ValueIn
from redline.reviews.service import key_not_found, key_rules
from redline.reviews.targets import Place, linked_place, writable_place
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


def _on(place: Place) -> Any:
    """Rows said about exactly this span (or the trace itself, for no span)."""
    where_span = (
        Annotation.span_id.is_(None) if place.span_pk is None else Annotation.span_id == place.span_pk
    )
    return and_(Annotation.trace_id == place.trace_id, where_span)


def _new_row(actor: Actor, place: Place, meta: dict[str, str] | None, **fields: Any) -> Annotation:
    now = utcnow()
    return Annotation(**_new_columns(actor, place, meta, now, fields))


def _new_columns(
    actor: Actor, place: Place, meta: dict[str, str] | None, now: datetime, fields: dict[str, Any]
) -> dict[str, Any]:
    """Every attribute of a new row by the actor on the place, saying `fields`."""
    return {
        "id": new_id(),
        "trace_id": place.trace_id,
        "step_id": None,
        "span_id": place.span_pk,
        "rating": None,
        "comment": None,
        "quote": None,
        "label_error": False,
        "label_error_note": None,
        "meta": meta,
        "author_id": actor.principal_id,
        "author_name": actor.name,
        "created_at": now,
        "updated_at": now,
        **fields,
    }


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


def _result_not_found(actor: Actor, target: Place, ident: str) -> NotFound:
    place = f"span {target.span_key}" if target.span_pk is not None else f"trace {target.trace_id}"
    return NotFound(
        "evaluator-result",
        ident,
        f"The evaluator result with id {ident} on {place} for workspace {actor.workspace_id} was not found.",
    )


def _evaluator_results(
    session: Session, actor: Actor, target: Place, idents: Sequence[str]
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


# What a row written by the request replaces, read as plain columns: the values a person saves on a span
# are the reviews surface's most frequent write (bench/README.md, "The write path").
_MINE_COLUMNS = (
    Annotation.id,
    Annotation.key,
    Annotation.parent_id,
    Annotation.meta,
    Annotation.author_name,
    Annotation.created_at,
)


@dataclass(frozen=True)
class _Kept:
    """One of the actor's rows a request may replace: what the answer shows of it that the request does
    not say again."""

    id: uuid.UUID
    key: str | None
    parent_id: uuid.UUID | None
    meta: dict[str, Any] | None
    author_name: str
    created_at: datetime


@lru_cache(maxsize=64)
def _mine_query(on_span: bool, by_principal: bool, as_identity: bool, keys: bool, results: bool) -> Any:
    """The statement for the actor's rows on one place that a request replaces, built once per shape:
    keys and results are expanding parameters, so one statement serves any number of them."""
    said_by = Annotation.meta["identity_id"].as_string()
    wanted = []
    if keys:
        wanted.append(
            and_(
                Annotation.key.in_(bindparam("keys", expanding=True)),
                Annotation.parent_id.is_(None),
                Annotation.source == HUMAN,
            )
        )
    if results:
        wanted.append(Annotation.parent_id.in_(bindparam("results", expanding=True)))
    return (
        select(*_MINE_COLUMNS)
        .where(
            Annotation.trace_id == bindparam("trace_id"),
            Annotation.span_id == bindparam("span_pk") if on_span else Annotation.span_id.is_(None),
            Annotation.author_id == bindparam("author_id")
            if by_principal
            else Annotation.author_id.is_(None),
            said_by == bindparam("identity") if as_identity else said_by.is_(None),
            or_(*wanted),
        )
        .order_by(Annotation.created_at, Annotation.id)
    )


@dataclass
class _Mine:
    """The actor's rows on one place (for one identity) that a request's values replace, oldest first:
    by key for values, by the evaluator result they correct for corrections."""

    by_key: dict[str, list[_Kept]]
    by_result: dict[uuid.UUID, list[_Kept]]


def _mine(
    session: Session,
    actor: Actor,
    place: Place,
    identity: str | None,
    keys: Sequence[str],
    result_ids: Sequence[uuid.UUID],
) -> _Mine:
    """One query for what a whole request replaces on a place, rather than one per value: building and
    running ten statements was most of a ten-value request's time (bench/README.md, "Reviews"). The
    identity is narrowed in SQL too: a service saving its end users' values keeps a row per end user per
    key on a span, and loading all of them to keep one made a request's cost grow with them."""
    mine = _Mine(defaultdict(list), defaultdict(list))
    if not keys and not result_ids:
        return mine
    query = _mine_query(
        place.span_pk is not None,
        actor.principal_id is not None,
        identity is not None,
        bool(keys),
        bool(result_ids),
    )
    parameters = {
        "trace_id": place.trace_id,
        "span_pk": place.span_pk,
        "author_id": actor.principal_id,
        "identity": identity,
        "keys": list(keys),
        "results": list(result_ids),
    }
    for row in session.connection().execute(query, parameters):
        kept = _Kept(*row)
        if _identity(kept.meta) != identity:
            continue
        if kept.parent_id is not None:
            mine.by_result[kept.parent_id].append(kept)
        else:
            mine.by_key[str(kept.key)].append(kept)
    return mine


_ANNOTATIONS = cast(Table, Annotation.__table__)
_INSERT = insert(_ANNOTATIONS)
_REPLACED_FIELDS = ("key", "value", "explanation", "source", "output_type", "parent_id")
_REPLACE = (
    update(_ANNOTATIONS)
    .where(_ANNOTATIONS.c.id == bindparam("b_id"))
    .values(
        {
            **{name: bindparam(f"b_{name}") for name in _REPLACED_FIELDS},
            "metadata": bindparam("b_metadata"),
            "updated_at": bindparam("b_updated_at"),
        }
    )
)
_DELETE = delete(_ANNOTATIONS).where(_ANNOTATIONS.c.id.in_(bindparam("ids", expanding=True)))


@dataclass(frozen=True)
class Written:
    """A row a request wrote, as it now stands, with the id of the span it is about (`span_key`, None for
    the trace itself). Plain values, not an entity: the rows go in through Core, and building an entity
    per value to answer with cost a ten-value request half a millisecond (bench/README.md)."""

    id: uuid.UUID
    trace_id: uuid.UUID
    span_id: uuid.UUID | None
    span_key: str | None
    key: str | None
    value: Any
    explanation: str | None
    source: str
    output_type: str | None
    parent_id: uuid.UUID | None
    meta: dict[str, Any] | None
    author_id: uuid.UUID | None
    author_name: str
    created_at: datetime
    updated_at: datetime


def _written(columns: dict[str, Any], span_key: str) -> Written:
    return Written(**{name: columns[name] for name in _WRITTEN_COLUMNS}, span_key=span_key or None)


_WRITTEN_COLUMNS = tuple(name for name in Written.__dataclass_fields__ if name != "span_key")


@dataclass
class _Writes:
    """A request's rows, gathered to be written with one statement per kind of change."""

    added: list[dict[str, Any]] = field(default_factory=list)
    replaced: list[dict[str, Any]] = field(default_factory=list)
    removed: list[uuid.UUID] = field(default_factory=list)
    answered: list[Written] = field(default_factory=list)

    def put(
        self,
        actor: Actor,
        place: Place,
        meta: dict[str, str] | None,
        existing: list[_Kept],
        fields: dict[str, Any],
    ) -> None:
        """The actor's `existing` row (the oldest) changed to say `fields`, or a new one when there is
        none; any later duplicates go."""
        now = utcnow()
        if not existing:
            columns = _new_columns(actor, place, meta, now, fields)
            self.added.append(
                {("metadata" if name == "meta" else name): value for name, value in columns.items()}
            )
            self.answered.append(_written(columns, place.span_key))
            return
        row, *extra = existing
        self.replaced.append(
            {
                "b_id": row.id,
                "b_metadata": meta,
                "b_updated_at": now,
                **{f"b_{n}": fields[n] for n in _REPLACED_FIELDS},
            }
        )
        self.removed.extend(duplicate.id for duplicate in extra)
        columns = _new_columns(actor, place, meta, now, fields)
        columns.update(id=row.id, author_name=row.author_name, created_at=row.created_at)
        self.answered.append(_written(columns, place.span_key))

    def write(self, session: Session) -> None:
        connection = session.connection()
        if self.removed:
            connection.execute(_DELETE, {"ids": self.removed})
        if self.replaced:
            connection.execute(_REPLACE, self.replaced)
        if self.added:
            connection.execute(_INSERT, self.added)


def save_values(
    session: Session,
    actor: Actor,
    trace_id: uuid.UUID | str,
    span_key: str,
    values: Sequence[ValueIn],
    metadata: Mapping[str, Any] | None = None,
) -> list[Written]:
    """Save up to 10 values on a span (`span_key` "" for the trace itself), all or none.

    Each is `{key, value}` (the project must define the key and the value must fit it) or
    `{parent_annotation_id, value, explanation?}` (a correction of an evaluator result on this span, of
    the evaluator's output type). Returns the rows written, the propagated ones after the span's own.
    """
    _check_request(values)
    meta = normalise_metadata(metadata)
    target = writable_place(session, actor, trace_id, span_key)
    definitions = key_rules(
        session, target.project_id, [value.key for value in values if value.key is not None]
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

    writes = _Writes()
    log = linked_place(session, target)
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
            writes.put(actor, place, meta, existing, fields)
    writes.write(session)
    return writes.answered


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
    target = writable_place(session, actor, trace_id, span_key)
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
    places = [place for place in (target, linked_place(session, target)) if place is not None]
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
    target = writable_place(session, actor, trace_id, span_key)
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
