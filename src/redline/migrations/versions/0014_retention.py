"""Retention: how many days a project keeps its runs' content, and the index its retention pass walks

Revision ID: 0014_retention
Revises: 0013_kept_counts
Create Date: 2026-12-03 07:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_retention"
down_revision = "0013_kept_counts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("projects", sa.Column("retention_days", sa.Integer(), nullable=True))
    op.create_index(
        "ix_traces_project_unerased_started",
        "traces",
        ["project_id", "started_at", "id"],
        sqlite_where=sa.text("erased_at IS NULL"),
        postgresql_where=sa.text("erased_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_traces_project_unerased_started", table_name="traces")
    # DROP COLUMN in place (SQLite 3.35 and later), as 0010 does: a batch copy of `projects` would drop
    # the table, and with it, by its cascades, every run.
    op.drop_column("projects", "retention_days")
