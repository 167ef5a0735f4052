"""Pairs that say what kind they are: same-context, cross or a stated preference, and the context their
two sides share (issue 26)

Revision ID: 0022_pair_kinds
Revises: 0021_expert_overlap
Create Date: 2026-12-11 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_pair_kinds"
down_revision = "0021_expert_overlap"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable, no default: instant on both stores. The pairs of models built before this say no kind
    # (their builder did not tell same-context pairs from cross ones), and they are shown as such.
    op.add_column("preference_pairs", sa.Column("kind", sa.String(length=20), nullable=True))
    op.add_column("preference_pairs", sa.Column("context_id", sa.String(length=80), nullable=True))


def downgrade() -> None:
    op.drop_column("preference_pairs", "context_id")
    op.drop_column("preference_pairs", "kind")
