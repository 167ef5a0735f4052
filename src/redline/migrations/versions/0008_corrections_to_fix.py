"""the indexes the console's To fix reads each part by: a project's corrections of one status, an agent's
or a flow's sorted to one fixer, or any sorted to none, newest first

Revision ID: 0008_corrections_to_fix
Revises: 0007_jobs_training
Create Date: 2026-12-01 03:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_corrections_to_fix"
down_revision = "0007_jobs_training"
branch_labels = None
depends_on = None

# Each index's name, columns and the rows it holds.
INDEXES = (
    (
        "ix_corrections_fix_agents",
        ["project_id", "status", "sorted_to", "created_at", "id"],
        "flow_id IS NULL",
    ),
    (
        "ix_corrections_fix_flows",
        ["project_id", "status", "sorted_to", "created_at", "id"],
        "flow_id IS NOT NULL",
    ),
    ("ix_corrections_fix_unsorted", ["project_id", "status", "created_at", "id"], "sorted_to IS NULL"),
)


def upgrade() -> None:
    for name, columns, where in INDEXES:
        op.create_index(
            name,
            "corrections",
            columns,
            unique=False,
            sqlite_where=sa.text(where),
            postgresql_where=sa.text(where),
        )


def downgrade() -> None:
    for name, _, _ in reversed(INDEXES):
        op.drop_index(name, table_name="corrections")
