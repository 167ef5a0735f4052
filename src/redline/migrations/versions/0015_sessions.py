"""Sessions: each run's session (conversation) id, filled from the metadata of the runs there were, and
the index a session's runs are read from in time order

Revision ID: 0015_sessions
Revises: 0014_retention
Create Date: 2026-12-04 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_sessions"
down_revision = "0014_retention"
branch_labels = None
depends_on = None

# `redline.traces.session_ids.session_id_of` over stored metadata, on each store: non-empty text, or a
# number as JSON writes it, of at most 200 characters; anything else names no session. A revision
# imports no Redline code, so the rule is written out here.
BACKFILL = {
    "sqlite": (
        "UPDATE traces SET session_id = CAST(json_extract(metadata, '$.session_id') AS TEXT) "
        "WHERE json_type(metadata, '$.session_id') IN ('text', 'integer', 'real') "
        "AND length(CAST(json_extract(metadata, '$.session_id') AS TEXT)) BETWEEN 1 AND 200"
    ),
    "postgresql": (
        "UPDATE traces SET session_id = metadata ->> 'session_id' "
        "WHERE jsonb_typeof(metadata -> 'session_id') IN ('string', 'number') "
        "AND length(metadata ->> 'session_id') BETWEEN 1 AND 200"
    ),
}


def upgrade() -> None:
    # Plain ADD COLUMN without a default: instant on both stores, never a table rebuild (0010).
    op.add_column("traces", sa.Column("session_id", sa.String(length=200), nullable=True))
    # One statement, writing only the runs that name a session: the migration holds the store anyway
    # (SQLite's write lock; on PostgreSQL one transaction), and one pass over the table costs less than
    # batches that each find their place again. The index comes after, built once from the filled column
    # rather than kept up by every row the backfill writes.
    op.execute(BACKFILL[op.get_bind().dialect.name])
    op.create_index(
        "ix_traces_project_session_started",
        "traces",
        ["project_id", "session_id", "started_at", "id"],
        sqlite_where=sa.text("session_id IS NOT NULL"),
        postgresql_where=sa.text("session_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_traces_project_session_started", table_name="traces")
    # DROP COLUMN in place (SQLite 3.35 and later), as 0010 does.
    op.drop_column("traces", "session_id")
