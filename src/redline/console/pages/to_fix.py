"""Corrections › To fix: the project's corrections not fixed yet, in parts by who fixes them, each with
the document's description, leaving out a part with none (corrections-reference.txt, the console part).

Which correction is in which part is `corrections.tofix`'s. Each part is its own table: it pages, and
sorts by its When header, on its own (`developer_after=`, `owner_sort=`…), and the Columns menu chooses
the columns of all of them. "Hand it to someone else…" re-sorts a correction through
`corrections.service.change`, as PATCH /v1/corrections/{id} does, for those who may (publish); a
refusal shows the service's sentence.

The console has no page of an agent's own yet, so a row's agent links the traces list filtered to it; a
flow (which that list can't filter by) is named without a link.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, NamedTuple
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.responses import Response

from redline.console.correction_words import status_label
from redline.console.corrections_section import BASE, refused_view, section_page
from redline.console.deps import Changer, Db
from redline.console.forms import text_or_none
from redline.console.formview import view_query
from redline.console.notices import Outcome, notice, see_other
from redline.console.paging import Cursor, neighbours
from redline.console.projects import ProjectChoice
from redline.console.rendering import url_with
from redline.console.session import SignedIn
from redline.corrections import service as corrections
from redline.corrections import tofix
from redline.corrections.models import Correction
from redline.corrections.schemas import CorrectionChange
from redline.corrections.workflow import NOT_FIXED, Change
from redline.db import Database
from redline.db.id_pages import IdPage
from redline.errors import RedlineError
from redline.identity.service import Actor, principal_names
from redline.sentences import counted, short
from redline.traces import service as traces
from redline.web.addresses import path_id

router = APIRouter()
TAB = "to-fix"
PAGE_SIZE = 25
# The parts in the document's order: the part's key (as `corrections.tofix` names it), its heading and
# the document's description of who that is.
PARTS: tuple[tuple[str, str, str], ...] = (
    (
        "nobody",
        "Nobody yet",
        "end users' corrections until someone hands each one on, and a flow's corrections sorted to "
        "Improve, which takes only an agent's.",
    ),
    ("developer", "Developer", "fixes it in the pack's code or files."),
    ("owner", "Owner", "decides the agent's or flow's rules and tools."),
    (
        "improve",
        "Improve",
        "tries new wording or settings on the test set. Run it from the agent's Suggested changes page.",
    ),
)
assert tuple(key for key, _, _ in PARTS) == tofix.PARTS
# Whom a correction can be handed to, as the form offers them.
HAND_TO: tuple[tuple[str, str], ...] = (
    ("developer", "The developer"),
    ("owner", "The owner"),
    ("improve", "Improve"),
)
assert tuple(key for key, _ in HAND_TO) == tofix.HAND_TO
COLUMNS: tuple[tuple[str, str], ...] = (
    ("producer", "Agent or flow"),
    ("says", "Correction"),
    ("when", "When"),
    ("by", "By"),
    ("status", "Status"),
)
# Each part's `<part>_sort`: newest first (the default) or oldest first.
SORTS = ("-when", "when")
NOTHING = "Nothing to fix: every correction here is Fixed, Won't fix or Removed."
NONE_YET = "No corrections yet: when someone corrects a run of this project, what is left to fix shows here."
DONE = {
    "to-developer": "Handed the correction to the developer.",
    "to-owner": "Handed the correction to the owner.",
    "to-improve": "Handed the correction to Improve.",
}
# What a row quotes of what the correction says, at most.
SHORT = 90


def says_words(correction: Correction) -> str:
    """What the correction says, in a line: what was wrong and what it should have been."""
    said = []
    if correction.decisions == "wrong":
        calls = [call["tool"] for call in correction.should_call or []]
        what = ([f"should call {', '.join(calls)}"] if calls else []) + (
            [f"must not call {', '.join(correction.must_not_call)}"] if correction.must_not_call else []
        )
        said.append("Wrong decisions" + (f": {'; '.join(what)}" if what else ""))
    if correction.answer == "wrong":
        should = f": should say “{short(correction.should_say, SHORT)}”" if correction.should_say else ""
        said.append(f"Wrong answer{should}")
    wrong_items = sum(1 for item in correction.items or [] if item.get("verdict") == "wrong")
    if wrong_items:
        said.append(counted(wrong_items, "wrong item"))
    return ". ".join(said) if said else "Nothing wrong"


@dataclass(frozen=True)
class Row:
    correction: Correction
    producer: str
    producer_url: str | None
    says: str
    why: str | None
    by: str
    status: str
    hand_to: list[tuple[str, str]]


@dataclass(frozen=True)
class Part:
    key: str
    label: str
    description: str
    sort: str
    rows: list[Row]
    previous_url: str | None
    next_url: str | None
    paged: bool
    url_with: Callable[..., str]

    @property
    def newest_first(self) -> bool:
        return self.sort == "-when"


def _hand_to(correction: Correction) -> list[tuple[str, str]]:
    """Whom the correction may go to from where it is: anyone else, and Improve only for an agent's."""
    return [
        (key, label)
        for key, label in HAND_TO
        if key != correction.sorted_to and (key != "improve" or correction.flow_id is None)
    ]


def _by(correction: Correction, people: Mapping[uuid.UUID, str]) -> str:
    name = people.get(correction.made_by_id, "someone since removed")
    if correction.participant_id:
        return f"end user {correction.participant_id} (through {name})"
    return name


def _rows(session: Session, project_id: uuid.UUID, found: list[Correction]) -> list[Row]:
    """The corrections in words: names of producers and people read once for the whole page."""
    agents, flows = traces.producer_names(session, found)
    people = principal_names(session, [correction.made_by_id for correction in found])
    rows = []
    for correction in found:
        if correction.agent_id is not None:
            name = agents.get(correction.agent_id, "a removed agent")
            link: str | None = "/ui/traces?" + urlencode({"project": str(project_id), "agent": name})
        else:
            name, link = (
                (flows.get(correction.flow_id, "a removed flow") if correction.flow_id else "—"),
                None,
            )
        rows.append(
            Row(
                correction,
                name,
                link,
                says_words(correction),
                short(correction.why, SHORT) if correction.why else None,
                _by(correction, people),
                status_label(correction.status),
                _hand_to(correction),
            )
        )
    return rows


def _part_url(request: Request, key: str) -> Callable[..., str]:
    """This page's address with some of one part's view changed: `sort`, `after`, `before` are the
    part's own (`<part>_sort`…), so the shared macros page and sort one table."""

    def changed(**changes: object) -> str:
        return url_with(request, **{f"{key}_{name}": value for name, value in changes.items()})

    return changed


class _Read(NamedTuple):
    """One part's page as read, before its rows are put in words."""

    key: str
    label: str
    description: str
    sort: str
    cursor: Cursor
    page: IdPage[Correction]


def _read(session: Session, actor: Actor, request: Request, project_id: uuid.UUID) -> tuple[list[_Read], str]:
    """Each part's page as the address asks, leaving out a part with none (unless paged past its first
    page); none at all when the tallies say nothing is left to fix. With it, what the page says when it
    shows no part: that there are no corrections yet, or that every one is closed (the tallies' few rows,
    so a project whose every correction is fixed reads no part to find each one empty)."""
    counted = corrections.counts(session, actor, project_id)
    nothing = NOTHING if any(counted.values()) else NONE_YET
    if not any(counted[status] for status in NOT_FIXED):
        return [], nothing
    params = request.query_params
    found = []
    for key, label, description in PARTS:
        sort = params.get(f"{key}_sort") if params.get(f"{key}_sort") in SORTS else SORTS[0]
        cursor = Cursor(params.get(f"{key}_after") or None, params.get(f"{key}_before") or None)
        page = tofix.part_page(
            session,
            actor,
            project_id,
            key,
            limit=PAGE_SIZE,
            starting_after=cursor.after,
            ending_before=cursor.before,
            oldest_first=sort == "when",
        )
        if page.items or cursor.after or cursor.before:
            found.append(_Read(key, label, description, str(sort), cursor, page))
    return found, nothing


def _part(read: _Read, rows: Mapping[uuid.UUID, Row], request: Request) -> Part:
    at = _part_url(request, read.key)
    items = read.page.items
    earlier, later = neighbours(read.page.has_more, read.cursor.after, read.cursor.before)
    return Part(
        read.key,
        read.label,
        read.description,
        read.sort,
        [rows[correction.id] for correction in items],
        at(before=str(items[0].id), after=None) if earlier and items else None,
        at(after=str(items[-1].id), before=None) if later and items else None,
        paged=read.cursor.after is not None or read.cursor.before is not None,
        url_with=at,
    )


def show(
    request: Request, who: SignedIn, db: Database, choice: ProjectChoice, outcome: Outcome | None = None
) -> Response:
    """The parts of the project `choice` shows, as the address asks, saying what `outcome` says."""
    said: Outcome = outcome or {"notice": notice(DONE, request)}
    parts: list[Part] = []
    nothing = NONE_YET
    if choice.project is not None:
        with db.read() as session:
            read, nothing = _read(session, who.actor, request, choice.project.id)
            found = [correction for part in read for correction in part.page.items]
            rows = {row.correction.id: row for row in _rows(session, choice.project.id, found)}
        parts = [_part(part, rows, request) for part in read]
    known = [key for key, _ in COLUMNS]
    cols = [key for key in request.query_params.getlist("cols") if key in known] or known
    return section_page(
        request,
        who,
        TAB,
        choice,
        said,
        parts=parts,
        nothing=nothing,
        columns=COLUMNS,
        cols=cols,
        may_hand_on=choice.may("publish"),
        view_query=request.url.query,
    )


# ------------------------------------------------------------------------------------------------- form

Text = Annotated[str, Form()]


def _change(to: str, reason: str) -> Change:
    """The re-sort the form asks for, checked as the API checks its body."""
    fields: dict[str, Any] = {"sorted_to": to or None, "reason": text_or_none(reason)}
    body = CorrectionChange.model_validate(fields)
    return Change(sorted_to=body.sorted_to, reason=body.reason)


@router.post("/corrections/to-fix/{correction_id}/hand-on")
def hand_on(
    request: Request,
    correction_id: str,
    who: Changer,
    db: Db,
    project: Text,
    view: Text = "",
    to: Text = "",
    reason: Text = "",
) -> Response:
    """Hand the correction to someone else; back to the view, each part from its first page again
    (the correction left one part and joined another)."""
    cursors = [f"{key}_{edge}" for key, _, _ in PARTS for edge in ("after", "before")]
    query = view_query(view, [("tab", TAB), ("project", project)], drop=cursors)
    try:
        asked = _change(to, reason)
        with db.write() as session:
            corrections.change(session, who.actor, path_id(correction_id, "correction"), asked)
    except (RedlineError, ValidationError) as error:
        again, choice, said = refused_view(request, who, db, project, query, error, error_at=correction_id)
        return show(again, who, db, choice, said)
    return see_other(BASE, [*query, ("done", f"to-{asked.sorted_to}")])
