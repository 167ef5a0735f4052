"""`redline corrections list|export|set`: a project's corrections from a shell, as the local operator.

The same services as `/v1/corrections`, so the filters, the sentences of a refusal, the export's rows
and its audit events are the API's. Changes are recorded as made by `operator`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import click
from pydantic import ValidationError
from sqlalchemy.orm import Session

from redline.cli.context import (
    CliContext,
    as_operator,
    fail,
    lock_waits,
    open_output,
    output_option,
    pass_context,
    print_table,
)
from redline.cli.progress import Progress, progress
from redline.corrections import export_log
from redline.corrections import service as corrections_service
from redline.corrections.export_pages import encoded_pages
from redline.corrections.models import Correction
from redline.corrections.schemas import SORTED_TO, STATUSES, CorrectionChange
from redline.corrections.service import SOURCES, CorrectionFilters
from redline.corrections.wire import (
    FORMATS,
    correction_dict,
    csv_header,
)
from redline.corrections.workflow import Change
from redline.db import Database
from redline.db.paging import MAX_LIMIT
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.sentences import counted
from redline.traces import service as traces
from redline.traces.models import Agent

F = TypeVar("F", bound=Callable[..., Any])


@click.group("corrections")
def corrections() -> None:
    """Corrections of runs: list them, export an agent's, re-sort them or set their status."""


# ---------------------------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class _Asked:
    """The filter options as typed, before names become ids."""

    project: str | None
    agent: str | None
    agent_version: str | None
    statuses: tuple[str, ...]
    sorted_to: tuple[str, ...]
    source: str
    participant: str | None
    since: datetime | None
    until: datetime | None


def _time(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f'"{value}" is not an ISO 8601 time.') from None
    if parsed.tzinfo is None:
        raise click.BadParameter(f'"{value}" needs a timezone, such as Z or +00:00.')
    return parsed


def _split(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """A repeatable option that also takes comma-separated values, as the API's query does."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _filter_options(*, agent_required: bool) -> Callable[[F], F]:
    """The options `list` and `export` share; the service checks the values, with the API's sentences."""
    options = [
        click.option("--project", help="Project name or id [default: every project]."),
        click.option(
            "--agent",
            required=agent_required,
            help="Agent name or id (a name is looked up in --project, or in every project).",
        ),
        click.option("--agent-version", help="Only corrections of runs of this version."),
        click.option(
            "--status",
            "statuses",
            multiple=True,
            callback=_split,
            help=f"{', '.join(STATUSES)}, or not-fixed; repeat or comma-separate [default: all but removed].",
        ),
        click.option(
            "--sorted-to",
            "sorted_to",
            multiple=True,
            callback=_split,
            help=f"{', '.join(SORTED_TO)}, or none for unsorted; repeat or comma-separate.",
        ),
        click.option(
            "--from",
            "source",
            type=click.Choice(SOURCES),
            default="all",
            show_default=True,
            help="experts (made under a restricted group) or end-users (with a participant id).",
        ),
        click.option("--participant", help="Only this app participant's corrections."),
        click.option(
            "--since", callback=_time, help="Made at or after this ISO 8601 time (with a timezone)."
        ),
        click.option("--until", callback=_time, help="Made before this ISO 8601 time (with a timezone)."),
    ]

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _agent(session: Session, actor: Actor, name_or_id: str, project_id: uuid.UUID | None) -> Agent:
    """An agent by name or id, in the project given or in any project the operator sees."""
    if project_id is not None:
        projects = [project_id]
    else:
        projects = [project.id for project, _ in identity.visible_projects(session, actor)]
    found = [
        agent
        for project in projects
        for agent in traces.list_agents(session, actor, project)
        if agent.name == name_or_id or str(agent.id) == name_or_id
    ]
    if not found:
        where = "" if project_id is None else " in that project"
        raise click.ClickException(f'No agent "{name_or_id}"{where}.')
    if len(found) > 1:
        raise click.ClickException(f'Agent "{name_or_id}" is in several projects: name one with --project.')
    return found[0]


def _filters(session: Session, actor: Actor, asked: _Asked) -> CorrectionFilters:
    project = identity.find_project(session, actor, asked.project) if asked.project else None
    project_id = project.id if project is not None else None
    agent = _agent(session, actor, asked.agent, project_id) if asked.agent else None
    return CorrectionFilters(
        project_id=project_id,
        agent_id=agent.id if agent is not None else None,
        agent_version=asked.agent_version,
        participant_id=asked.participant,
        statuses=asked.statuses,
        sorted_to=asked.sorted_to,
        source=asked.source,
        since=asked.since,
        until=asked.until,
    ).checked()


# ------------------------------------------------------------------------------------------------- list


def _says(correction: Correction) -> str:
    """What the correction says, in a few words: its verdicts."""
    parts = []
    if correction.decisions is not None:
        parts.append(f"decisions {correction.decisions}")
    if correction.answer is not None:
        parts.append(f"answer {correction.answer}")
    if correction.items:
        wrong = sum(1 for item in correction.items if item.get("verdict") == "wrong")
        parts.append(f"items {wrong}/{len(correction.items)} wrong")
    return ", ".join(parts)


def _by(correction: Correction, names: dict[uuid.UUID, str]) -> str:
    who = names.get(correction.made_by_id, str(correction.made_by_id))
    if correction.participant_id is not None:
        who += f" for {correction.participant_id}"
    return who + (" (expert)" if correction.expert else "")


def _subject(correction: Correction, agents: dict[uuid.UUID, str]) -> str:
    if correction.agent_id is not None:
        name = agents.get(correction.agent_id, str(correction.agent_id))
    elif correction.flow_id is not None:
        name = f"flow {correction.flow_id}"
    else:
        return "-"
    return f"{name} {correction.agent_version}" if correction.agent_version else name


def _rows(session: Session, actor: Actor, found: Sequence[Correction]) -> list[tuple[str, ...]]:
    agents = {
        agent.id: agent.name
        for project_id in {correction.project_id for correction in found}
        for agent in traces.list_agents(session, actor, project_id)
    }
    names = {principal.id: principal.name for principal in identity.list_users(session, actor)}
    return [
        (
            str(c.id),
            c.created_at.isoformat(timespec="seconds"),
            _subject(c, agents),
            c.status,
            c.sorted_to or "-",
            _says(c),
            _by(c, names),
        )
        for c in found
    ]


@corrections.command("list")
@_filter_options(agent_required=False)
@click.option(
    "--limit",
    default=50,
    show_default=True,
    type=click.IntRange(min=1),
    help="Show at most this many, newest first.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per line, as GET /v1/corrections has it."
)
@pass_context
def list_corrections(context: CliContext, /, limit: int, as_json: bool, **options: Any) -> None:
    """Live corrections, newest first: a table, or JSON lines with --json.

    Replaced corrections are not listed, and removed ones only with --status removed.
    """
    with as_operator(context, write=False) as (session, actor):
        filters = _filters(session, actor, _Asked(**options))
        found: list[Correction] = []
        cursor: str | None = None
        while True:
            page = corrections_service.list_corrections(
                session, actor, filters, limit=min(MAX_LIMIT, limit - len(found)), cursor=cursor
            )
            found.extend(page.items)
            cursor = page.next_cursor
            if cursor is None or len(found) >= limit:
                break
        if as_json:
            for correction in found:
                click.echo(dumps(correction_dict(correction)).decode())
        else:
            print_table(
                _rows(session, actor, found), ("ID", "CREATED", "AGENT", "STATUS", "SORTED TO", "SAYS", "BY")
            )
    if cursor is not None:
        click.echo(f"More corrections match: raise --limit (now {limit}) to see them.", err=True)


# ----------------------------------------------------------------------------------------------- export


def _write_pages(
    db: Database,
    actor: Actor,
    filters: CorrectionFilters,
    format_: str,
    sink: IO[bytes],
    shown: Progress,
) -> int:
    """Every match, a page per short read transaction, as the HTTP export reads and encodes them;
    the rows written."""
    sent = 0
    for rows, data in encoded_pages(db, actor, filters, format_):
        sink.write(data)
        sent += rows
        shown.advance(rows)
    return sent


@corrections.command("export")
@_filter_options(agent_required=True)
@click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    default="csv",
    show_default=True,
    help="csv (RFC 4180, a header row) or jsonl (one correction per line).",
)
@output_option
@pass_context
def export_corrections(context: CliContext, /, format_: str, output: Path | None, **options: Any) -> None:
    """Every correction of an agent that the filters match, newest first, streamed as CSV or JSONL.

    The same rows as GET /v1/corrections/export, read a page at a time, and the same audit events:
    corrections-export-started before the first row, corrections-exported when it ends.
    """
    with as_operator(context) as (session, actor):
        filters = _filters(session, actor, _Asked(**options))
        export_id = export_log.started(session, actor, filters, format_)
    db = context.database()

    sent = 0
    outcome = "failed"
    try:
        with open_output(output) as sink, progress("Exporting corrections", noun="correction") as shown:
            if format_ == "csv":
                sink.write(csv_header())
            sent = _write_pages(db, actor, filters, format_, sink, shown)
        outcome = "succeeded"
    except RedlineError as error:
        raise fail(error) from error
    finally:
        with db.write(lock_waits(context)) as session:
            export_log.ended(session, actor, filters, export_id, sent, outcome)
    if output is not None:
        click.echo(f"Wrote {counted(sent, 'correction')} to {output}.")


# -------------------------------------------------------------------------------------------------- set


def _change(sorted_to: str | None, status: str | None, link: str | None, reason: str | None) -> Change:
    """The change as PATCH /v1/corrections/{id} would take it, with its limits on link and reason."""
    try:
        checked = CorrectionChange.model_validate(
            {"sorted_to": sorted_to, "status": status, "link": link, "reason": reason}
        )
    except ValidationError as error:
        problem = error.errors()[0]
        name = "--" + str(problem["loc"][0]).replace("_", "-")
        raise click.BadParameter(str(problem["msg"]), param_hint=name) from None
    return Change(
        sorted_to=checked.sorted_to, status=checked.status, link=checked.link, reason=checked.reason
    )


def _link(link: dict[str, Any]) -> str:
    if link.get("kind") == "url":
        return str(link.get("url"))
    prefix = {"improve-run": "ir-", "suggested-change": "sc-"}.get(str(link.get("kind")), "")
    return f"{prefix}{link.get('id')}"


@corrections.command("set")
@click.argument("correction_id")
@click.option("--sorted-to", type=click.Choice(SORTED_TO), help="Who fixes it.")
@click.option("--status", type=click.Choice(STATUSES), help="Where it is: being-fixed, open or wont-fix.")
@click.option(
    "--link", help="With --status being-fixed: a URL, ir-<Improve run id> or sc-<suggested change id>."
)
@click.option("--reason", help="Why (needed with --status wont-fix).")
@pass_context
def set_correction(
    context: CliContext,
    correction_id: str,
    sorted_to: str | None,
    status: str | None,
    link: str | None,
    reason: str | None,
) -> None:
    """Re-sort the correction CORRECTION_ID, set its status, or both; refused changes say why."""
    try:
        ident = uuid.UUID(correction_id)
    except ValueError:
        raise click.BadParameter(f'"{correction_id}" is not a correction id.') from None
    asked = _change(sorted_to, status, link, reason)
    with as_operator(context) as (session, actor):
        correction = corrections_service.change(session, actor, ident, asked)
        click.echo(
            f"Correction {correction.id} is {correction.status}, "
            + (f"sorted to {correction.sorted_to}." if correction.sorted_to else "unsorted.")
        )
        if correction.link:
            click.echo(f"  link: {_link(correction.link)}")
        if correction.status_note:
            click.echo(f"  note: {correction.status_note.get('text')}")
