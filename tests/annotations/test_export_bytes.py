"""The export's bytes are exactly what the reference makes of each annotation (`str(uuid)`,
`datetime.isoformat()`, orjson) on both stores, whatever the text: SQLite renders its lines itself
(`json_object`) and both stores format ids and times in SQL (`redline.db.wire_text`)."""

from __future__ import annotations

import functools
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from redline.annotations import service as annotation_service
from redline.annotations.export import EXPORT_FIELDS, export_chunks
from redline.annotations.hidden import NOTHING_HIDDEN
from redline.annotations.models import Annotation
from redline.annotations.schemas import AnnotationChange, AnnotationIn, QuoteIn
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.queues.review_export import review_addition
from redline.traces import service as traces
from redline.traces.models import Step, Trace
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import bootstrap_admin
from tests.samples import EXPORT_KEYS

# Text that JSON must escape, or must not: quotes, backslashes, control characters, DEL, non-ASCII,
# the line separators JavaScript minds, a byte-order mark, astral characters. (No NUL: PostgreSQL
# can't keep it and Redline refuses it.)
TRICKY = [
    'say "refund" \\ or / not',
    "tab\t newline\n return\r bell\x07 escape\x1b unit\x1f delete\x7f",
    "ünïcödé — “quoted” 😀 \u2028 \u2029 \ufeff \U0010ffff",
    "",
]
ANSWER = 'The refund of 42 € was issued; say "thanks" \\ mind the tab\there.'


def _reference(session: Session) -> bytes:
    """The export as the code before it wrote it, from ORM objects, line by line."""
    rows = session.execute(
        select(Annotation, Trace.external_id, Step.index)
        .join(Trace, Trace.id == Annotation.trace_id)
        .outerjoin(Step, Step.id == Annotation.step_id)
        .order_by(Annotation.created_at, Annotation.id)
    ).all()
    lines = []
    for annotation, external_id, step_index in rows:
        quote = annotation.quote
        line: dict[str, Any] = {
            "trace_id": str(annotation.trace_id),
            "trace_external_id": external_id,
            "step_index": step_index,
            "rating": annotation.rating,
            "comment": annotation.comment,
            "quote": {key: quote[key] for key in ("text", "prefix", "suffix")} if quote else None,
            "label_error": annotation.label_error,
            "label_error_note": annotation.label_error_note,
            "author": annotation.author_name,
            "created_at": annotation.created_at.isoformat(),
        }
        lines.append(orjson.dumps(line) + b"\n")
    return b"".join(lines)


def _annotations(db: Database) -> None:
    """Annotations with every field and awkward text, times with and without microseconds, and two that
    share a time (the keyset's id then decides)."""
    first = bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        runs = [
            RunIn(
                project_id=first.project.id,
                external_id=external_id,
                status="completed",
                steps=[
                    StepIn(role="system", content="You are a support agent."),
                    StepIn(role="user", content=TRICKY[1]),
                    StepIn(role="assistant", content=ANSWER),
                ],
            )
            for external_id in (TRICKY[0], TRICKY[2], None)
        ]
        stored = ingest.record_runs(session, actor, runs)
        made = []
        for number, run in enumerate(stored):
            steps = traces.get_run(session, actor, run.id).steps
            for text in TRICKY:
                made.append(
                    annotation_service.create(session, actor, run.id, AnnotationIn(rating=1, comment=text))
                )
            quoted = AnnotationIn(
                rating=-1,
                comment=TRICKY[number],
                step_id=steps[2].id,
                quote=QuoteIn(text='say "thanks" \\ mind', prefix="; ", suffix=" the tab\t"),
            )
            made.append(annotation_service.create(session, actor, run.id, quoted))
            made.append(
                annotation_service.create(
                    session, actor, run.id, AnnotationIn(comment="system", step_id=steps[0].id)
                )
            )
        annotation_service.change(
            session, actor, made[0].id, AnnotationChange(label_error=True, label_error_note=TRICKY[2])
        )
        times = [
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
            datetime(2026, 1, 2, 3, 4, 5, 1, tzinfo=UTC),
            datetime(999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
            datetime(2026, 1, 2, 3, 4, 5, 500_000, tzinfo=UTC),
            datetime(2026, 1, 2, 3, 4, 5, 500_000, tzinfo=UTC),
        ]
        for annotation, at in zip(made, times, strict=False):
            session.execute(update(Annotation).where(Annotation.id == annotation.id).values(created_at=at))
        for annotation, name in zip(made[5:], TRICKY, strict=False):
            session.execute(
                update(Annotation).where(Annotation.id == annotation.id).values(author_name=name or "x")
            )


@pytest.mark.parametrize("chunk", [2, annotation_service.EXPORT_CHUNK])
def test_export_bytes_are_the_references(db: Database, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(
        annotation_service, "iter_export", functools.partial(annotation_service.iter_export, chunk=chunk)
    )
    _annotations(db)
    with db.read() as session:
        exported = b"".join(
            export_chunks(session, identity.operator(session), NOTHING_HIDDEN, review_addition)
        )
        expected = _reference(session)
    assert exported.count(b"\n") == 18
    assert exported == expected
    lines = [orjson.loads(line) for line in exported.splitlines()]
    assert all(list(line) == EXPORT_KEYS for line in lines)
    assert list(EXPORT_FIELDS) == EXPORT_KEYS
    assert lines[0]["created_at"] == "0999-12-31T23:59:59.999999+00:00"
    assert lines[1]["created_at"] == "2026-01-02T03:04:05+00:00"


@settings(database=None, max_examples=300)
@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_sqlite_writes_json_text_as_orjson_does(text: str) -> None:
    """SQLite's json_object and orjson escape the same characters the same way (the SQLite export's
    lines depend on it): compact, UTF-8 as is, the short escapes, \\u00XX for other controls."""
    with closing(sqlite3.connect(":memory:")) as connection:
        (line,) = connection.execute("SELECT json_object('k', ?, 'n', ?)", (text, 1)).fetchone()
    assert line.encode() == orjson.dumps({"k": text, "n": 1})
