"""The run tools: search runs, read one with everything said about it, export a selection.

Searching is `traces.list_runs` (the `/v1/runs` list, with its metadata and "has ratings" filters): a
keyset page newest first, so a search over a million runs reads one page and answers a cursor.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator
from sqlalchemy.orm import Session

from redline.db import in_utc
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.mcp.arguments import Cursor, RunId, page_size, paged
from redline.mcp.said import said_about_runs
from redline.mcp.tool import Answer, Arguments, Tool
from redline.traces import service as traces
from redline.traces.native import run_to_dict, run_to_input_dict
from redline.traces.schemas import MAX_NAME, RUN_STATUSES, RunStatus
from redline.traces.service import RunView
from redline.traces.session_ids import MAX_SESSION_ID

# A run's steps and spans per answer of get_run: a long agent run has thousands of spans.
STEPS_PER_ANSWER = 100
SPANS_PER_ANSWER = 100
MAX_SEARCH_PAGE = 50
MAX_EXPORT_PAGE = 25
MAX_METADATA_FILTERS = 10


class RunFiltersArguments(Arguments):
    """What narrows a search (and an export): each filter given must hold."""

    project: Annotated[
        str | None,
        Field(
            description="Only this project's runs, by name or id; left out, every project you can read.",
            min_length=1,
            max_length=MAX_NAME,
        ),
    ] = None
    agent: Annotated[
        str | None, Field(description="Only runs of the agent with this name.", max_length=MAX_NAME)
    ] = None
    version: Annotated[
        str | None,
        Field(description="Only runs of this agent version (as the run reported it).", max_length=MAX_NAME),
    ] = None
    status: Annotated[
        list[RunStatus] | None,
        Field(description="Only runs in one of these states.", max_length=len(RUN_STATUSES)),
    ] = None
    since: Annotated[
        datetime | None,
        Field(description="Only runs started at or after this ISO 8601 time (UTC when it names no zone)."),
    ] = None
    until: Annotated[
        datetime | None,
        Field(description="Only runs started before this ISO 8601 time (UTC when it names no zone)."),
    ] = None
    session_id: Annotated[
        str | None,
        Field(description="Only the turns of this session (conversation).", max_length=MAX_SESSION_ID),
    ] = None
    metadata: Annotated[
        dict[str, str] | None,
        Field(
            description="Only runs whose metadata holds each of these top-level keys with exactly this value "
            '(numbers and booleans as JSON writes them: "3", "true"), e.g. {"customer_tier": "gold"}.',
            max_length=MAX_METADATA_FILTERS,
        ),
    ] = None
    has_ratings: Annotated[
        bool | None,
        Field(description="true: only runs someone rated (+1/-1); false: only runs nobody rated."),
    ] = None
    has_comments: Annotated[
        bool | None, Field(description="true: only runs with a comment; false: only runs without one.")
    ] = None
    has_corrections: Annotated[
        bool | None,
        Field(description="true: only runs someone corrected; false: only runs nobody corrected."),
    ] = None

    @field_validator("since", "until")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return in_utc(value) if value is not None else None

    def filters(self, session: Session, actor: Actor) -> traces.RunFilters:
        """The service's filters; a project named is one the caller can read, or not found."""
        project = identity.find_project(session, actor, self.project) if self.project else None
        return traces.RunFilters(
            project_id=project.id if project else None,
            agent=self.agent,
            agent_version=self.version,
            session_id=self.session_id,
            statuses=tuple(self.status or ()),
            since=self.since,
            until=self.until,
            metadata=tuple((self.metadata or {}).items()),
            has_ratings=self.has_ratings,
            has_comments=self.has_comments,
            has_corrections=self.has_corrections,
        )


class SearchRuns(RunFiltersArguments):
    limit: int = page_size(20, MAX_SEARCH_PAGE)
    cursor: Cursor = None


def _summary(actor: Actor, view: RunView) -> dict[str, Any]:
    """A run as a search lists it: the run without its steps and spans, and how much was said about it."""
    trace = view.trace
    return {
        **run_to_dict(view, tenant_id=actor.workspace_id, with_content=False),
        "said": {
            "ratings": trace.rated_count,
            "comments": trace.comment_count,
            "corrections": trace.correction_count,
        },
    }


def search_runs(session: Session, actor: Actor, asked: SearchRuns) -> Answer:
    page = traces.list_runs(
        session, actor, asked.filters(session, actor), limit=asked.limit, cursor=asked.cursor
    )
    return paged([_summary(actor, view) for view in page.items], page.next_cursor)


SEARCH_RUNS = Tool(
    name="search_runs",
    title="Search runs",
    description=(
        "Find runs (traces) of AI agents, newest first, by project, agent, agent version, status, start "
        "time, session, metadata values, and whether people rated, commented on or corrected them. Each "
        "run comes without its steps (use get_run for those), with its input, output, metadata and counts "
        "of what was said about it. Answers one page and a nextCursor: pass it back as cursor, with the "
        "same filters, for the next page."
    ),
    arguments=SearchRuns,
    call=search_runs,
)


class GetRun(Arguments):
    run_id: RunId
    step_offset: Annotated[
        int, Field(ge=0, description=f"The first step to answer; {STEPS_PER_ANSWER} steps an answer.")
    ] = 0
    span_offset: Annotated[
        int, Field(ge=0, description=f"The first span to answer; {SPANS_PER_ANSWER} spans an answer.")
    ] = 0


def _window(total: int, offset: int, size: int) -> tuple[slice, int | None]:
    """The part of a run's steps (or spans) an answer holds, and the offset of the next part (None when
    this is the last)."""
    end = offset + size
    return slice(offset, end), end if end < total else None


def get_run(session: Session, actor: Actor, asked: GetRun) -> Answer:
    view = traces.get_run(session, actor, asked.run_id)
    steps, next_step = _window(len(view.steps), asked.step_offset, STEPS_PER_ANSWER)
    spans, next_span = _window(len(view.spans), asked.span_offset, SPANS_PER_ANSWER)
    shown = RunView(view.trace, view.agent_name, view.flow_name, view.steps[steps], view.spans[spans])
    return {
        **run_to_dict(shown, tenant_id=actor.workspace_id),
        "spanCount": len(view.spans),
        "nextStepOffset": next_step,
        "nextSpanOffset": next_span,
        **said_about_runs(session, actor, [view.trace.id])[view.trace.id],
    }


GET_RUN = Tool(
    name="get_run",
    title="Read a run",
    description=(
        "One run with its steps (the conversation: each message, tool call and tool result, in order), its "
        "spans, and everything said about it: ratings and comments (annotations), values people gave for "
        "review keys and evaluator results (reviewValues), and corrections (what the run should have done "
        f"or said). A long run comes in parts of {STEPS_PER_ANSWER} steps and {SPANS_PER_ANSWER} spans: "
        "nextStepOffset and nextSpanOffset, when not null, are the offsets to ask for the rest."
    ),
    arguments=GetRun,
    call=get_run,
)


class ExportRuns(RunFiltersArguments):
    run_ids: Annotated[
        list[uuid.UUID] | None,
        Field(
            description=f"The runs to export, by id (up to {MAX_EXPORT_PAGE}); leave out to export the "
            "runs the filters match instead, a page at a time.",
            min_length=1,
            max_length=MAX_EXPORT_PAGE,
        ),
    ] = None
    limit: int = page_size(10, MAX_EXPORT_PAGE)
    cursor: Cursor = None

    @model_validator(mode="after")
    def _ids_or_filters(self) -> ExportRuns:
        filtered = self.model_fields_set - {"run_ids", "limit", "cursor"}
        if self.run_ids is not None and (filtered or self.cursor is not None):
            raise ValueError("give run_ids, or filters (with a cursor), not both")
        return self


def _record(view: RunView, said: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"id": str(view.trace.id), "run": run_to_input_dict(view), **said}


def export_runs(session: Session, actor: Actor, asked: ExportRuns) -> Answer:
    if asked.run_ids is not None:
        views = [traces.get_run(session, actor, run_id) for run_id in dict.fromkeys(asked.run_ids)]
        next_cursor = None
    else:
        filters = asked.filters(session, actor)
        page = traces.list_runs(session, actor, filters, limit=asked.limit, cursor=asked.cursor)
        views = traces.views_of(
            session, [view.trace for view in page.items], with_steps=True, with_spans=True
        )
        next_cursor = page.next_cursor
    said = said_about_runs(session, actor, [view.trace.id for view in views])
    return paged([_record(view, said[view.trace.id]) for view in views], next_cursor)


EXPORT_RUNS = Tool(
    name="export_runs",
    title="Export runs",
    description=(
        "Export a selection of runs, whole, with everything said about them: the runs named by run_ids, or "
        "those the filters match (as search_runs takes them), a page at a time with a nextCursor. Each "
        "record has the run as Redline's native format writes it (its `run`, a line `redline import` reads "
        "back into a project), with its annotations, reviewValues and corrections: for analysis across "
        "reviewed data, or to move runs with their feedback."
    ),
    arguments=ExportRuns,
    call=export_runs,
)
