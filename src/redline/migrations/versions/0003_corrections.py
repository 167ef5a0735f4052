"""corrections, audit log, idempotency keys, agent versions

Revision ID: 0003_corrections
Revises: 0002_annotations
Create Date: 2026-11-30 13:26:00.203008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003_corrections"
down_revision = "0002_annotations"
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
        "correction_tallies",
        sa.Column("scope_key", sa.String(length=80), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("scope_key", "status", name=op.f("pk_correction_tallies")),
    )
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("kind", sa.String(length=60), nullable=False),
        sa.Column("actor_kind", sa.String(length=16), nullable=True),
        sa.Column("actor_id", sa.Uuid(), nullable=True),
        sa.Column("data", JSON_DOCUMENT, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_audit_events_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_audit_events_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.create_index("ix_audit_events_workspace_at", ["workspace_id", "at", "id"], unique=False)

    op.create_table(
        "idempotent_requests",
        sa.Column("principal_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("operation", sa.String(length=300), nullable=False),
        sa.Column("body_hash", sa.String(length=64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("response", JSON_DOCUMENT, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["principal_id"],
            ["principals.id"],
            name=op.f("fk_idempotent_requests_principal_id_principals"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("principal_id", "key", name=op.f("pk_idempotent_requests")),
    )
    with op.batch_alter_table("idempotent_requests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotent_requests_created_at"), ["created_at"], unique=False)

    op.create_table(
        "agent_versions",
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.String(length=200), nullable=False),
        sa.Column("tools", JSON_DOCUMENT, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_agent_versions_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("agent_id", "version", name=op.f("pk_agent_versions")),
    )
    op.create_table(
        "correction_test_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("flow_id", sa.Uuid(), nullable=True),
        sa.Column("version", sa.String(length=200), nullable=False),
        sa.Column("how", sa.String(length=16), nullable=False),
        sa.Column("experts_only", sa.Boolean(), nullable=False),
        sa.Column("results", JSON_DOCUMENT, nullable=False),
        sa.Column("made_by_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_correction_test_runs_agent_id_agents")
        ),
        sa.ForeignKeyConstraint(
            ["flow_id"], ["flows.id"], name=op.f("fk_correction_test_runs_flow_id_flows")
        ),
        sa.ForeignKeyConstraint(
            ["made_by_id"],
            ["principals.id"],
            name=op.f("fk_correction_test_runs_made_by_id_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_correction_test_runs_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_correction_test_runs")),
    )
    with op.batch_alter_table("correction_test_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_correction_test_runs_project_id"), ["project_id"], unique=False)

    op.create_table(
        "corrections",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("flow_id", sa.Uuid(), nullable=True),
        sa.Column("agent_version", sa.String(length=200), nullable=True),
        sa.Column("decisions", sa.String(length=8), nullable=True),
        sa.Column("should_call", JSON_DOCUMENT, nullable=True),
        sa.Column("must_not_call", JSON_DOCUMENT, nullable=True),
        sa.Column("answer", sa.String(length=8), nullable=True),
        sa.Column("should_say", sa.Text(), nullable=True),
        sa.Column("items", JSON_DOCUMENT, nullable=True),
        sa.Column("why", sa.Text(), nullable=True),
        sa.Column("corrector_group_id", sa.Uuid(), nullable=True),
        sa.Column("expert", sa.Boolean(), nullable=False),
        sa.Column("made_by_kind", sa.String(length=16), nullable=False),
        sa.Column("made_by_id", sa.Uuid(), nullable=False),
        sa.Column("participant_id", sa.String(length=200), nullable=True),
        sa.Column("live_key", sa.String(length=300), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("sorted_to", sa.String(length=16), nullable=True),
        sa.Column("sorted", JSON_DOCUMENT, nullable=True),
        sa.Column("link", JSON_DOCUMENT, nullable=True),
        sa.Column("fixed_in", JSON_DOCUMENT, nullable=True),
        sa.Column("reopened_in", JSON_DOCUMENT, nullable=True),
        sa.Column("status_note", JSON_DOCUMENT, nullable=True),
        sa.Column("run_input", JSON_DOCUMENT, nullable=True),
        sa.Column("run_output", JSON_DOCUMENT, nullable=True),
        sa.Column("run_captured_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("superseded_by", sa.Uuid(), nullable=True),
        sa.Column("unregistered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_corrections_agent_id_agents")),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name=op.f("fk_corrections_flow_id_flows")),
        sa.ForeignKeyConstraint(
            ["made_by_id"], ["principals.id"], name=op.f("fk_corrections_made_by_id_principals")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_corrections_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["traces.id"], name=op.f("fk_corrections_run_id_traces"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_corrections_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_corrections")),
        sa.UniqueConstraint("run_id", "live_key", name=op.f("uq_corrections_run_id_live_key")),
    )
    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.create_index("ix_corrections_agent_created", ["agent_id", "created_at", "id"], unique=False)
        batch_op.create_index(
            "ix_corrections_agent_version_created",
            ["agent_id", "agent_version", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_corrections_group_created", ["corrector_group_id", "created_at", "id"], unique=False
        )
        batch_op.create_index("ix_corrections_flow_created", ["flow_id", "created_at", "id"], unique=False)
        batch_op.create_index(
            "ix_corrections_made_by_created", ["made_by_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_corrections_participant_created", ["participant_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_corrections_project_created", ["project_id", "created_at", "id"], unique=False
        )
        batch_op.create_index("ix_corrections_run_created", ["run_id", "created_at", "id"], unique=False)

    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("sort_end_user_corrections", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("sort_end_user_corrections")

    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.drop_index("ix_corrections_run_created")
        batch_op.drop_index("ix_corrections_project_created")
        batch_op.drop_index("ix_corrections_participant_created")
        batch_op.drop_index("ix_corrections_made_by_created")
        batch_op.drop_index("ix_corrections_flow_created")
        batch_op.drop_index("ix_corrections_group_created")
        batch_op.drop_index("ix_corrections_agent_version_created")
        batch_op.drop_index("ix_corrections_agent_created")

    op.drop_table("corrections")
    with op.batch_alter_table("correction_test_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_correction_test_runs_project_id"))

    op.drop_table("correction_test_runs")
    op.drop_table("agent_versions")
    with op.batch_alter_table("idempotent_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotent_requests_created_at"))

    op.drop_table("idempotent_requests")
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_events_workspace_at")

    op.drop_table("audit_events")
    op.drop_table("correction_tallies")
