"""corrector groups, queue rules into the expert queue, result tallies

Revision ID: 0005_groups_expert_queue
Revises: 0004_reviews
Create Date: 2026-11-30 16:23:57.996324
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005_groups_expert_queue"
down_revision = "0004_reviews"
branch_labels = None
depends_on = None

# JSON: TEXT on SQLite (no numeric affinity), JSONB on PostgreSQL, as redline.db.JSONDocument.
JSON_DOCUMENT = (
    sa.JSON()
    .with_variant(sa.Text(), "sqlite")
    .with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
)


def _items(value: object) -> list[dict[str, object]]:
    # TEXT on SQLite comes back as the JSON text; JSONB as the value.
    items = json.loads(value) if isinstance(value, str) else value
    return items if isinstance(items, list) else []


def upgrade() -> None:
    op.create_table(
        "queue_rule_counters",
        sa.Column("rule_id", sa.Uuid(), nullable=False),
        sa.Column("open_items", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("rule_id", name=op.f("pk_queue_rule_counters")),
    )
    op.create_table(
        "rule_result_tallies",
        sa.Column("rule_id", sa.Uuid(), nullable=False),
        sa.Column("rule_version", sa.Integer(), nullable=False),
        sa.Column("agent_version", sa.String(length=200), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("measure", sa.String(length=60), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "rule_id", "rule_version", "agent_version", "day", "measure", name=op.f("pk_rule_result_tallies")
        ),
    )
    op.create_table(
        "corrector_groups",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("scope_kind", sa.String(length=16), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("scope_key", sa.String(length=80), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("live_name", sa.String(length=100), nullable=True),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("assertable_by", JSON_DOCUMENT, nullable=True),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("unregistered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_corrector_groups_agent_id_agents"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_corrector_groups_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_corrector_groups_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_corrector_groups_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_corrector_groups")),
        sa.UniqueConstraint(
            "workspace_id",
            "scope_key",
            "live_name",
            name=op.f("uq_corrector_groups_workspace_id_scope_key_live_name"),
        ),
    )
    with op.batch_alter_table("corrector_groups", schema=None) as batch_op:
        batch_op.create_index("ix_corrector_groups_project", ["project_id"], unique=False)
        batch_op.create_index(
            "ix_corrector_groups_workspace_created", ["workspace_id", "created_at", "id"], unique=False
        )

    op.create_table(
        "expert_items",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("flow_id", sa.Uuid(), nullable=True),
        sa.Column("agent_version", sa.String(length=200), nullable=True),
        sa.Column("run_status", sa.String(length=16), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_by", sa.Uuid(), nullable=True),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_expert_items_agent_id_agents"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["closed_by"],
            ["principals.id"],
            name=op.f("fk_expert_items_closed_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["flow_id"], ["flows.id"], name=op.f("fk_expert_items_flow_id_flows"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_expert_items_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["traces.id"], name=op.f("fk_expert_items_run_id_traces"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_expert_items")),
    )
    with op.batch_alter_table("expert_items", schema=None) as batch_op:
        batch_op.create_index(
            "ix_expert_items_project_added", ["project_id", "added_at", "run_id"], unique=False
        )
        batch_op.create_index("ix_expert_items_project_closed", ["project_id", "closed_at"], unique=False)
        batch_op.create_index(
            "ix_expert_items_project_state_added", ["project_id", "state", "added_at", "run_id"], unique=False
        )

    op.create_table(
        "expert_item_rules",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("rule_id", sa.Uuid(), nullable=False),
        sa.Column("rule_version", sa.Integer(), nullable=False),
        sa.Column("wanted_group_id", sa.Uuid(), nullable=True),
        sa.Column("satisfied", sa.Boolean(), nullable=False),
        sa.Column("agent_version", sa.String(length=200), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["expert_items.run_id"],
            name=op.f("fk_expert_item_rules_run_id_expert_items"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "rule_id", name=op.f("pk_expert_item_rules")),
    )
    with op.batch_alter_table("expert_item_rules", schema=None) as batch_op:
        batch_op.create_index("ix_expert_item_rules_rule_added", ["rule_id", "added_at"], unique=False)

    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("marked_right", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    # A correction marks its run right when it marks nothing wrong: no wrong decisions, answer or item.
    corrections = sa.table(
        "corrections",
        sa.column("id", sa.Uuid()),
        sa.column("decisions", sa.String()),
        sa.column("answer", sa.String()),
        sa.column("items", JSON_DOCUMENT),
        sa.column("marked_right", sa.Boolean()),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(corrections.c.id, corrections.c.decisions, corrections.c.answer, corrections.c["items"])
    )
    right = [
        row.id
        for row in rows
        if row.decisions != "wrong"
        and row.answer != "wrong"
        and not any(item.get("verdict") == "wrong" for item in _items(row.items))
    ]
    for start in range(0, len(right), 500):
        connection.execute(
            corrections.update()
            .where(corrections.c.id.in_(right[start : start + 500]))
            .values(marked_right=True)
        )

    with op.batch_alter_table("queue_rules", schema=None) as batch_op:
        batch_op.alter_column("queue_id", existing_type=sa.Uuid(), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("queue_rules", schema=None) as batch_op:
        batch_op.alter_column("queue_id", existing_type=sa.Uuid(), nullable=False)

    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.drop_column("marked_right")

    with op.batch_alter_table("expert_item_rules", schema=None) as batch_op:
        batch_op.drop_index("ix_expert_item_rules_rule_added")

    op.drop_table("expert_item_rules")
    with op.batch_alter_table("expert_items", schema=None) as batch_op:
        batch_op.drop_index("ix_expert_items_project_state_added")
        batch_op.drop_index("ix_expert_items_project_closed")
        batch_op.drop_index("ix_expert_items_project_added")

    op.drop_table("expert_items")
    with op.batch_alter_table("corrector_groups", schema=None) as batch_op:
        batch_op.drop_index("ix_corrector_groups_workspace_created")
        batch_op.drop_index("ix_corrector_groups_project")

    op.drop_table("corrector_groups")
    op.drop_table("rule_result_tallies")
    op.drop_table("queue_rule_counters")
