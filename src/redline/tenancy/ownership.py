"""Which rows of each table belong to a workspace, worked out from the schema itself.

A table with a `workspace_id` column says so; any other reaches one through its foreign keys (a run
through its project, a step through its run). Drawing this from the foreign keys rather than from a
list means a new table is exported and deleted with its workspace without anyone remembering to; the
few tables that hold no foreign key are named here with their rule, and `unowned_tables` lets a test
fail on a new one that has neither.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Select, Table, or_, select
from sqlalchemy.orm import Session

from redline.migrations.schema import Base

WORKSPACES = "workspaces"
# Installation-wide tables: the cookie-signing key, and background jobs, which name what they work on
# in their payload and find it gone when its workspace is (a job of a deleted reward model fails once,
# saying so, and is kept for the record like any failed job).
INSTALLATION_TABLES = frozenset({"instance_settings", "jobs"})
# The foreign key a table is reached through when it has several: its project's, then one that is never
# empty (an annotation's run, not its author, who may be gone), then by name, so the choice is stable.
PREFERRED_KEY = "project_id"


@dataclass(frozen=True)
class WorkspaceIds:
    """Ids a kept count without foreign keys is matched by: the workspace's projects and queue rules."""

    projects: list[uuid.UUID]
    rules: list[uuid.UUID]


# Kept counts that carry no foreign key (a count is written on every change and a key would cost each
# write a lookup): whose they are, by the ids they are keyed by.
CountRule = Callable[[Table, WorkspaceIds], ColumnElement[bool]]


def _tally_scope(table: Table, ids: WorkspaceIds) -> ColumnElement[bool]:
    # `corrections.tallies.scope_key`: "<project id>" or "<project id>/<agent or flow id>".
    keys = [str(project) for project in ids.projects]
    return or_(table.c.scope_key.in_(keys), *(table.c.scope_key.startswith(f"{key}/") for key in keys))


def _of_rules(table: Table, ids: WorkspaceIds) -> ColumnElement[bool]:
    return table.c.rule_id.in_(ids.rules)


KEPT_COUNTS: dict[str, CountRule] = {
    "correction_tallies": _tally_scope,
    "queue_rule_counters": _of_rules,
    "rule_result_tallies": _of_rules,
}


def _tables() -> dict[str, Table]:
    return dict(Base.metadata.tables)


def owned_tables() -> list[Table]:
    """Every table holding a workspace's rows, parents before children (the order to write them in)."""
    return [
        table
        for table in Base.metadata.sorted_tables
        if table.name not in INSTALLATION_TABLES and table.name != WORKSPACES
    ]


def unowned_tables() -> list[str]:
    """Tables with neither a way to their workspace nor a rule: what a new table must not be."""
    return [
        table.name
        for table in owned_tables()
        if table.name not in KEPT_COUNTS and _path_key(table, frozenset()) is None
    ]


def _path_key(table: Table, seen: frozenset[str]) -> str | None:
    """The column a table reaches its workspace through: `workspace_id`, or the foreign key to the
    first parent that reaches one (its project's when it has one)."""
    if "workspace_id" in table.c:
        return "workspace_id"
    keys = sorted(
        table.foreign_keys,
        key=lambda key: (key.parent.name != PREFERRED_KEY, bool(key.parent.nullable), key.parent.name),
    )
    for key in keys:
        parent = key.column.table
        if parent.name in seen or parent.name == table.name:
            continue
        if parent.name == WORKSPACES or _path_key(parent, seen | {table.name}) is not None:
            return key.parent.name
    return None


def rows_of(table: Table, workspace_id: uuid.UUID, ids: WorkspaceIds) -> ColumnElement[bool]:
    """The condition that picks a table's rows of one workspace."""
    if table.name in KEPT_COUNTS:
        return KEPT_COUNTS[table.name](table, ids)
    return _condition(table, workspace_id, frozenset())


def _condition(table: Table, workspace_id: uuid.UUID, seen: frozenset[str]) -> ColumnElement[bool]:
    column = _path_key(table, seen)
    if column is None:
        raise LookupError(f"Table {table.name} reaches no workspace.")
    if column == "workspace_id":
        return table.c.workspace_id == workspace_id
    key = next(key for key in table.foreign_keys if key.parent.name == column)
    parent = key.column.table
    parents: Select[tuple[uuid.UUID]] = select(key.column).where(
        _condition(parent, workspace_id, seen | {table.name})
    )
    return table.c[column].in_(parents)


def workspace_ids(session: Session, workspace_id: uuid.UUID) -> WorkspaceIds:
    """The ids the kept counts of a workspace are keyed by."""
    tables = _tables()
    projects, rules = tables["projects"], tables["queue_rules"]
    project_ids = list(session.scalars(select(projects.c.id).where(projects.c.workspace_id == workspace_id)))
    rule_ids = list(
        session.scalars(select(rules.c.rule_id).distinct().where(rules.c.project_id.in_(project_ids)))
    )
    return WorkspaceIds(project_ids, rule_ids)
