"""A project's corrections not fixed yet, in parts by who fixes them (corrections-reference.txt, the
console's To fix): which correction belongs in which part is a rule of the workflow, so it lives here
rather than in a page.

Every correction that is open, being fixed or with the owner is in exactly one part:

- `nobody`: sorted to no one (end users' corrections until someone hands each one on), and a flow's
  corrections sorted to Improve, which takes only an agent's;
- `developer`, `owner`: sorted to them;
- `improve`: an agent's corrections sorted to Improve.

A part is read a page at a time, newest or oldest first, named by the corrections at its edges. Each
status of a part, and each kind of correction in it, is a range of one of the indexes made for this,
read in order from the page's edge and merged here: a part with few corrections (or none) among a
project's million costs what it holds, where one walk of the project's corrections would pass every fixed
one to find it empty.
"""

from __future__ import annotations

import uuid

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from redline.corrections import workflow
from redline.corrections.models import Correction
from redline.db.id_pages import IdPage
from redline.db.keyset import past
from redline.db.paging import check_limit
from redline.errors import Invalid
from redline.identity.service import Actor, require_project_role

PARTS = ("nobody", "developer", "owner", "improve")
# The parts a person may hand a correction to.
HAND_TO = ("developer", "owner", "improve")


def _ranges(part: str) -> list[list[ColumnElement[bool]]]:
    """The part as index ranges, one for each status not fixed and each kind of correction it holds: an
    agent's or a flow's sorted to its fixer (`ix_corrections_fix_agents`, `_flows`), or any sorted to no
    one (`ix_corrections_fix_unsorted`)."""
    if part not in PARTS:
        raise Invalid(f'part: "{part}" is not one of {", ".join(PARTS)}.', details={"field": "part"})
    agents, flows = Correction.flow_id.is_(None), Correction.flow_id.is_not(None)
    kinds: dict[str, list[list[ColumnElement[bool]]]] = {
        "nobody": [[Correction.sorted_to.is_(None)], [Correction.sorted_to == "improve", flows]],
        "improve": [[Correction.sorted_to == "improve", agents]],
    }
    fixer = Correction.sorted_to == part
    return [
        [Correction.status == status, *kind]
        for status in sorted(workflow.NOT_FIXED)
        for kind in kinds.get(part, [[fixer, agents], [fixer, flows]])
    ]


def _edge(session: Session, project_id: uuid.UUID, ident: str, field: str) -> tuple[object, uuid.UUID]:
    """The sort key of the correction a page's edge names; one that names none of the project's is bad
    input, not an empty page."""
    try:
        found = session.get(Correction, uuid.UUID(ident))
    except ValueError:
        found = None
    if found is None or found.project_id != project_id:
        raise Invalid(f"{field}: no correction has the id {ident}.", details={"field": field})
    return found.created_at, found.id


def part_page(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    part: str,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    oldest_first: bool = False,
) -> IdPage[Correction]:
    """A page of one part's live corrections, newest first (or oldest): the `limit` after the correction
    `starting_after`, or just before `ending_before`, still in list order; `has_more` says whether more
    lie beyond the page in the direction it was read."""
    require_project_role(session, actor, project_id, "read")
    check_limit(limit)
    if starting_after and ending_before:
        raise Invalid("Give starting_after or ending_before, not both.", details={"field": "ending_before"})
    forward = ending_before is None
    descending = (not oldest_first) == forward
    edge = None
    if starting_after or ending_before:
        field = "starting_after" if starting_after else "ending_before"
        edge = _edge(session, project_id, starting_after or ending_before or "", field)
    order = (
        (Correction.created_at.desc(), Correction.id.desc())
        if descending
        else (Correction.created_at, Correction.id)
    )
    found: list[Correction] = []
    for where in _ranges(part):
        query = select(Correction).where(
            Correction.project_id == project_id, Correction.superseded_by.is_(None), *where
        )
        if edge is not None:
            query = query.where(past((Correction.created_at, Correction.id), edge, descending=descending))
        found.extend(session.scalars(query.order_by(*order).limit(limit + 1)))
    found.sort(key=lambda correction: (correction.created_at, correction.id), reverse=descending)
    rows = found[:limit]
    if not forward:
        rows.reverse()
    return IdPage(rows, len(found) > limit)
