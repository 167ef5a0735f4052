"""Queue overlap: how many people review each item of an annotation queue, who may, how long an opened
item is held, blind review; and each person's part in each item

Revision ID: 0019_queue_overlap
Revises: 0018_quote_anchors
Create Date: 2026-12-08 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019_queue_overlap"
down_revision = "0018_quote_anchors"
branch_labels = None
depends_on = None

# JSON: TEXT on SQLite (no numeric affinity), JSONB on PostgreSQL, as redline.db.JSONDocument.
JSON_DOCUMENT = (
    sa.JSON()
    .with_variant(sa.Text(), "sqlite")
    .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
)
TABLE = "queue_item_reviewers"


def _foreign(column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{TABLE}_{column}_{target}"), ondelete="CASCADE"
    )


def upgrade() -> None:
    # ADD COLUMN with a constant default: instant on both stores, never a table rebuild (0010).
    op.add_column("queues", sa.Column("reviewers_per_item", sa.Integer(), server_default="1", nullable=False))
    op.add_column("queues", sa.Column("hold_minutes", sa.Integer(), server_default="10", nullable=False))
    op.add_column("queues", sa.Column("blind", sa.Boolean(), nullable=True))
    op.add_column("queues", sa.Column("reviewers", JSON_DOCUMENT, nullable=True))
    op.create_table(
        TABLE,
        sa.Column("item_id", sa.Uuid(), nullable=False),
        sa.Column("principal_id", sa.Uuid(), nullable=False),
        sa.Column("queue_id", sa.Uuid(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("held_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("skipped_at", sa.DateTime(timezone=True), nullable=True),
        _foreign("item_id", "queue_items"),
        _foreign("principal_id", "principals"),
        _foreign("queue_id", "queues"),
        sa.PrimaryKeyConstraint("item_id", "principal_id", name=op.f(f"pk_{TABLE}")),
        sa.UniqueConstraint("item_id", "slot", name=op.f(f"uq_{TABLE}_item_id_slot")),
    )
    op.create_index(
        "ix_queue_item_reviewers_queue_principal", TABLE, ["queue_id", "principal_id", "state"], unique=False
    )
    # Every queue so far had one reviewer per item: an item reviewed before is that person's review, in the
    # first place. One whose reviewer was removed since (reviewed_by cleared) stays reviewed, by nobody.
    op.execute(
        f"INSERT INTO {TABLE} (item_id, principal_id, queue_id, slot, state, reviewed_at)"
        " SELECT id, reviewed_by, queue_id, 0, 'reviewed', reviewed_at FROM queue_items"
        " WHERE reviewed_at IS NOT NULL AND reviewed_by IS NOT NULL"
    )


def downgrade() -> None:
    # DROP COLUMN in place (SQLite 3.35 and later), as 0010 does. Items keep reviewed_at as they had it.
    op.drop_index("ix_queue_item_reviewers_queue_principal", table_name=TABLE)
    op.drop_table(TABLE)
    op.drop_column("queues", "reviewers")
    op.drop_column("queues", "blind")
    op.drop_column("queues", "hold_minutes")
    op.drop_column("queues", "reviewers_per_item")
