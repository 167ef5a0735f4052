"""OTLP ingest: spans kept as received (with what Redline read from them), each distinct resource and
instrumentation scope once per project, and the two run flags derivation needs (hidden, settled)

Revision ID: 0010_otlp_spans
Revises: 0009_feedback_assessments
Create Date: 2026-12-02 02:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0010_otlp_spans"
down_revision = "0009_feedback_assessments"
branch_labels = None
depends_on = None

# JSON: TEXT on SQLite (no numeric affinity), JSONB on PostgreSQL, as redline.db.JSONDocument.
JSON_DOCUMENT = (
    sa.JSON()
    .with_variant(sa.Text(), "sqlite")
    .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
)


def _span_columns() -> list[sa.Column]:  # type: ignore[type-arg]
    """The spans table's new columns, made afresh for each use (a Column belongs to one table)."""
    return [
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("cost", sa.Float(), nullable=True),
        sa.Column("error", sa.Boolean(), nullable=True),
        sa.Column("otel_kind", sa.SmallInteger(), nullable=True),
        sa.Column("start_ns", sa.BigInteger(), nullable=True),
        sa.Column("end_ns", sa.BigInteger(), nullable=True),
        sa.Column("status_code", sa.SmallInteger(), nullable=True),
        sa.Column("status_message", sa.Text(), nullable=True),
        sa.Column("trace_state", sa.Text(), nullable=True),
        sa.Column("flags", sa.BigInteger(), nullable=True),
        sa.Column("events", JSON_DOCUMENT, nullable=True),
        sa.Column("links", JSON_DOCUMENT, nullable=True),
        sa.Column("dropped_attributes", sa.Integer(), nullable=True),
        sa.Column("dropped_events", sa.Integer(), nullable=True),
        sa.Column("dropped_links", sa.Integer(), nullable=True),
        sa.Column("resource_id", sa.Uuid(), nullable=True),
        sa.Column("scope_id", sa.Uuid(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
    ]


def _kept_once(name: str, *columns: sa.Column) -> None:  # type: ignore[type-arg]
    op.create_table(
        name,
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        *columns,
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f(f"fk_{name}_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{name}")),
        sa.UniqueConstraint("project_id", "content_hash", name=op.f(f"uq_{name}_project_id_content_hash")),
    )


def upgrade() -> None:
    _kept_once("otlp_resources", sa.Column("attributes", JSON_DOCUMENT, nullable=False))
    _kept_once(
        "otlp_scopes",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("version", sa.Text(), nullable=False),
        sa.Column("attributes", JSON_DOCUMENT, nullable=True),
    )
    # Plain ADD COLUMN, never a batch rebuild: on SQLite a rebuild drops the old table, and with foreign
    # keys on that deletes what refers to it (annotations of spans, corrections of runs).
    for column in _span_columns():
        op.add_column("spans", column)
    op.add_column("traces", sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.add_column("traces", sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_traces_external_id", "traces", ["external_id"])
    # Every run stored before OTLP was sent whole: it settled when it was written.
    op.execute("UPDATE traces SET settled_at = created_at")


def downgrade() -> None:
    # DROP COLUMN in place (SQLite 3.35 and later), for the same reason as above.
    op.drop_index("ix_traces_external_id", table_name="traces")
    op.drop_column("traces", "settled_at")
    op.drop_column("traces", "hidden")
    for column in reversed(_span_columns()):
        op.drop_column("spans", column.name)
    op.drop_table("otlp_scopes")
    op.drop_table("otlp_resources")
