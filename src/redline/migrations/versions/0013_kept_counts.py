"""Counts kept on write: each project's listed runs (the rm list's total), and on each run what was said
about it (unflagged ratings, comments, live corrections), with the indexes the lists walk

Revision ID: 0013_kept_counts
Revises: 0012_indexed_metadata
Create Date: 2026-12-02 17:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_kept_counts"
down_revision = "0012_indexed_metadata"
branch_labels = None
depends_on = None

# Each count on a run, its partial index's name part, and what it counts (as the services keep it).
SAID = (
    ("rated_count", "rated", "rating IS NOT NULL AND label_error = false", "annotations", "trace_id"),
    ("comment_count", "commented", "comment IS NOT NULL", "annotations", "trace_id"),
    (
        "correction_count",
        "corrected",
        "superseded_by IS NULL AND unregistered_at IS NULL",
        "corrections",
        "run_id",
    ),
)


def upgrade() -> None:
    op.create_table(
        "project_run_counts",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("listed", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_run_counts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_project_run_counts")),
    )
    # Plain ADD COLUMN with a constant default: instant on both stores, never a table rebuild (0010).
    for column, _, _, _, _ in SAID:
        op.add_column("traces", sa.Column(column, sa.Integer(), server_default=sa.text("0"), nullable=False))
    # Listed as the lists show runs: hidden ones left out, erased ones in.
    op.execute(
        "INSERT INTO project_run_counts (project_id, listed) "
        "SELECT project_id, COUNT(*) FROM traces WHERE hidden = false GROUP BY project_id"
    )
    for column, _, counted, table, key in SAID:
        # Only the runs something was said about are written: on a large store the rest keep their 0.
        op.execute(
            f"UPDATE traces SET {column} = "
            f"(SELECT COUNT(*) FROM {table} WHERE {table}.{key} = traces.id AND {counted}) "
            f"WHERE id IN (SELECT {key} FROM {table} WHERE {counted})"
        )
    op.create_index(
        "ix_traces_listed_project_created",
        "traces",
        ["project_id", "created_at", "id", "hidden"],
        sqlite_where=sa.text("hidden = 0"),
        postgresql_where=sa.text("NOT hidden"),
    )
    for column, name, _, _, _ in SAID:
        where = sa.text(f"{column} > 0")
        op.create_index(
            f"ix_traces_project_{name}_started",
            "traces",
            ["project_id", "started_at", "id"],
            sqlite_where=where,
            postgresql_where=where,
        )


def downgrade() -> None:
    for _, name, _, _, _ in reversed(SAID):
        op.drop_index(f"ix_traces_project_{name}_started", table_name="traces")
    op.drop_index("ix_traces_listed_project_created", table_name="traces")
    # DROP COLUMN in place (SQLite 3.35 and later), as 0010 does.
    for column, _, _, _, _ in reversed(SAID):
        op.drop_column("traces", column)
    op.drop_table("project_run_counts")
