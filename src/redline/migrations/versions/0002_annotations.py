"""annotations, reward models, and the index the rm surface lists traces by

Revision ID: 0002_annotations
Revises: 0001_foundation
Create Date: 2026-11-30 11:28:22.092962
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002_annotations"
down_revision = "0001_foundation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_traces_created", "traces", ["created_at", "id"], unique=False)
    op.create_table(
        "reward_models",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("status_detail", sa.Text(), nullable=True),
        sa.Column("base_model", sa.String(length=200), nullable=True),
        sa.Column("compute", sa.String(length=40), nullable=False),
        sa.Column("epochs", sa.Integer(), nullable=False),
        sa.Column("max_pairs", sa.Integer(), nullable=False),
        sa.Column("num_pairs", sa.Integer(), nullable=False),
        sa.Column(
            "training_config",
            sa.JSON()
            .with_variant(sa.Text(), "sqlite")
            .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "metrics",
            sa.JSON()
            .with_variant(sa.Text(), "sqlite")
            .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_reward_models_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_reward_models_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reward_models")),
    )
    with op.batch_alter_table("reward_models", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reward_models_workspace_id"), ["workspace_id"], unique=False)

    op.create_table(
        "preference_pairs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("reward_model_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("granularity", sa.String(length=10), nullable=False),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("chosen", sa.Text(), nullable=False),
        sa.Column("rejected", sa.Text(), nullable=False),
        sa.Column(
            "source_ids",
            sa.JSON()
            .with_variant(sa.Text(), "sqlite")
            .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["reward_model_id"],
            ["reward_models.id"],
            name=op.f("fk_preference_pairs_reward_model_id_reward_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_preference_pairs")),
        sa.UniqueConstraint(
            "reward_model_id", "position", name=op.f("uq_preference_pairs_reward_model_id_position")
        ),
    )
    op.create_table(
        "reward_model_traces",
        sa.Column("reward_model_id", sa.Uuid(), nullable=False),
        sa.Column("trace_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["reward_model_id"],
            ["reward_models.id"],
            name=op.f("fk_reward_model_traces_reward_model_id_reward_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["trace_id"],
            ["traces.id"],
            name=op.f("fk_reward_model_traces_trace_id_traces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("reward_model_id", "trace_id", name=op.f("pk_reward_model_traces")),
    )
    op.create_table(
        "annotations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("trace_id", sa.Uuid(), nullable=False),
        sa.Column("step_id", sa.Uuid(), nullable=True),
        sa.Column("rating", sa.SmallInteger(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column(
            "quote",
            sa.JSON()
            .with_variant(sa.Text(), "sqlite")
            .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("label_error", sa.Boolean(), nullable=False),
        sa.Column("label_error_note", sa.Text(), nullable=True),
        sa.Column("author_id", sa.Uuid(), nullable=True),
        sa.Column("author_name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["author_id"],
            ["principals.id"],
            name=op.f("fk_annotations_author_id_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["step_id"], ["steps.id"], name=op.f("fk_annotations_step_id_steps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["trace_id"], ["traces.id"], name=op.f("fk_annotations_trace_id_traces"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotations")),
    )
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.create_index("ix_annotations_created_id", ["created_at", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_annotations_step_id"), ["step_id"], unique=False)
        batch_op.create_index("ix_annotations_trace_created", ["trace_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_traces_created", table_name="traces")
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_index("ix_annotations_trace_created")
        batch_op.drop_index(batch_op.f("ix_annotations_step_id"))
        batch_op.drop_index("ix_annotations_created_id")

    op.drop_table("annotations")
    op.drop_table("reward_model_traces")
    op.drop_table("preference_pairs")
    with op.batch_alter_table("reward_models", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reward_models_workspace_id"))

    op.drop_table("reward_models")
