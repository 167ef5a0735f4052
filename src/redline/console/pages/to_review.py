"""Corrections › To review: the project's expert queue, the runs waiting for a person to correct them and
how the others left it (corrections-reference.txt, the console part).

Each row says what ran (linking the page where the run is corrected), the rules that queued it and where
it stands, in words made from what its rules still want and the corrections so far, or from how it
ended, and who holds a place in it now. The filters (Show, Whose, rule, agent), the sort, the columns
and the page are the address's, so the Rules page links here filtered to a rule. Dismiss (with a reason)
and Reopen call `queues.expert` as /v1/projects/{id}/expert-queue does, and are offered where the item's
view says they may be. Opening a run from the list holds a place in it for the corrector
(`queues.expert.holding`), and "Who's correcting" below the list is each corrector's progress.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Form, Request
from sqlalchemy.orm import Session
from starlette.datastructures import QueryParams
from starlette.responses import RedirectResponse, Response

from redline.console.corrections_section import BASE, refused_view, section_page
from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_id, text_or_none
from redline.console.formview import view_query
from redline.console.notices import Outcome, notice, see_other
from redline.console.paging import Cursor, PageLinks, id_page_links
from redline.console.projects import ProjectChoice
from redline.console.rendering import moment
from redline.console.session import SignedIn
from redline.db import Database
from redline.db.paging import MAX_LIMIT
from redline.errors import Invalid, RedlineError
from redline.groups import service as groups
from redline.identity.service import Actor, principal_names
from redline.queues.expert import engine as expert
from redline.queues.expert import holding
from redline.queues.expert import listing as expert_listing
from redline.queues.expert import rules as expert_rules
from redline.queues.expert.engine import CORRECTED, DISMISSED, ERASED, OPEN
from redline.queues.expert.listing import ItemView, QueueFilters
from redline.queues.expert.places import HOLD
from redline.queues.expert.progress import progress
from redline.sentences import counted, listed, short
from redline.traces import service as traces
from redline.traces.models import Agent
from redline.traces.openings import openings
from redline.web.addresses import path_id

router = APIRouter()
TAB = "to-review"
PAGE_SIZE = 25
# The address's `show`, the state it lists and the filter's word for it; the first is the default.
SHOWS: tuple[tuple[str, str, str], ...] = (
    ("waiting", OPEN, "Waiting"),
    ("corrected", CORRECTED, "Corrected"),
    ("dismissed", DISMISSED, "Dismissed"),
    ("erased", ERASED, "Erased"),
)
# The address's `whose`: only the runs the viewer can close by correcting them, or everyone's.
WHOSE: tuple[tuple[str, str], ...] = (("me", "For me"), ("everyone", "Everyone's"))
# The columns the Columns menu chooses; What ran, the row's link, is always shown.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("why", "Why it's here"),
    ("stands", "Where it stands"),
    ("queued", "Queued"),
)
# The one sort the queue's index serves both ways: when the run was queued.
SORTS = ("queued", "-queued")
# A dismissal's reason is stored in at most this many characters, as the API takes it.
MAX_REASON = 500
DONE = {
    "dismissed": "Dismissed the run: it is out of the queue.",
    "reopened": "Reopened the run: it waits in the queue again.",
}
# What a row quotes of what the run was asked, at most.
OPENING = 80
# A corrector group whose name is gone (groups are unregistered, never deleted: this is not expected).
UNKNOWN_GROUP = "unknown group"
# What the list says with no rows, by `show`, when it lists everyone's runs.
NONE_SHOWN = {
    "waiting": "No run is waiting for a correction.",
    "corrected": "No run has been corrected yet.",
    "dismissed": "No run has been dismissed.",
    "erased": "No run's content has been erased.",
}


@dataclass(frozen=True)
class View:
    """The list as the address asks for it."""

    show: str
    whose: str
    rule: uuid.UUID | None
    agent: uuid.UUID | None
    sort: str
    cols: list[str]
    cursor: Cursor

    @property
    def state(self) -> str:
        return next(state for key, state, _ in SHOWS if key == self.show)

    def filters(self, *, for_me: bool) -> QueueFilters:
        return QueueFilters(states=(self.state,), rule_id=self.rule, agent_id=self.agent, for_me=for_me)


def _one_of(params: QueryParams, name: str, allowed: tuple[str, ...]) -> str:
    value = params.get(name) or allowed[0]
    if value not in allowed:
        raise Invalid(f'{name}: "{value}" is not one of {", ".join(allowed)}.', details={"field": name})
    return value


def read_view(params: QueryParams) -> View:
    known = [key for key, _ in COLUMNS]
    cols = [key for key in params.getlist("cols") if key in known] or known
    return View(
        show=_one_of(params, "show", tuple(key for key, _, _ in SHOWS)),
        whose=_one_of(params, "whose", tuple(key for key, _ in WHOSE)),
        rule=form_id(params.get("rule"), "rule"),
        agent=form_id(params.get("agent"), "agent"),
        sort=_one_of(params, "sort", SORTS),
        cols=cols,
        cursor=Cursor(params.get("after") or None, params.get("before") or None),
    )


# ---------------------------------------------------------------------------------------------- wording


def correction_words(group: str | None) -> str:
    """A correction a rule wants, as a sentence names it: "an expert correction", "a correction"."""
    if group is None:
        return "a correction"
    article = "an" if group[:1].lower() in "aeiou" else "a"
    return f"{article} {group} correction"


def progress_words(progress: Mapping[uuid.UUID | None, int], names: Mapping[uuid.UUID, str]) -> str:
    """The live corrections so far, by group: "1 so far, ungrouped", "3 so far: 2 expert, 1 ungrouped"."""
    total = sum(progress.values())
    if total == 0:
        return "none so far"
    by_group = sorted(
        (
            (names.get(group, UNKNOWN_GROUP) if group else "ungrouped", count)
            for group, count in progress.items()
        ),
        key=lambda pair: (pair[0] == "ungrouped", pair[0]),
    )
    if len(by_group) == 1:
        return f"{total} so far, {by_group[0][0]}"
    return f"{total} so far: " + ", ".join(f"{count} {name}" for name, count in by_group)


def wanted_words(group: str | None, left: int, had: int) -> str:
    """`left` more corrections of a group (None: of any), `had` of them so far: "an expert correction",
    "2 expert corrections", "2 more expert corrections", "1 more correction"."""
    if had == 0 and left == 1:
        return correction_words(group)
    kind = f"{group} correction" if group else "correction"
    return f"{left} {'more ' if had else ''}{kind}{'' if left == 1 else 's'}"


def needs_words(view: ItemView, names: Mapping[uuid.UUID, str]) -> str:
    """What a waiting run still needs, with the corrections so far: for each group its waiting rules want,
    as many more corrections of it as the most wanting of them still wants; a rule that takes any adds
    only what those leave over (a correction of a group serves it too)."""
    so_far = view.progress
    total = sum(so_far.values())
    left_of: dict[uuid.UUID, int] = {}
    anyone = 0
    for rule in view.rules:
        if rule.satisfied:
            continue
        if rule.wanted_group_id is None:
            anyone = max(anyone, rule.correctors_wanted - total)
        else:
            left = rule.correctors_wanted - so_far.get(rule.wanted_group_id, 0)
            left_of[rule.wanted_group_id] = max(left_of.get(rule.wanted_group_id, 0), left)
    wanted = sorted(
        (names.get(group, UNKNOWN_GROUP), left, so_far.get(group, 0))
        for group, left in left_of.items()
        if left > 0
    )
    needs = [wanted_words(name, left, had) for name, left, had in wanted]
    over = anyone - sum(left for _, left, _ in wanted)
    if not needs:
        needs.append(wanted_words(None, max(over, 1), total))
    elif over > 0:
        needs.append(wanted_words(None, over, 1))
    return f"Needs {' and '.join(needs)} ({progress_words(so_far, names)})"


def held_words(
    holds: list[tuple[uuid.UUID, datetime]], people: Mapping[uuid.UUID, str], me: uuid.UUID | None
) -> str | None:
    """Who holds a place in a waiting run now: "Held by you until 15:10 UTC", "Held by ana and ben"."""
    if not holds:
        return None
    who = [
        "you" if principal == me else people.get(principal, "someone since removed") for principal, _ in holds
    ]
    if len(holds) == 1:
        return f"Held by {who[0]} until {holds[0][1].astimezone(UTC):%H:%M} UTC"
    return f"Held by {listed(who)} for now"


def stands_words(
    view: ItemView, names: Mapping[uuid.UUID, str], people: Mapping[uuid.UUID, str], me: uuid.UUID | None
) -> str:
    """Where the run stands: what it needs while it waits, or how it left the queue, by whom and when."""
    item = view.item
    if item.state == OPEN:
        return needs_words(view, names)
    by = ""
    if item.closed_by is not None:
        by = (
            " by you"
            if item.closed_by == me
            else f" by {people.get(item.closed_by, 'someone since removed')}"
        )
    when = f" {moment(item.closed_at)}" if item.closed_at is not None else ""
    ended = {CORRECTED: "Corrected", DISMISSED: "Dismissed", ERASED: "Erased"}[item.state]
    reason = f": {item.reason}" if item.reason else ""
    return f"{ended}{by}{when}{reason}"


def others_words(others: int) -> str | None:
    """What For me leaves out of the waiting runs."""
    if others <= 0:
        return None
    return f"{counted(others, 'more waits', 'more wait')} for other correctors."


# ------------------------------------------------------------------------------------------------- page


@dataclass(frozen=True)
class Row:
    view: ItemView
    producer: str
    stands: str
    # What the run was asked, in a line (its first user message, else its input): what tells it apart.
    opening: str | None
    # Who holds a place in it now, in words (None: nobody).
    held: str | None = None

    @property
    def why(self) -> str:
        """The rules that queued it, by name (as at the version that did), in the same order every time."""
        return ", ".join(sorted(rule.name for rule in self.view.rules))

    @property
    def run_id(self) -> uuid.UUID:
        return self.view.item.run_id

    @property
    def can_dismiss(self) -> bool:
        return self.view.may_write and self.view.item.state == OPEN

    @property
    def can_reopen(self) -> bool:
        return self.view.may_write and self.view.item.state == DISMISSED


def _rows(session: Session, actor: Actor, views: list[ItemView]) -> list[Row]:
    """The page's items in words: names of producers, groups and people read once for the page."""
    agents, flows = traces.producer_names(session, [view.item for view in views])
    group_ids = {rule.wanted_group_id for view in views for rule in view.rules if rule.wanted_group_id}
    group_ids |= {group for view in views for group in view.progress if group}
    names = groups.names(session, group_ids)
    people = principal_names(
        session,
        [view.item.closed_by for view in views if view.item.closed_by]
        + [principal for view in views for principal, _ in view.holds],
    )
    asked = openings(session, [view.item.run_id for view in views])
    rows = []
    for view in views:
        item = view.item
        producer = (agents.get(item.agent_id) if item.agent_id else None) or (
            flows.get(item.flow_id, "a removed flow") if item.flow_id else "a removed agent"
        )
        opening = asked.get(item.run_id)
        rows.append(
            Row(
                view,
                producer,
                stands_words(view, names, people, actor.principal_id),
                short(opening, OPENING) if opening else None,
                held_words(view.holds, people, actor.principal_id),
            )
        )
    return rows


def _rule_choices(
    session: Session, actor: Actor, project_id: uuid.UUID, chosen: uuid.UUID | None
) -> list[tuple[str, str]]:
    """The project's live rules to filter by, and the chosen one even when it was removed since (its runs
    stay in the queue)."""
    live = expert_rules.list_rules(session, actor, project_id, limit=MAX_LIMIT).items
    choices = [(str(view.rule.rule_id), view.rule.name) for view in live]
    if chosen is not None and all(rule_id != str(chosen) for rule_id, _ in choices):
        choices.append((str(chosen), expert_rules.get_rule(session, actor, project_id, chosen).rule.name))
    return choices


def show(
    request: Request, who: SignedIn, db: Database, choice: ProjectChoice, outcome: Outcome | None = None
) -> Response:
    """The queue of the project `choice` shows, as the address asks, saying what `outcome` says."""
    view = read_view(request.query_params)
    said: Outcome = outcome or {"notice": notice(DONE, request)}
    if choice.project is None:
        return section_page(request, who, TAB, choice, said)
    project_id = choice.project.id
    with db.read() as session:
        page = expert_listing.page_items(
            session,
            who.actor,
            project_id,
            view.filters(for_me=view.whose == "me"),
            limit=PAGE_SIZE,
            newest_first=view.sort == "-queued",
            **_edges(view.cursor),
        )
        others = None
        if view.whose == "me" and view.show == "waiting":
            waiting = expert_listing.waiting_for_others(
                session, who.actor, project_id, view.filters(for_me=False)
            )
            others = others_words(waiting)
        rows = _rows(session, who.actor, page.items)
        correctors = progress(session, who.actor, project_id)
        rules = _rule_choices(session, who.actor, project_id, view.rule)
        agents: list[Agent] = traces.list_agents(session, who.actor, project_id)
    links: PageLinks = id_page_links(request, [row.run_id for row in rows], page.has_more, view.cursor)
    older_first = view.sort == "queued"
    return section_page(
        request,
        who,
        TAB,
        choice,
        said,
        view=view,
        rows=rows,
        others=others,
        correctors=correctors,
        hold_minutes=int(HOLD.total_seconds() // 60),
        empty=_empty_words(view),
        shows=SHOWS,
        whose_choices=WHOSE,
        rules=rules,
        agents=[(str(agent.id), agent.name) for agent in agents],
        columns=COLUMNS,
        max_reason=MAX_REASON,
        view_query=request.url.query,
        previous="Earlier" if older_first else "Later",
        next="Later" if older_first else "Earlier",
        **links,
    )


def _edges(cursor: Cursor) -> dict[str, str | None]:
    return {"starting_after": cursor.after, "ending_before": cursor.before}


def _empty_words(view: View) -> str:
    if view.whose == "me" and view.show != "waiting":
        label = next(word for key, _, word in SHOWS if key == view.show).lower()
        return f"For me lists the runs still waiting for you: choose Everyone's to see the {label} ones."
    if view.whose == "me":
        return "Nothing waits for you."
    if view.rule or view.agent:
        return "No run matches these filters."
    return NONE_SHOWN[view.show]


# ------------------------------------------------------------------------------------------------ forms

Text = Annotated[str, Form()]


Work = Callable[[Session, uuid.UUID, uuid.UUID], object]


def _answer(
    request: Request, who: SignedIn, db: Database, project: str, view: str, run_id: str, done: str, work: Work
) -> Response:
    """Do `work` on the run (in the project the form names), then go back to the view the form was sent
    from, saying `done`; refused, show that view again with the service's sentence."""
    query = view_query(view, [("tab", TAB), ("project", project)])
    try:
        project_id = path_id(project, "project")
        run = path_id(run_id, "queue-item", expert.item_not_found)
        with db.write() as session:
            work(session, project_id, run)
    except RedlineError as error:
        again, choice, said = refused_view(request, who, db, project, query, error, error_at=run_id)
        return show(again, who, db, choice, said)
    return see_other(BASE, [*query, ("done", done)])


def _reason(typed: str) -> str | None:
    reason = text_or_none(typed)
    if reason is not None and len(reason.strip()) > MAX_REASON:
        raise Invalid(f"Reason: at most {MAX_REASON} characters.", details={"field": "reason"})
    return reason.strip() if reason is not None else None


@router.get("/corrections/to-review/{run_id}/open")
def open_run(run_id: uuid.UUID, who: Viewer, db: Db, project: str = "") -> Response:
    """Open a run from the list to correct it: a place in it is held for the corrector while one is free
    for them (`holding.hold`); otherwise (a reader, a run with no place or nothing for them) it just
    opens, and the list and the correct page say where it stands. A run the viewer can't read is not
    found, as everywhere."""
    with db.read() as session:
        traces.readable_trace(session, who.actor, run_id, "read")
    try:
        with db.write() as session:
            holding.hold(session, who.actor, path_id(project, "project"), run_id)
    except RedlineError:
        pass  # no place for them: opening still shows the run
    return RedirectResponse(f"/ui/traces/{run_id}/correct", status_code=303)


@router.post("/corrections/to-review/{run_id}/dismiss")
def dismiss(
    request: Request, run_id: str, who: Changer, db: Db, project: Text, view: Text = "", reason: Text = ""
) -> Response:
    """Take the run out of the queue, with the reason given."""

    def work(session: Session, project_id: uuid.UUID, run: uuid.UUID) -> object:
        return expert.dismiss(session, who.actor, project_id, run, _reason(reason))

    return _answer(request, who, db, project, view, run_id, "dismissed", work)


@router.post("/corrections/to-review/{run_id}/reopen")
def reopen(request: Request, run_id: str, who: Changer, db: Db, project: Text, view: Text = "") -> Response:
    """Put a dismissed run back in the queue."""

    def work(session: Session, project_id: uuid.UUID, run: uuid.UUID) -> object:
        return expert.reopen(session, who.actor, project_id, run)

    return _answer(request, who, db, project, view, run_id, "reopened", work)
