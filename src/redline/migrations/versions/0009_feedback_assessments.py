"""what the LLM made of each assistant action of a reward model's traces and the feedback about it
(View learning), kept with the model beside its pairs

Revision ID: 0009_feedback_assessments
Revises: 0008_corrections_to_fix
Create Date: 2026-12-02 03:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009_feedback_assessments"
down_revision = "0008_corrections_to_fix"
branch_labels = None
depends_on = None

# JSON: TEXT on SQLite (no numeric affinity), JSONB on PostgreSQL, as redline.db.JSONDocument.
JSON_DOCUMENT = (
    sa.JSON()
    .with_variant(sa.Text(), "sqlite")
    .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
)


def upgrade() -> None:
    op.create_table(
        "feedback_assessments",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("reward_model_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("trace_id", sa.Uuid(), nullable=False),
        sa.Column("step_id", sa.Uuid(), nullable=False),
        sa.Column("step_index", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(length=20), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("basis", sa.String(length=20), nullable=True),
        sa.Column("source_id", sa.Text(), nullable=True),
        sa.Column("source_kind", sa.String(length=20), nullable=True),
        sa.Column("evidence_quote", sa.Text(), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=True),
        sa.Column("alternative", JSON_DOCUMENT, nullable=True),
        sa.Column("review", JSON_DOCUMENT, nullable=True),
        sa.Column("skipped_reason", sa.Text(), nullable=True),
        sa.Column("chosen", sa.Text(), nullable=True),
        sa.Column("rejected", sa.Text(), nullable=True),
        sa.Column("pair_position", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reward_model_id"],
            ["reward_models.id"],
            name=op.f("fk_feedback_assessments_reward_model_id_reward_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback_assessments")),
        sa.UniqueConstraint(
            "reward_model_id", "position", name=op.f("uq_feedback_assessments_reward_model_id_position")
        ),
    )


def downgrade() -> None:
    op.drop_table("feedback_assessments")
