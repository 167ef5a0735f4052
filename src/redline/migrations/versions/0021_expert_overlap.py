"""Expert overlap: how many distinct correctors a queue rule wants, the places of each run in the expert
queue, and each corrector's part in each run (holding a place, or having corrected it)

Revision ID: 0021_expert_overlap
Revises: 0020_queue_adjudications
Create Date: 2026-12-10 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021_expert_overlap"
down_revision = "0020_queue_adjudications"
branch_labels = None
depends_on = None

TABLE = "expert_item_correctors"


def _foreign(column: str, target: str, key: str = "id") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.{key}"], name=op.f(f"fk_{TABLE}_{column}_{target}"), ondelete="CASCADE"
    )


def upgrade() -> None:
    # ADD COLUMN with a constant default: instant on both stores, never a table rebuild (0010). Every
    # rule so far wanted one correction, and every item had one place.
    op.add_column(
        "queue_rules", sa.Column("correctors_wanted", sa.Integer(), server_default="1", nullable=False)
    )
    op.add_column(
        "expert_item_rules", sa.Column("correctors_wanted", sa.Integer(), server_default="1", nullable=False)
    )
    op.add_column("expert_items", sa.Column("places", sa.Integer(), server_default="1", nullable=False))
    op.create_table(
        TABLE,
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("principal_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("held_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("corrected_at", sa.DateTime(timezone=True), nullable=True),
        _foreign("run_id", "expert_items", "run_id"),
        _foreign("principal_id", "principals"),
        _foreign("project_id", "projects"),
        sa.PrimaryKeyConstraint("run_id", "principal_id", name=op.f(f"pk_{TABLE}")),
        sa.UniqueConstraint("run_id", "slot", name=op.f(f"uq_{TABLE}_run_id_slot")),
    )
    op.create_index(
        "ix_expert_item_correctors_project_principal",
        TABLE,
        ["project_id", "principal_id", "state"],
        unique=False,
    )


def downgrade() -> None:
    # DROP COLUMN in place (SQLite 3.35 and later), as 0010 does.
    op.drop_index("ix_expert_item_correctors_project_principal", table_name=TABLE)
    op.drop_table(TABLE)
    op.drop_column("expert_items", "places")
    op.drop_column("expert_item_rules", "correctors_wanted")
    op.drop_column("queue_rules", "correctors_wanted")
