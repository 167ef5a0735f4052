"""Part 2: the people who correct and review the demo's runs, and the two corrector groups they are in.

Two support leads, whose corrections count three times (the “support lead” group, weight 3), and four
reviewers (the “reviewer” group, weight 1). Each group takes only its own people, so a correction made
under it is an expert's. Found by name when they exist, so running the demo again adds no one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from redline.db import Database
from redline.errors import NotFound
from redline.groups import service as groups
from redline.groups.schemas import AssertableByIn, GroupIn, ScopeIn
from redline.identity import service as identity
from redline.identity.models import Principal, Project
from redline.identity.service import Actor, ReviewerRole

LEADS = ("Maya Chen", "Tomás Rivera")
REVIEWERS = ("Ana Silva", "Ben Carter", "Chloé Dubois", "Dev Patel")
LEADS_GROUP = ("support lead", 3.0, "Support leads: their word settles a run.")
REVIEWERS_GROUP = ("reviewer", 1.0, "Reviewers who work through the expert queue.")


@dataclass(frozen=True)
class People:
    """The demo's correctors as actors, and their groups' ids."""

    leads: list[Actor]
    reviewers: list[Actor]
    leads_group: uuid.UUID
    reviewers_group: uuid.UUID
    added: int

    @property
    def everyone(self) -> list[Actor]:
        return [*self.leads, *self.reviewers]

    def sentence(self) -> str:
        return (
            f'People: {len(self.everyone)} correctors in 2 corrector groups: "{LEADS_GROUP[0]}" '
            f'(weight 3: {", ".join(a.name for a in self.leads)}) and "{REVIEWERS_GROUP[0]}" '
            f"(weight 1: {', '.join(a.name for a in self.reviewers)}); {self.added} added."
        )


def _person(session: Session, operator: Actor, name: str, role: ReviewerRole) -> tuple[Principal, bool]:
    try:
        return identity.find_user(session, operator, name), False
    except NotFound:
        return identity.create_user(session, operator, name=name, kind="user", reviewer_role=role), True


def _group(
    session: Session,
    operator: Actor,
    project_id: uuid.UUID,
    named: tuple[str, float, str],
    members: list[Principal],
) -> uuid.UUID:
    name, weight, description = named
    for group in groups.applying_to_project(session, project_id):
        if group.name == name:
            return group.id
    body = GroupIn(
        scope=ScopeIn(kind="project", project_id=project_id),
        name=name,
        weight=weight,
        description=description,
        assertable_by=AssertableByIn(principal_ids=[member.id for member in members]),
    )
    return groups.create(session, operator, body).group.id


def seed_people(db: Database, operator: Actor, project_id: uuid.UUID) -> People:
    """The correctors, each a writer in the project, and their groups, in one transaction."""
    with db.write() as session:
        made = [
            *(_person(session, operator, name, "senior") for name in LEADS),
            *(_person(session, operator, name, "standard") for name in REVIEWERS),
        ]
        principals = [principal for principal, _ in made]
        project = session.get_one(Project, project_id)
        for principal in principals:
            # Someone who may already write here keeps their role; anyone else is made a writer.
            if not identity.holds(identity.project_role(session, Actor.of(principal), project), "write"):
                identity.set_member(session, operator, project_id, principal.id, "write")
        leads, reviewers = principals[: len(LEADS)], principals[len(LEADS) :]
        return People(
            leads=[Actor.of(principal) for principal in leads],
            reviewers=[Actor.of(principal) for principal in reviewers],
            leads_group=_group(session, operator, project_id, LEADS_GROUP, leads),
            reviewers_group=_group(session, operator, project_id, REVIEWERS_GROUP, reviewers),
            added=sum(1 for _, new in made if new),
        )
