"""Indexed metadata: the metadata keys a project declares it filters runs on, and each run's value of
each such key beside its start time, so a search on one walks an index instead of every run's JSON

Revision ID: 0012_indexed_metadata
Revises: 0010_otlp_spans
Create Date: 2026-12-02 17:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_indexed_metadata"
down_revision = "0011_keyset_producer_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "indexed_metadata_keys",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("runs_total", sa.Integer(), nullable=False),
        sa.Column("runs_done", sa.Integer(), nullable=False),
        sa.Column("after_started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("after_id", sa.Uuid(), nullable=True),
        sa.Column("declared_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ready_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_indexed_metadata_keys_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_indexed_metadata_keys")),
        sa.UniqueConstraint("project_id", "key", name=op.f("uq_indexed_metadata_keys_project_id_key")),
    )
    op.create_table(
        "run_metadata_values",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_run_metadata_values_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["traces.id"], name=op.f("fk_run_metadata_values_run_id_traces"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "key", name=op.f("pk_run_metadata_values")),
    )
    op.create_index(
        "ix_run_metadata_values_lookup",
        "run_metadata_values",
        ["project_id", "key", "value", "started_at", "run_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_run_metadata_values_lookup", table_name="run_metadata_values")
    op.drop_table("run_metadata_values")
    op.drop_table("indexed_metadata_keys")
