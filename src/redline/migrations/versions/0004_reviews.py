"""review keys, span annotations and evaluator results, annotation queues and rules, datasets

Revision ID: 0004_reviews
Revises: 0003_corrections
Create Date: 2026-11-30 13:35:53.681499
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004_reviews"
down_revision = "0003_corrections"
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
        "datasets",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("path", sa.String(length=500), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("updated_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_datasets_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_datasets_project_id_projects"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["updated_by"],
            ["principals.id"],
            name=op.f("fk_datasets_updated_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_datasets_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasets")),
    )
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.create_index(
            "ix_datasets_workspace_created", ["workspace_id", "created_at", "id"], unique=False
        )

    op.create_table(
        "queues",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("items_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("reviewed_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("updated_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_queues_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_queues_project_id_projects"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["updated_by"],
            ["principals.id"],
            name=op.f("fk_queues_updated_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_queues_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queues")),
    )
    with op.batch_alter_table("queues", schema=None) as batch_op:
        batch_op.create_index(
            "ix_queues_workspace_created", ["workspace_id", "created_at", "id"], unique=False
        )

    op.create_table(
        "review_keys",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("options", JSON_DOCUMENT, nullable=True),
        sa.Column("multiple", sa.Boolean(), nullable=False),
        sa.Column("min", sa.Float(), nullable=True),
        sa.Column("max", sa.Float(), nullable=True),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("updated_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_review_keys_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_review_keys_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["updated_by"],
            ["principals.id"],
            name=op.f("fk_review_keys_updated_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_review_keys_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_keys")),
        sa.UniqueConstraint("project_id", "key", name=op.f("uq_review_keys_project_id_key")),
    )
    op.create_table(
        "queue_review_keys",
        sa.Column("queue_id", sa.Uuid(), nullable=False),
        sa.Column("review_key_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_id"], ["queues.id"], name=op.f("fk_queue_review_keys_queue_id_queues"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["review_key_id"],
            ["review_keys.id"],
            name=op.f("fk_queue_review_keys_review_key_id_review_keys"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("queue_id", "review_key_id", name=op.f("pk_queue_review_keys")),
    )
    with op.batch_alter_table("queue_review_keys", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_queue_review_keys_review_key_id"), ["review_key_id"], unique=False
        )

    op.create_table(
        "queue_rules",
        sa.Column("rule_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("queue_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("when", JSON_DOCUMENT, nullable=False),
        sa.Column("sample", sa.Float(), nullable=False),
        sa.Column("max_open", sa.Integer(), nullable=True),
        sa.Column("corrector_group_id", sa.Uuid(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("latest", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("unregistered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_queue_rules_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_queue_rules_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["queue_id"], ["queues.id"], name=op.f("fk_queue_rules_queue_id_queues"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("rule_id", "version", name=op.f("pk_queue_rules")),
    )
    with op.batch_alter_table("queue_rules", schema=None) as batch_op:
        batch_op.create_index("ix_queue_rules_project_live", ["project_id", "unregistered_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_queue_rules_queue_id"), ["queue_id"], unique=False)

    op.create_table(
        "datapoints",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("dataset_id", sa.Uuid(), nullable=False),
        sa.Column("inputs", JSON_DOCUMENT, nullable=True),
        sa.Column("messages", JSON_DOCUMENT, nullable=True),
        sa.Column("expected_output", sa.Text(), nullable=True),
        sa.Column("trace_id", sa.Uuid(), nullable=True),
        sa.Column("snapshot_version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("updated_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["principals.id"],
            name=op.f("fk_datapoints_created_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_datapoints_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["trace_id"], ["traces.id"], name=op.f("fk_datapoints_trace_id_traces"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["updated_by"],
            ["principals.id"],
            name=op.f("fk_datapoints_updated_by_principals"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datapoints")),
    )
    with op.batch_alter_table("datapoints", schema=None) as batch_op:
        batch_op.create_index(
            "ix_datapoints_dataset_created", ["dataset_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_datapoints_trace_id"), ["trace_id"], unique=False)

    op.create_table(
        "queue_items",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("queue_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("trace_id", sa.Uuid(), nullable=True),
        sa.Column("span_key", sa.String(length=200), nullable=False),
        sa.Column("datapoint_id", sa.Uuid(), nullable=True),
        sa.Column("added_by_rules", JSON_DOCUMENT, nullable=True),
        sa.Column("added_by", sa.Uuid(), nullable=True),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_review_key_ids", JSON_DOCUMENT, nullable=True),
        sa.Column("reviewed_by", sa.Uuid(), nullable=True),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["added_by"],
            ["principals.id"],
            name=op.f("fk_queue_items_added_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["datapoint_id"],
            ["datapoints.id"],
            name=op.f("fk_queue_items_datapoint_id_datapoints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["queue_id"], ["queues.id"], name=op.f("fk_queue_items_queue_id_queues"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["reviewed_by"],
            ["principals.id"],
            name=op.f("fk_queue_items_reviewed_by_principals"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["trace_id"], ["traces.id"], name=op.f("fk_queue_items_trace_id_traces"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queue_items")),
        sa.UniqueConstraint("queue_id", "seq", name=op.f("uq_queue_items_queue_id_seq")),
        sa.UniqueConstraint(
            "queue_id", "trace_id", "span_key", name=op.f("uq_queue_items_queue_id_trace_id_span_key")
        ),
    )
    with op.batch_alter_table("queue_items", schema=None) as batch_op:
        batch_op.create_index(
            "ix_queue_items_queue_reviewed", ["queue_id", "reviewed_at", "seq"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_queue_items_trace_id"), ["trace_id"], unique=False)

    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("span_id", sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column("key", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("value", JSON_DOCUMENT, nullable=True))
        batch_op.add_column(sa.Column("explanation", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("source", sa.String(length=16), server_default="human", nullable=False))
        batch_op.add_column(sa.Column("output_type", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("parent_id", sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column("metadata", JSON_DOCUMENT, nullable=True))
        batch_op.create_index(batch_op.f("ix_annotations_parent_id"), ["parent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_annotations_span_id"), ["span_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_annotations_span_id_spans"), "spans", ["span_id"], ["id"], ondelete="CASCADE"
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_annotations_parent_id_annotations"),
            "annotations",
            ["parent_id"],
            ["id"],
            ondelete="CASCADE",
        )


def downgrade() -> None:
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_annotations_parent_id_annotations"), type_="foreignkey")
        batch_op.drop_constraint(batch_op.f("fk_annotations_span_id_spans"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_annotations_span_id"))
        batch_op.drop_index(batch_op.f("ix_annotations_parent_id"))
        batch_op.drop_column("metadata")
        batch_op.drop_column("parent_id")
        batch_op.drop_column("output_type")
        batch_op.drop_column("source")
        batch_op.drop_column("explanation")
        batch_op.drop_column("value")
        batch_op.drop_column("key")
        batch_op.drop_column("span_id")

    with op.batch_alter_table("queue_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_queue_items_trace_id"))
        batch_op.drop_index("ix_queue_items_queue_reviewed")

    op.drop_table("queue_items")
    with op.batch_alter_table("datapoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_datapoints_trace_id"))
        batch_op.drop_index("ix_datapoints_dataset_created")

    op.drop_table("datapoints")
    with op.batch_alter_table("queue_rules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_queue_rules_queue_id"))
        batch_op.drop_index("ix_queue_rules_project_live")

    op.drop_table("queue_rules")
    with op.batch_alter_table("queue_review_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_queue_review_keys_review_key_id"))

    op.drop_table("queue_review_keys")
    op.drop_table("review_keys")
    with op.batch_alter_table("queues", schema=None) as batch_op:
        batch_op.drop_index("ix_queues_workspace_created")

    op.drop_table("queues")
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.drop_index("ix_datasets_workspace_created")

    op.drop_table("datasets")
