"""the jobs table (background work claimed by workers), what training makes of a reward model, and the
scores models give traces; reward models queued before there was a trainer get their training job

Revision ID: 0007_jobs_training
Revises: 0006_console_trace_sorts
Create Date: 2026-12-01 03:00:00.000000
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007_jobs_training"
down_revision = "0006_console_trace_sorts"
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
        "jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=60), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("payload", JSON_DOCUMENT, nullable=False),
        sa.Column("subject", sa.String(length=120), nullable=True),
        sa.Column("result", JSON_DOCUMENT, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("progress", sa.Float(), nullable=True),
        sa.Column("progress_note", sa.String(length=200), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("run_after", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_by", sa.String(length=120), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    op.create_index("ix_jobs_claimable", "jobs", ["state", "run_after", "created_at"], unique=False)
    op.create_index("ix_jobs_kind_subject_state", "jobs", ["kind", "subject", "state"], unique=False)

    op.create_table(
        "reward_model_artifacts",
        sa.Column("reward_model_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=60), nullable=False),
        sa.Column("blob", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reward_model_id"],
            ["reward_models.id"],
            name=op.f("fk_reward_model_artifacts_reward_model_id_reward_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("reward_model_id", name=op.f("pk_reward_model_artifacts")),
    )
    op.create_table(
        "trace_scores",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("trace_id", sa.Uuid(), nullable=False),
        sa.Column("reward_model_id", sa.Uuid(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("credits", JSON_DOCUMENT, nullable=False),
        sa.Column("exact", sa.Boolean(), nullable=False),
        sa.Column("scored_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reward_model_id"],
            ["reward_models.id"],
            name=op.f("fk_trace_scores_reward_model_id_reward_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["trace_id"], ["traces.id"], name=op.f("fk_trace_scores_trace_id_traces"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trace_scores")),
    )
    op.create_index("ix_trace_scores_trace_scored", "trace_scores", ["trace_id", "scored_at"], unique=False)
    op.create_index(
        op.f("ix_trace_scores_reward_model_id"), "trace_scores", ["reward_model_id"], unique=False
    )

    op.create_table(
        "project_scoring",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("reward_model_id", sa.Uuid(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("set_by", sa.Uuid(), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_scoring_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["reward_model_id"],
            ["reward_models.id"],
            name=op.f("fk_project_scoring_reward_model_id_reward_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["set_by"],
            ["principals.id"],
            name=op.f("fk_project_scoring_set_by_principals"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_project_scoring")),
    )

    with op.batch_alter_table("reward_models", schema=None) as batch_op:
        batch_op.add_column(sa.Column("job_id", sa.Uuid(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_reward_models_job_id_jobs"), "jobs", ["job_id"], ["id"], ondelete="SET NULL"
        )
    _queue_waiting_models()


def _queue_waiting_models() -> None:
    """Models made before this release had a trainer are queued: each gets its training job now."""
    models = sa.table(
        "reward_models",
        sa.column("id", sa.Uuid()),
        sa.column("status", sa.String()),
        sa.column("status_detail", sa.Text()),
        sa.column("job_id", sa.Uuid()),
    )
    jobs = sa.table(
        "jobs",
        sa.column("id", sa.Uuid()),
        sa.column("kind", sa.String()),
        sa.column("state", sa.String()),
        sa.column("payload", JSON_DOCUMENT),
        sa.column("attempts", sa.Integer()),
        sa.column("max_attempts", sa.Integer()),
        sa.column("run_after", sa.DateTime(timezone=True)),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    connection = op.get_bind()
    now = datetime.now(UTC)
    if connection.dialect.name == "sqlite":
        now = now.replace(tzinfo=None)
    for (model_id,) in connection.execute(sa.select(models.c.id).where(models.c.status == "queued")).all():
        job_id = uuid.uuid4()
        payload = {"reward_model_id": str(model_id)}
        connection.execute(
            jobs.insert().values(
                id=job_id,
                kind="train-reward-model",
                state="queued",
                payload=json.dumps(payload) if connection.dialect.name == "sqlite" else payload,
                attempts=0,
                max_attempts=3,
                run_after=now,
                created_at=now,
            )
        )
        connection.execute(
            models.update()
            .where(models.c.id == model_id)
            .values(job_id=job_id, status_detail="Queued for training.")
        )


def downgrade() -> None:
    with op.batch_alter_table("reward_models", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_reward_models_job_id_jobs"), type_="foreignkey")
        batch_op.drop_column("job_id")
    op.drop_table("project_scoring")
    op.drop_index(op.f("ix_trace_scores_reward_model_id"), table_name="trace_scores")
    op.drop_index("ix_trace_scores_trace_scored", table_name="trace_scores")
    op.drop_table("trace_scores")
    op.drop_table("reward_model_artifacts")
    op.drop_index("ix_jobs_kind_subject_state", table_name="jobs")
    op.drop_index("ix_jobs_claimable", table_name="jobs")
    op.drop_table("jobs")
