"""Queue adjudications: an admin's settled value for an item of an annotation queue under one review key,
where its reviewers disagreed

Revision ID: 0020_queue_adjudications
Revises: 0019_queue_overlap
Create Date: 2026-12-06 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020_queue_adjudications"
down_revision = "0019_queue_overlap"
branch_labels = None
depends_on = None

# JSON: TEXT on SQLite (no numeric affinity), JSONB on PostgreSQL, as redline.db.JSONDocument.
JSON_DOCUMENT = (
    sa.JSON()
    .with_variant(sa.Text(), "sqlite")
    .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
)
TABLE = "queue_adjudications"


def _foreign(column: str, target: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{TABLE}_{column}_{target}"), ondelete=ondelete
    )


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("item_id", sa.Uuid(), nullable=False),
        sa.Column("review_key_id", sa.Uuid(), nullable=False),
        sa.Column("queue_id", sa.Uuid(), nullable=False),
        sa.Column("value", JSON_DOCUMENT, nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("decided_by", sa.Uuid(), nullable=True),
        sa.Column("decided_by_name", sa.String(length=200), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        _foreign("item_id", "queue_items"),
        _foreign("review_key_id", "review_keys"),
        _foreign("queue_id", "queues"),
        _foreign("decided_by", "principals", "SET NULL"),
        sa.PrimaryKeyConstraint("item_id", "review_key_id", name=op.f(f"pk_{TABLE}")),
    )
    op.create_index("ix_queue_adjudications_queue", TABLE, ["queue_id", "decided_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_queue_adjudications_queue", table_name=TABLE)
    op.drop_table(TABLE)
