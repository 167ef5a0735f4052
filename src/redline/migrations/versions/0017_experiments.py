"""Experiments: a dataset run through an agent version, its results, the review keys it is reviewed
with, the annotations made while reviewing it, and people's preferences between two experiments

Revision ID: 0017_experiments
Revises: 0016_workspace_tenants
Create Date: 2026-12-06 02:00:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0017_experiments"
down_revision = "0016_workspace_tenants"
branch_labels = None
depends_on = None

# JSON: TEXT on SQLite (no numeric affinity), JSONB on PostgreSQL, as redline.db.JSONDocument.
JSON_DOCUMENT = (
    sa.JSON()
    .with_variant(sa.Text(), "sqlite")
    .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
)


def _when(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _foreign(table: str, column: str, target: str, ondelete: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete=ondelete
    )


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("dataset_id", sa.Uuid(), nullable=False),
        sa.Column("dataset_version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("agent", sa.String(length=200), nullable=True),
        sa.Column("flow", sa.String(length=200), nullable=True),
        sa.Column("version", sa.String(length=200), nullable=True),
        sa.Column("metadata", JSON_DOCUMENT, nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("results_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("errored_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("updated_by", sa.Uuid(), nullable=True),
        _when("created_at"),
        _when("updated_at"),
        _when("finished_at", nullable=True),
        _foreign("experiments", "created_by", "principals", "SET NULL"),
        _foreign("experiments", "project_id", "projects", "CASCADE"),
        _foreign("experiments", "updated_by", "principals", "SET NULL"),
        _foreign("experiments", "workspace_id", "workspaces", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiments")),
    )
    op.create_index("ix_experiments_dataset_created", "experiments", ["dataset_id", "created_at", "id"])
    op.create_index("ix_experiments_workspace_created", "experiments", ["workspace_id", "created_at", "id"])

    op.create_table(
        "experiment_review_keys",
        sa.Column("experiment_id", sa.Uuid(), nullable=False),
        sa.Column("review_key_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        _foreign("experiment_review_keys", "experiment_id", "experiments", "CASCADE"),
        _foreign("experiment_review_keys", "review_key_id", "review_keys", "CASCADE"),
        sa.PrimaryKeyConstraint("experiment_id", "review_key_id", name=op.f("pk_experiment_review_keys")),
    )
    op.create_index(
        op.f("ix_experiment_review_keys_review_key_id"), "experiment_review_keys", ["review_key_id"]
    )

    op.create_table(
        "experiment_results",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("experiment_id", sa.Uuid(), nullable=False),
        sa.Column("datapoint_id", sa.Uuid(), nullable=False),
        sa.Column("datapoint_version", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("inputs", JSON_DOCUMENT, nullable=True),
        sa.Column("messages", JSON_DOCUMENT, nullable=True),
        sa.Column("expected_output", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("total_tokens", sa.Integer(), nullable=True),
        sa.Column("cost", sa.Float(), nullable=True),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        _when("created_at"),
        _when("updated_at"),
        _foreign("experiment_results", "created_by", "principals", "SET NULL"),
        _foreign("experiment_results", "experiment_id", "experiments", "CASCADE"),
        _foreign("experiment_results", "run_id", "traces", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiment_results")),
        sa.UniqueConstraint(
            "experiment_id", "datapoint_id", name=op.f("uq_experiment_results_experiment_id_datapoint_id")
        ),
    )
    op.create_index(
        "ix_experiment_results_experiment_datapoint",
        "experiment_results",
        ["experiment_id", "datapoint_id", "id"],
    )
    op.create_index(op.f("ix_experiment_results_run_id"), "experiment_results", ["run_id"])

    op.create_table(
        "experiment_annotations",
        sa.Column("experiment_id", sa.Uuid(), nullable=False),
        sa.Column("annotation_id", sa.Uuid(), nullable=False),
        _foreign("experiment_annotations", "annotation_id", "annotations", "CASCADE"),
        _foreign("experiment_annotations", "experiment_id", "experiments", "CASCADE"),
        sa.PrimaryKeyConstraint("experiment_id", "annotation_id", name=op.f("pk_experiment_annotations")),
    )
    op.create_index(
        op.f("ix_experiment_annotations_annotation_id"), "experiment_annotations", ["annotation_id"]
    )

    op.create_table(
        "experiment_preferences",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("experiment_a_id", sa.Uuid(), nullable=True),
        sa.Column("experiment_b_id", sa.Uuid(), nullable=True),
        sa.Column("datapoint_id", sa.Uuid(), nullable=False),
        sa.Column("run_a_id", sa.Uuid(), nullable=False),
        sa.Column("run_b_id", sa.Uuid(), nullable=False),
        sa.Column("choice", sa.String(length=8), nullable=False),
        sa.Column("principal_id", sa.Uuid(), nullable=True),
        sa.Column("author_name", sa.String(length=200), nullable=False),
        _when("created_at"),
        _when("updated_at"),
        _foreign("experiment_preferences", "experiment_a_id", "experiments", "SET NULL"),
        _foreign("experiment_preferences", "experiment_b_id", "experiments", "SET NULL"),
        _foreign("experiment_preferences", "principal_id", "principals", "SET NULL"),
        _foreign("experiment_preferences", "project_id", "projects", "CASCADE"),
        _foreign("experiment_preferences", "run_a_id", "traces", "CASCADE"),
        _foreign("experiment_preferences", "run_b_id", "traces", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiment_preferences")),
        sa.UniqueConstraint(
            "experiment_a_id",
            "experiment_b_id",
            "datapoint_id",
            "principal_id",
            name="uq_experiment_preferences_one_per_person",
        ),
    )
    op.create_index(
        op.f("ix_experiment_preferences_experiment_b_id"), "experiment_preferences", ["experiment_b_id"]
    )
    op.create_index(
        "ix_experiment_preferences_project_created",
        "experiment_preferences",
        ["project_id", "created_at", "id"],
    )
    op.create_index(op.f("ix_experiment_preferences_run_a_id"), "experiment_preferences", ["run_a_id"])
    op.create_index(op.f("ix_experiment_preferences_run_b_id"), "experiment_preferences", ["run_b_id"])


def downgrade() -> None:
    # Each table's indexes go with it.
    for table in (
        "experiment_preferences",
        "experiment_annotations",
        "experiment_results",
        "experiment_review_keys",
        "experiments",
    ):
        op.drop_table(table)
