"""Read lines stored as annotations, a group at a time: the bulk path that loads labels people already
have (`redline annotations import`, rm-annotations.txt: "import the traces, then post their existing
ratings as annotations").

A group is resolved in a few queries, never a query per line: its runs by id and by external id, its
steps by (run, index), its authors by name, the ids already stored; then the new rows go in with one
executemany and the runs' kept counts move once. Ids stay in the driver's form throughout
(`db.StoredIds`): on SQLite, making a `uuid.UUID` of each id read cost more than the look-ups. Each
line keeps the rules of a create (the service's own checks and sentences); a line that breaks one is
skipped with that sentence, the others stored.

Who wrote it: `author` is kept as written (`author_name`, what every list and export shows). The
author's principal (`author_id`, who may change or delete it as their own) is the workspace's user or
service of exactly that name, if there is one; otherwise none, as for what the operator says at the
CLI, so only a project admin may change it. Names are unique in a workspace, so the match is exact.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Connection, Integer, Table, and_, null, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.annotations.lines import ReadLine, SkippedLine, read_line
from redline.annotations.models import Annotation
from redline.annotations.service import StepFacts, anchored_quote, annotation_row, check_rules, said_of
from redline.db import (
    DriverRows,
    StoredId,
    StoredIds,
    any_of,
    driver_rows,
    insert_missing,
    insert_missing_rows,
    pairs_table,
)
from redline.errors import Invalid
from redline.identity.models import Principal
from redline.identity.service import Actor, require_project_role
from redline.traces import counts as kept_counts
from redline.traces.counts import Said
from redline.traces.models import Step, Trace

UNKNOWN_TRACE = "no run of the project has this trace_id or trace_external_id"
STEP_INDEX_NOT_IN_TRACE = "step_index is not a step of this trace"
# A review value's line names no step or span it was given on, and its key belongs to the project it
# came from: it is re-saved through /v2 or a queue, where the key's rules apply, not stored from a file.
REVIEW_VALUE_NOT_IMPORTED = (
    "a review value (a line with a key) is not imported: save it again on the project's review key"
)

_ANNOTATIONS = cast(Table, Annotation.__table__)
# The columns of an imported annotation's row whose ids are in the driver's form.
_STORED_ID_COLUMNS = frozenset({"id", "trace_id", "step_id", "author_id"})


@dataclass(frozen=True)
class GroupStored:
    """What storing a group did: annotations added, lines whose annotation was already there, and the
    lines skipped with their reasons."""

    stored: int
    already: int
    skipped: list[SkippedLine]


@dataclass(frozen=True)
class _Run:
    id: StoredId
    step_count: int


def store_group(
    session: Session, actor: Actor, project_id: uuid.UUID, lines: Sequence[ReadLine]
) -> GroupStored:
    """Store the lines' annotations on the project's runs; a transaction that may be run again whole
    (a busy store): what it stored before is found and left as it is."""
    project = require_project_role(session, actor, project_id, "write")
    connection = session.connection()
    stored = StoredIds.on(connection)
    rows = resolve_group(connection, stored, project.id, project.workspace_id, lines)
    added = insert_missing(session, _ANNOTATIONS, rows.rows, stored_ids=_STORED_ID_COLUMNS)
    _count_said(session, stored, [(row["trace_id"], _said_of_row(row)) for row in added])
    return GroupStored(len(added), len(lines) - len(rows.skipped) - len(added), rows.skipped)


@dataclass(frozen=True)
class PreparedGroup:
    """A group resolved by a process that reads beside the one that writes (`import_pipeline.py`): its
    rows in the driver's form, what each row adds to its run's counts (the run, ratings, comments), the
    lines skipped, and the lines as read (number, text, identity) for a writer that finds the store
    changed since and must resolve them again in its own transaction; `resolved` is False for lines
    sent as read, unresolved. Plain values: it is pickled."""

    lines: list[tuple[int, bytes, bytes]]
    rows: DriverRows
    said: list[tuple[StoredId, int, int]]
    skipped: list[SkippedLine]
    resolved: bool = True

    def read_again(self) -> list[ReadLine]:
        """The lines, parsed again (each was read before, so each reads)."""
        return [ReadLine(number, read_line(raw), identity, raw) for number, raw, identity in self.lines]


def prepare_group(
    connection: Connection,
    project_id: uuid.UUID,
    workspace_id: uuid.UUID,
    lines: Sequence[ReadLine],
    seen: RunsSeen,
) -> PreparedGroup:
    """The lines resolved on a reading connection and made ready for `store_prepared` (SQLite), the runs
    in `seen` not looked up again."""
    stored = StoredIds.on(connection)
    resolved = resolve_group(connection, stored, project_id, workspace_id, lines, seen)
    said = []
    for row in resolved.rows:
        counted = _said_of_row(row)
        said.append((row["trace_id"], counted.rated, counted.commented))
    return PreparedGroup(
        _as_read(lines),
        driver_rows(_ANNOTATIONS, resolved.rows, connection.dialect, stored_ids=_STORED_ID_COLUMNS),
        said,
        resolved.skipped,
    )


def unprepared_group(lines: Sequence[ReadLine]) -> PreparedGroup:
    """The lines sent as read, for a writer that resolves them itself."""
    return PreparedGroup(_as_read(lines), DriverRows((), []), [], [], resolved=False)


def _as_read(lines: Sequence[ReadLine]) -> list[tuple[int, bytes, bytes]]:
    """What `PreparedGroup.read_again` makes the lines from: each line's number, text and identity."""
    return [(line.number, line.raw, line.identity) for line in lines]


def store_prepared(
    session: Session, actor: Actor, project_id: uuid.UUID, group: PreparedGroup, *, current: bool
) -> GroupStored:
    """Store a prepared group (SQLite). `current` says whether the store is as the group was resolved
    against (no other connection has committed since): if not, the lines are resolved again here, in
    this transaction, as `store_group` does (and so are lines sent unresolved)."""
    if not (current and group.resolved):
        return store_group(session, actor, project_id, group.read_again())
    require_project_role(session, actor, project_id, "write")
    added = insert_missing_rows(session, _ANNOTATIONS, group.rows)
    counted = (group.said[index] for index in added)
    _count_said(
        session,
        StoredIds.on(session.connection()),
        ((run_id, Said(rated=rated, commented=commented)) for run_id, rated, commented in counted),
    )
    return GroupStored(len(added), len(group.lines) - len(group.skipped) - len(added), group.skipped)


@dataclass(frozen=True)
class ResolvedGroup:
    """A group's lines as the rows to insert (each a distinct annotation), and the lines skipped with
    their reasons."""

    rows: list[dict[str, Any]]
    skipped: list[SkippedLine]


def resolve_group(
    connection: Connection,
    stored: StoredIds,
    project_id: uuid.UUID,
    workspace_id: uuid.UUID,
    lines: Sequence[ReadLine],
    seen: RunsSeen | None = None,
) -> ResolvedGroup:
    """What the lines say as the project's annotation rows: each line's run, step and author looked up
    (a few queries for the whole group) and the rules of a create kept, a line that breaks one skipped
    with its sentence. Reads only: the rows are as true as the store read is current."""
    runs = _runs_of(connection, stored, project_id, lines, seen)
    steps = _steps_of(connection, stored, runs, lines)
    authors = _principals(connection, stored, workspace_id, {line.said.author for line in lines})
    rows = []
    ids: set[StoredId] = set()
    skipped: list[SkippedLine] = []
    for line in lines:
        said, run = line.said, runs.get(line.number)
        try:
            if said.key is not None:
                raise Invalid(REVIEW_VALUE_NOT_IMPORTED)
            if run is None:
                raise Invalid(UNKNOWN_TRACE)
            step = None
            if said.step_index is not None:
                step = steps.get((run.id, said.step_index))
                if step is None:
                    raise Invalid(STEP_INDEX_NOT_IN_TRACE)
            check_rules(said.rating, said.comment, step)
            quote = anchored_quote(said.quote, step)
        except Invalid as refused:
            skipped.append(SkippedLine(line.number, refused.message))
            continue
        annotation_id = stored.of_hex(line.annotation_id(stored.hex(run.id)))
        if annotation_id in ids:
            continue  # the same annotation twice in the group (its run named by id, then by external id)
        ids.add(annotation_id)
        rows.append(
            annotation_row(
                annotation_id,
                run.id,
                step,
                said.rating,
                said.comment,
                quote,
                author=(authors.get(said.author), said.author),
                created_at=said.created_at,
                label_error=said.label_error,
                label_error_note=said.label_error_note,
            )
        )
    return ResolvedGroup(rows, skipped)


def _said_of_row(row: dict[str, Any]) -> Said:
    return said_of(row["rating"], row["comment"], label_error=row["label_error"])


def _count_said(session: Session, stored: StoredIds, added: Iterable[tuple[StoredId, Said]]) -> None:
    """The added annotations' runs' kept counts moved, once per run."""
    changes: dict[StoredId, Said] = {}
    for trace_id, said_now in added:
        changes[trace_id] = changes.get(trace_id, Said()) + said_now
    kept_counts.add_said_by_stored_id(session, stored, changes)


@dataclass
class RunsSeen:
    """Runs already looked up, by id and by external id: kept across groups only by a reader whose reads
    stay true while it resolves (`import_pipeline.py`), so a run named again is not looked up again."""

    by_id: dict[StoredId, _Run] = field(default_factory=dict)
    by_external: dict[str, _Run] = field(default_factory=dict)


def _runs_of(
    connection: Connection,
    stored: StoredIds,
    project_id: uuid.UUID,
    lines: Sequence[ReadLine],
    seen: RunsSeen | None = None,
) -> dict[int, _Run]:
    """Each line's run (by line number): the project's run with its trace_id, else the one with its
    trace_external_id; those in `seen` taken from it, those found added to it."""
    seen = seen or RunsSeen()
    dialect = connection.dialect.name
    run_id = stored.column(Trace.id)
    ids = {stored.of(line.said.trace_id) for line in lines if line.said.trace_id is not None}
    named = list(ids - seen.by_id.keys())
    if named:
        query = select(run_id, Trace.step_count).where(
            Trace.project_id == project_id, any_of(run_id, named, dialect)
        )
        found_runs = connection.execute(query).all()
        seen.by_id.update((found_id, _Run(found_id, count)) for found_id, count in found_runs)
    found: dict[int, _Run] = {}
    rest: list[ReadLine] = []
    for line in lines:
        run = seen.by_id.get(stored.of(line.said.trace_id)) if line.said.trace_id is not None else None
        if run is not None:
            found[line.number] = run
        elif line.said.trace_external_id is not None:
            rest.append(line)
    names = list({line.said.trace_external_id or "" for line in rest} - seen.by_external.keys())
    if names:
        by_name = select(Trace.external_id, run_id, Trace.step_count).where(
            Trace.project_id == project_id, any_of(Trace.external_id, names, dialect)
        )
        seen.by_external.update(
            (external, _Run(found_id, count))
            for external, found_id, count in connection.execute(by_name).all()
            if external is not None
        )
    for line in rest:
        run = seen.by_external.get(line.said.trace_external_id or "")
        if run is not None:
            found[line.number] = run
    return found


def _steps_of(
    connection: Connection, stored: StoredIds, runs: dict[int, _Run], lines: Sequence[ReadLine]
) -> dict[tuple[StoredId, int], StepFacts]:
    """The steps the lines name, by (run, index); with their text only where a quote is to be found in it.
    An index past the run's steps is never looked up (nor one too large for the store's integers)."""
    plain: set[tuple[StoredId, int]] = set()
    quoted: set[tuple[StoredId, int]] = set()
    for line in lines:
        run, index = runs.get(line.number), line.said.step_index
        if run is not None and index is not None and index < run.step_count:
            (quoted if line.said.quote is not None else plain).add((run.id, index))
    found: dict[tuple[StoredId, int], StepFacts] = {}
    run_id = stored.column(Step.trace_id)
    for keys, with_text in ((plain - quoted, False), (quoted, True)):
        if not keys:
            continue
        text: ColumnElement[Any] = Step.content.expression if with_text else null()
        wanted, wanted_run, wanted_index = pairs_table(
            list(keys), (run_id.type, Integer()), connection.dialect.name
        )
        query = select(run_id, Step.index, stored.column(Step.id), Step.role, text).select_from(
            wanted.join(Step, and_(run_id == wanted_run, Step.index == wanted_index))
        )
        for run, index, step_id, role, content in connection.execute(query).all():
            found[(run, index)] = StepFacts(step_id, role, content)
    return found


def _principals(
    connection: Connection, stored: StoredIds, workspace_id: uuid.UUID, names: Collection[str]
) -> dict[str, StoredId]:
    """The workspace's principals (users and services) of these names, by name."""
    query = select(Principal.name, stored.column(Principal.id)).where(
        Principal.workspace_id == workspace_id, any_of(Principal.name, list(names), connection.dialect.name)
    )
    return dict(connection.execute(query).all())
