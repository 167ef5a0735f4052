"""Runs of one agent or flow in the lists' whole order (started_at, id): with only (agent, started_at)
both stores sorted each page's rows to break ties by id (PostgreSQL's Incremental Sort, SQLite's temp
B-tree for the right part of the ORDER BY) and could not seek a cursor's id

Revision ID: 0011_keyset_producer_indexes
Revises: 0010_otlp_spans
Create Date: 2026-12-02 18:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0011_keyset_producer_indexes"
down_revision = "0010_otlp_spans"
branch_labels = None
depends_on = None

# Each index, with the producer column it leads with.
_PRODUCERS = {"ix_traces_agent_started": "agent_id", "ix_traces_flow_started": "flow_id"}


def upgrade() -> None:
    for name, column in _PRODUCERS.items():
        op.drop_index(name, table_name="traces")
        op.create_index(name, "traces", [column, "started_at", "id"])


def downgrade() -> None:
    for name, column in _PRODUCERS.items():
        op.drop_index(name, table_name="traces")
        op.create_index(name, "traces", [column, "started_at"])
