"""Erasing runs' content, for one run on request (`service.erase_run`) or a retention pass's batch
(`retention.erase_expired`): the same statements for one run or a thousand, so a pass costs a few
statements per batch rather than several per run.

What identifies a run stays (its id, project, agent, version, status, times, step and span structure),
and so does everything people said about it: annotations point at its steps and spans, which stay as
rows without their content, and corrections keep their own copies of the input and output.

On SQLite an erased row also moves to the end of its table (`_move_to_the_end`). Blanking a row in place
leaves its page allocated and mostly empty, and SQLite merges pages only as rows leave them: runs are
stored in the order they arrived, so the rows of a batch of old runs fill whole pages, and moving them
empties those pages whole, which the incremental vacuum then hands back to the file system.
PostgreSQL's autovacuum reuses the space of a row updated in place, so there nothing moves.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Uuid, bindparam, delete, func, select, text, update
from sqlalchemy.orm import Session

from redline.db import in_chunks, utcnow
from redline.traces import metadata_index
from redline.traces.models import OtlpResource, OtlpScope, Span, Step, Trace


def erase_contents(session: Session, project_id: uuid.UUID, run_ids: Sequence[uuid.UUID]) -> None:
    """Remove these runs' content (input, output, metadata, title, step and span content) in place; a run
    erased before keeps when it was first erased."""
    now = utcnow()
    for chunk in in_chunks(sorted(set(run_ids))):
        session.execute(
            update(Trace)
            .where(Trace.id.in_(chunk))
            .values(
                input=None,
                output=None,
                meta=None,
                title=None,
                erased_at=func.coalesce(Trace.erased_at, now),
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        session.execute(
            update(Step)
            .where(Step.trace_id.in_(chunk))
            .values(content="", tool_input=None, meta=None)
            .execution_options(synchronize_session=False)
        )
        _erase_spans(session, chunk)
        if session.get_bind().dialect.name == "sqlite":
            for table, column in (("traces", "id"), ("steps", "trace_id"), ("spans", "trace_id")):
                _move_to_the_end(session, table, column, chunk)
    session.flush()
    metadata_index.reindex(session, [project_id], run_ids)


def _erase_spans(session: Session, run_ids: Sequence[uuid.UUID]) -> None:
    """Span content goes with the run's: attributes, events, links and status text, and the raw store's
    resource and scope rows once no other span of the project refers to them."""
    was = session.execute(
        select(Span.resource_id, Span.scope_id).where(Span.trace_id.in_(run_ids)).distinct()
    ).all()
    session.execute(
        update(Span)
        .where(Span.trace_id.in_(run_ids))
        .values(
            attributes=None,
            events=None,
            links=None,
            status_message=None,
            trace_state=None,
            resource_id=None,
            scope_id=None,
            # A digest of what was erased: it could confirm a guess, and it keys the span cache.
            content_hash=None,
        )
        .execution_options(synchronize_session=False)
    )
    for model, column, ids in (
        (OtlpResource, Span.resource_id, {resource for resource, _ in was if resource is not None}),
        (OtlpScope, Span.scope_id, {scope for _, scope in was if scope is not None}),
    ):
        if ids:
            still_used = select(column).where(column.in_(ids))
            session.execute(delete(model).where(model.id.in_(ids), model.id.not_in(still_used)))


def _move_to_the_end(session: Session, table: str, run_column: str, run_ids: Sequence[uuid.UUID]) -> None:
    """Give these runs' rows of a SQLite table new rowids past the table's last, in the order they had:
    each row is rewritten, small now, at the end of the table, and the pages it left are free. Rows are
    keyed by their `id` column, which stays, so nothing that points at them (annotations, spans' steps)
    notices; the rowid is SQLite's own and nothing in Redline reads it."""
    last = session.scalar(text(f"SELECT max(rowid) FROM {table}")) or 0
    session.execute(
        text(
            f"UPDATE {table} SET rowid = moved.fresh FROM ("
            f"SELECT rowid AS old, :last + row_number() OVER (ORDER BY rowid) AS fresh "
            f"FROM {table} WHERE {run_column} IN :runs) AS moved "
            f"WHERE {table}.rowid = moved.old"
        ).bindparams(bindparam("runs", expanding=True, type_=Uuid())),
        {"last": last, "runs": list(run_ids)},
    )
