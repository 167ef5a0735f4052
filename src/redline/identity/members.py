"""Who is a member of a project, with their roles: the console's Members page lists them.

`identity.service` sets and removes memberships one at a time; nothing listed a project's members, so
this reads them, with the same access rule as the project itself (any role in it reads its members).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.identity.models import Membership, Principal
from redline.identity.service import Actor, ProjectRole, require_project_role


@dataclass(frozen=True)
class Member:
    principal: Principal
    role: ProjectRole


def list_members(session: Session, actor: Actor, project_id: uuid.UUID) -> list[Member]:
    """The project's members by name, each with its role; needs read access to the project (a project the
    actor can't see is not found)."""
    project = require_project_role(session, actor, project_id, "read")
    rows = session.execute(
        select(Principal, Membership.role)
        .join(Membership, Membership.principal_id == Principal.id)
        .where(Membership.project_id == project.id)
        .order_by(Principal.name, Principal.id)
    )
    return [Member(principal, cast(ProjectRole, role)) for principal, role in rows]
