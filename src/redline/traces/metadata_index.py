"""Indexed metadata: the keys a project declares it filters runs on, and the side table that keeps each
run's value of each such key (`run_metadata_values`), so a search on one walks an index in the run
list's order instead of reading every run's JSON.

Exact by construction: a value is copied from the run's row by the very expression the unindexed filter
compares (`metadata_text`), in SQL, so both answers agree on each store however the store renders
numbers, booleans or nested values. Every write of runs calls `reindex` with the runs it wrote
(store_runs, OTLP re-derivation, erasure); deleting a run deletes its values by foreign key.

A key is declared `backfilling`: from then on writes keep it, and a background job
(`redline.traces.metadata_backfill`) indexes the runs the project already had; searches use it once
it is `ready`. Removing a key drops its values.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import ColumnElement, String, Table, and_, case, delete, func, insert, literal, or_, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.orm import Session

from redline.db import Unindexed, in_chunks, new_id, utcnow
from redline.errors import Conflict, Invalid, NotFound
from redline.identity.service import Actor, require_project_role
from redline.jobs import service as jobs
from redline.traces.models import IndexedMetadataKey, RunMetadataValue, Trace

BACKFILLING = "backfilling"
READY = "ready"
BACKFILL_JOB = "metadata-backfill"
# Each declared key costs every write of the project's runs a statement: a sane few, not one per field.
MAX_INDEXED_KEYS = 20
# Key and value lengths that keep an index entry inside PostgreSQL's B-tree row limit (about 2.7 kB)
# at four bytes a character. A longer value is kept as NULL: present, not looked up.
MAX_KEY_LENGTH = 100
MAX_INDEXED_VALUE = 400

VALUES = cast(Table, RunMetadataValue.__table__)


def metadata_text(key: str) -> ColumnElement[Any]:
    """A run's metadata value as text, on both stores: strings as they are, numbers as JSON writes them.
    What a `metadata.<key>` filter compares, and what the side table keeps."""
    return sql_cast(Trace.meta[key].as_string(), String)


@dataclass(frozen=True)
class KeyView:
    """A declared key and how far its backfill has got."""

    row: IndexedMetadataKey

    @property
    def progress(self) -> float:
        if self.row.state == READY:
            return 1.0
        return min(1.0, self.row.runs_done / self.row.runs_total) if self.row.runs_total else 0.0


def _key_not_found(project_id: uuid.UUID, key: str) -> NotFound:
    return NotFound(
        "indexed-metadata-key", key, f'Project "{project_id}" does not index the metadata key "{key}".'
    )


def _checked_key(key: str) -> str:
    if not key or len(key) > MAX_KEY_LENGTH:
        raise Invalid(f"key: a metadata key of 1 to {MAX_KEY_LENGTH} characters.", details={"field": "key"})
    return key


def list_keys(session: Session, actor: Actor, project_id: uuid.UUID) -> list[KeyView]:
    """The project's declared keys, by name."""
    require_project_role(session, actor, project_id, "read")
    query = select(IndexedMetadataKey).where(IndexedMetadataKey.project_id == project_id)
    return [KeyView(row) for row in session.scalars(query.order_by(IndexedMetadataKey.key))]


def get_key(session: Session, actor: Actor, project_id: uuid.UUID, key: str) -> KeyView:
    require_project_role(session, actor, project_id, "read")
    return KeyView(_row(session, project_id, key))


def _row(session: Session, project_id: uuid.UUID, key: str) -> IndexedMetadataKey:
    row = session.scalar(
        select(IndexedMetadataKey).where(
            IndexedMetadataKey.project_id == project_id, IndexedMetadataKey.key == key
        )
    )
    if row is None:
        raise _key_not_found(project_id, key)
    return row


def declare_key(session: Session, actor: Actor, project_id: uuid.UUID, key: str) -> KeyView:
    """Index `key` for the project (a project admin's choice): ready at once for a project without runs,
    else backfilling, with the job that indexes its runs queued in this transaction."""
    require_project_role(session, actor, project_id, "admin")
    key = _checked_key(key)
    declared = list_keys(session, actor, project_id)
    if any(view.row.key == key for view in declared):
        raise Conflict(
            f'The metadata key "{key}" is indexed already.',
            code="indexed-metadata-key-exists",
            details={"key": key},
        )
    if len(declared) >= MAX_INDEXED_KEYS:
        raise Conflict(
            f"A project indexes at most {MAX_INDEXED_KEYS} metadata keys: remove one first.",
            code="indexed-metadata-keys-full",
            details={"limit": MAX_INDEXED_KEYS},
        )
    total = session.scalar(select(func.count()).select_from(Trace).where(Trace.project_id == project_id)) or 0
    now = utcnow()
    row = IndexedMetadataKey(
        id=new_id(),
        project_id=project_id,
        key=key,
        state=BACKFILLING if total else READY,
        runs_total=total,
        runs_done=0,
        declared_at=now,
        ready_at=None if total else now,
    )
    session.add(row)
    session.flush()
    if total:
        jobs.enqueue(
            session, BACKFILL_JOB, {"key_id": str(row.id)}, subject=f"metadata-key:{row.id}", max_attempts=10
        )
    return KeyView(row)


def remove_key(session: Session, actor: Actor, project_id: uuid.UUID, key: str) -> None:
    """Stop indexing `key`: its values go, and searches on it read every run's JSON again."""
    require_project_role(session, actor, project_id, "admin")
    row = _row(session, project_id, key)
    session.execute(delete(VALUES).where(VALUES.c.project_id == project_id, VALUES.c.key == key))
    session.delete(row)
    session.flush()


def ready_keys(session: Session, project_ids: Collection[uuid.UUID], keys: Collection[str]) -> set[str]:
    """Those of `keys` that are indexed and ready in every one of the projects: what a search over
    them may answer from the index."""
    if not project_ids or not keys:
        return set()
    rows = session.execute(
        select(IndexedMetadataKey.key, func.count())
        .where(
            IndexedMetadataKey.project_id.in_(list(project_ids)),
            IndexedMetadataKey.key.in_(list(keys)),
            IndexedMetadataKey.state == READY,
        )
        .group_by(IndexedMetadataKey.key)
    )
    return {key for key, count in rows if count == len(set(project_ids))}


# ---------------------------------------------------------------------------------------- keeping exact


def reindex(session: Session, project_ids: Iterable[uuid.UUID], run_ids: Collection[uuid.UUID]) -> None:
    """Bring the side table up to date with these runs' rows as written (in these projects): what every
    write of runs calls once the rows are in. One small read when the projects index nothing."""
    projects = sorted(set(project_ids))
    if not projects or not run_ids:
        return
    declared: dict[uuid.UUID, list[str]] = {}
    for project_id, key in session.execute(
        select(IndexedMetadataKey.project_id, IndexedMetadataKey.key).where(
            IndexedMetadataKey.project_id.in_(projects)
        )
    ):
        declared.setdefault(project_id, []).append(key)
    if not declared:
        return
    ids = sorted(set(run_ids))
    for chunk in in_chunks(ids):
        session.execute(delete(VALUES).where(VALUES.c.run_id.in_(chunk)))
        for project_id, keys in declared.items():
            for key in keys:
                _copy_values(session, project_id, key, chunk)


def reindex_key(session: Session, project_id: uuid.UUID, key: str, run_ids: Collection[uuid.UUID]) -> None:
    """The side table's rows of one key brought up to date for these runs: a backfill's batch."""
    ids = sorted(set(run_ids))
    for chunk in in_chunks(ids):
        session.execute(delete(VALUES).where(VALUES.c.key == key, VALUES.c.run_id.in_(chunk)))
        _copy_values(session, project_id, key, chunk)


def _copy_values(session: Session, project_id: uuid.UUID, key: str, run_ids: Collection[uuid.UUID]) -> None:
    """INSERT … SELECT of the key's values from the runs' rows: the filter's own expression, so the index
    holds what the unindexed filter would compare, on each store."""
    value = metadata_text(key)
    kept = case((func.length(value) <= MAX_INDEXED_VALUE, value), else_=None)
    session.execute(
        insert(VALUES).from_select(
            ["run_id", "key", "project_id", "value", "started_at"],
            select(Trace.id, literal(key, String), Trace.project_id, kept, Trace.started_at).where(
                Trace.id.in_(list(run_ids)),
                # Checked on each row found by id: SQLite, without statistics, would otherwise walk
                # every run of the project by a project index (at a million runs, half a second a batch).
                Unindexed(Trace.project_id.expression) == project_id,
                value.is_not(None),
            ),
        )
    )


# ------------------------------------------------------------------------------------------- searching


def indexable(values: Collection[str]) -> bool:
    """Whether the index can answer a filter on these values: none longer than it keeps."""
    return all(len(value) <= MAX_INDEXED_VALUE for value in values)


def matching_runs(
    project_ids: Collection[uuid.UUID], key: str, values: Collection[str], *, negated: bool
) -> Any:
    """The ids of runs (in the projects) whose indexed `key` is one of `values`, or with `negated`, has a
    value and none of them: the unindexed filter's answer, missing keys matching neither way."""
    where = [VALUES.c.project_id.in_(list(project_ids)), VALUES.c.key == key]
    if negated:
        where.append(or_(VALUES.c.value.is_(None), VALUES.c.value.not_in(list(values))))
    else:
        where.append(VALUES.c.value.in_(list(values)))
    return select(VALUES.c.run_id).where(and_(*where))
