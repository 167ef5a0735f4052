"""the indexes the console's traces list sorts by: step count and status within a project

Revision ID: 0006_console_trace_sorts
Revises: 0005_groups_expert_queue
Create Date: 2026-11-30 20:50:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0006_console_trace_sorts"
down_revision = "0005_groups_expert_queue"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_traces_project_steps", "traces", ["project_id", "step_count", "id"], unique=False)
    op.create_index("ix_traces_project_status", "traces", ["project_id", "status", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_traces_project_status", table_name="traces")
    op.drop_index("ix_traces_project_steps", table_name="traces")
