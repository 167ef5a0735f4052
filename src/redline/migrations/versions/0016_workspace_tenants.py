"""Workspaces as tenants: installation admins, who make and delete workspaces, and one name per workspace

Revision ID: 0016_workspace_tenants
Revises: 0015_sessions
Create Date: 2026-12-06 01:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_workspace_tenants"
down_revision = "0015_sessions"
branch_labels = None
depends_on = None

# The first start's admin becomes the installation admin: the oldest workspace admin of the oldest
# workspace (the one `redline serve` made, which the CLI and every existing token work in).
FIRST_ADMIN = (
    "UPDATE principals SET installation_admin = :yes WHERE id = ("
    " SELECT p.id FROM principals p JOIN workspaces w ON w.id = p.workspace_id"
    " WHERE p.workspace_admin = :yes AND p.kind = 'user'"
    " ORDER BY w.created_at, w.id, p.created_at, p.id LIMIT 1)"
)


def upgrade() -> None:
    op.add_column(
        "principals",
        sa.Column("installation_admin", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.execute(sa.text(FIRST_ADMIN).bindparams(yes=True))
    op.create_index("ux_workspaces_name", "workspaces", ["name"], unique=True)


def downgrade() -> None:
    op.drop_index("ux_workspaces_name", table_name="workspaces")
    op.drop_column("principals", "installation_admin")
