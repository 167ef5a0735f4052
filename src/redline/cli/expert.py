"""`redline queue-rules …` and `redline expert-queue …`: a project's queue rules and the runs they queue
for a correction, from a shell, as the local operator.

The same services as `/v1/projects/{projectId}/queue-rules` and `/expert-queue`, so what a rule matches,
its versions and a refusal's sentence are the API's. Rules and runs are named by their ids; agents by
name or id.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import click
from sqlalchemy.orm import Session

from redline.cli.context import CliContext, as_operator, pass_context, print_table, when_text
from redline.cli.corrections import _agent, _time
from redline.db.paging import MAX_LIMIT
from redline.groups import service as groups
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.queues.expert import engine as expert
from redline.queues.expert import listing as expert_listing
from redline.queues.expert import rules as expert_rules
from redline.queues.expert.progress import progress, progress_dict
from redline.queues.matching import PINNED
from redline.queues.models import QueueRule
from redline.queues.tallies import day_of
from redline.stats import results as results_service
from redline.stats.group_agreement_served import rule_agreement
from redline.stats.stored_figures import ask_for_figures
from redline.traces import service as traces

F = TypeVar("F", bound=Callable[..., Any])


@click.group("queue-rules")
def queue_rules_group() -> None:
    """Queue rules: each picks completed runs of a project for people to correct, as they end."""


@click.group("expert-queue")
def expert_queue_group() -> None:
    """The expert queue: the runs the queue rules picked, waiting for a correction."""


# ------------------------------------------------------------------------------------------- arguments


def _id(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise click.BadParameter(f'"{value}" is not {what} id.') from None


def _when_options(command: F) -> F:
    """What a rule matches, as `create`, `set` and `preview` take it."""
    options = [
        click.option(
            "--agent", "agents", multiple=True, help="Runs of this agent (name or id); repeat for more."
        ),
        click.option("--flow", "flows", multiple=True, help="Runs of this flow (its id); repeat for more."),
        click.option(
            "--version",
            "versions",
            multiple=True,
            help=f'Runs of this version exactly; repeat for more, or "{PINNED}" for the pinned version.',
        ),
        click.option(
            "--include-dry-runs/--no-dry-runs",
            default=None,
            help="Take dry runs too [default: leave them out].",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _matching(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    agents: Sequence[str],
    flows: Sequence[str],
    versions: Sequence[str],
    include_dry_runs: bool | None,
) -> dict[str, Any] | None:
    """`when` as the API takes it, from the options; None when no option says anything about it."""
    when: dict[str, Any] = {}
    if agents:
        when["agentIds"] = [str(_agent(session, actor, agent, project_id).id) for agent in agents]
    if flows:
        when["flowIds"] = list(flows)
    if versions:
        when["versions"] = list(versions)
    if include_dry_runs is not None:
        when["includeDryRuns"] = include_dry_runs
    return when or None


def _rule(session: Session, actor: Actor, rule_id: str) -> expert_rules.RuleView:
    return expert_rules.find_rule(session, actor, _id(rule_id, "a queue rule"))


# ------------------------------------------------------------------------------------------------ words


def _takes(rule: QueueRule) -> str:
    return "every match" if rule.sample >= 1 else f"{rule.sample * 100:g}%"


def _wants(rule: QueueRule, names: dict[uuid.UUID, str]) -> str:
    wanted = (
        "any correction"
        if rule.corrector_group_id is None
        else names.get(rule.corrector_group_id, str(rule.corrector_group_id))
    )
    return wanted if rule.correctors_wanted == 1 else f"{wanted}, from {rule.correctors_wanted} people"


def _group_names(session: Session, project_id: uuid.UUID) -> dict[uuid.UUID, str]:
    return {group.id: group.name for group in groups.applying_to_project(session, project_id)}


def _matches(rule: QueueRule) -> str:
    return json.dumps(rule.when, separators=(",", ":"), sort_keys=True)


def _rule_rows(views: Sequence[expert_rules.RuleView], names: dict[uuid.UUID, str]) -> list[tuple[str, ...]]:
    return [
        (
            str(view.rule.rule_id),
            view.rule.name,
            str(view.rule.version),
            _matches(view.rule),
            _takes(view.rule),
            _wants(view.rule, names),
            str(view.rule.max_open) if view.rule.max_open is not None else "none",
            str(view.open_items),
            "yes" if view.rule.enabled else "no",
        )
        for view in views
    ]


RULE_HEADER = ("ID", "NAME", "VERSION", "MATCHES", "TAKES", "WANTS", "CAP", "OPEN", "ENABLED")


def _show(session: Session, view: expert_rules.RuleView, said: str) -> None:
    click.echo(f'{said} queue rule "{view.rule.name}" ({view.rule.rule_id}), version {view.rule.version}.')
    print_table(_rule_rows([view], _group_names(session, view.rule.project_id)), RULE_HEADER)


# --------------------------------------------------------------------------------------------- the rules


@queue_rules_group.command("list")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, as the API has them.")
@pass_context
def list_rules(context: CliContext, project: str, as_json: bool) -> None:
    """The project's live queue rules (each its newest version), oldest first."""
    with as_operator(context, write=False) as (session, actor):
        project_id = identity.find_project(session, actor, project).id
        views: list[expert_rules.RuleView] = []
        cursor: str | None = None
        while True:
            page = expert_rules.list_rules(session, actor, project_id, limit=MAX_LIMIT, cursor=cursor)
            views.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        if as_json:
            for view in views:
                click.echo(dumps(expert_rules.view_dict(view)).decode())
            return
        print_table(_rule_rows(views, _group_names(session, project_id)), RULE_HEADER)


@queue_rules_group.command("create")
@click.argument("name")
@click.option("--project", required=True, help="Project name or id.")
@_when_options
@click.option("--sample", type=float, help="The share of matching runs to take, 0.05 for 5% [default: 1].")
@click.option("--max-open", type=int, help="Add nothing while this many of its runs wait [default: no cap].")
@click.option("--group", help="The corrector group (id) whose correction it wants [default: any correction].")
@click.option(
    "--correctors",
    type=int,
    help="From how many distinct people, 1 to 20 [default: 1]: the run waits for all.",
)
@click.option("--disabled", is_flag=True, help="Make it switched off: it queues nothing until enabled.")
@pass_context
def create_rule(
    context: CliContext,
    name: str,
    project: str,
    agents: tuple[str, ...],
    flows: tuple[str, ...],
    versions: tuple[str, ...],
    include_dry_runs: bool | None,
    sample: float | None,
    max_open: int | None,
    group: str | None,
    correctors: int | None,
    disabled: bool,
) -> None:
    """Make the queue rule NAME: it picks matching runs for a correction as they complete, from now on
    (`queue-recent` catches it up on earlier ones)."""
    with as_operator(context) as (session, actor):
        project_id = identity.find_project(session, actor, project).id
        fields: dict[str, Any] = {"name": name, "enabled": not disabled}
        when = _matching(session, actor, project_id, agents, flows, versions, include_dry_runs)
        if when is not None:
            fields["when"] = when
        if sample is not None:
            fields["sample"] = sample
        if max_open is not None:
            fields["max_open"] = max_open
        if group is not None:
            fields["corrector_group_id"] = _id(group, "a corrector group")
        if correctors is not None:
            fields["correctors_wanted"] = correctors
        _show(session, expert_rules.create_rule(session, actor, project_id, fields), "Made")


@queue_rules_group.command("get")
@click.argument("rule_id")
@click.option("--json", "as_json", is_flag=True, help="The rule as the API has it.")
@pass_context
def get_rule(context: CliContext, rule_id: str, as_json: bool) -> None:
    """The queue rule RULE_ID: its newest version and the runs waiting for it."""
    with as_operator(context, write=False) as (session, actor):
        view = _rule(session, actor, rule_id)
        if as_json:
            click.echo(dumps(expert_rules.view_dict(view)).decode())
            return
        _show(session, view, "The")
        if view.rule.unregistered_at is not None:
            click.echo(f"Stopped {when_text(view.rule.unregistered_at)}: it queues nothing more.")


@queue_rules_group.command("set")
@click.argument("rule_id")
@click.option("--name", help="A new name.")
@_when_options
@click.option("--any-run", is_flag=True, help="Match every completed run (clears the options above).")
@click.option("--sample", type=float, help="The share of matching runs to take.")
@click.option("--max-open", type=int, help="Add nothing while this many of its runs wait.")
@click.option("--no-cap", is_flag=True, help="Lift the cap.")
@click.option("--group", help="The corrector group (id) whose correction it wants.")
@click.option("--any-correction", is_flag=True, help="Want any correction, of no group in particular.")
@click.option("--correctors", type=int, help="From how many distinct people, 1 to 20.")
@click.option("--enable/--disable", "enabled", default=None, help="Switch it on or off.")
@pass_context
def set_rule(
    context: CliContext,
    rule_id: str,
    name: str | None,
    agents: tuple[str, ...],
    flows: tuple[str, ...],
    versions: tuple[str, ...],
    include_dry_runs: bool | None,
    any_run: bool,
    sample: float | None,
    max_open: int | None,
    no_cap: bool,
    group: str | None,
    any_correction: bool,
    correctors: int | None,
    enabled: bool | None,
) -> None:
    """Write the next version of the queue rule RULE_ID with what the options change; the rest stays.
    The match options (--agent, --flow, --version, dry runs) replace what it matches as a whole."""
    if no_cap and max_open is not None:
        raise click.UsageError("Give --max-open or --no-cap, not both.")
    if any_correction and group is not None:
        raise click.UsageError("Give --group or --any-correction, not both.")
    with as_operator(context) as (session, actor):
        view = _rule(session, actor, rule_id)
        project_id = view.rule.project_id
        changes: dict[str, Any] = {}
        if name is not None:
            changes["name"] = name
        when = _matching(session, actor, project_id, agents, flows, versions, include_dry_runs)
        if any_run and when is not None:
            raise click.UsageError("--any-run clears what the rule matches: give it alone.")
        if any_run or when is not None:
            changes["when"] = when or {}
        if sample is not None:
            changes["sample"] = sample
        if max_open is not None or no_cap:
            changes["max_open"] = max_open
        if group is not None or any_correction:
            changes["corrector_group_id"] = _id(group, "a corrector group") if group else None
        if correctors is not None:
            changes["correctors_wanted"] = correctors
        if enabled is not None:
            changes["enabled"] = enabled
        new = expert_rules.update_rule(session, actor, project_id, view.rule.rule_id, changes)
        _show(session, new, "Changed")


@queue_rules_group.command("versions")
@click.argument("rule_id")
@pass_context
def rule_versions(context: CliContext, rule_id: str) -> None:
    """Every version of the queue rule RULE_ID, newest first: who wrote it, when, and what it changed."""
    with as_operator(context, write=False) as (session, actor):
        view = _rule(session, actor, rule_id)
        names = {principal.id: principal.name for principal in identity.list_users(session, actor)}
        cursor: str | None = None
        rows = []
        while True:
            page = expert_rules.versions(
                session, actor, view.rule.project_id, view.rule.rule_id, limit=MAX_LIMIT, cursor=cursor
            )
            for version in page.items:
                changed = [
                    f"{change['field']}: {json.dumps(change['from'])} → {json.dumps(change['to'])}"
                    for change in version.changes
                ]
                by = version.rule.created_by
                rows.append(
                    (
                        str(version.rule.version),
                        names.get(by, str(by)) if by else "operator",
                        when_text(version.rule.created_at),
                        "; ".join(changed) or ("created" if version.rule.version == 1 else "no change"),
                    )
                )
            cursor = page.next_cursor
            if cursor is None:
                break
    print_table(rows, ("VERSION", "BY", "AT", "CHANGED"))


@queue_rules_group.command("remove")
@click.argument("rule_id")
@pass_context
def remove_rule(context: CliContext, rule_id: str) -> None:
    """Stop the queue rule RULE_ID: it queues nothing more; its versions and the runs it queued stay."""
    with as_operator(context) as (session, actor):
        view = _rule(session, actor, rule_id)
        expert_rules.unregister(session, actor, view.rule.project_id, view.rule.rule_id)
        click.echo(
            f'Stopped queue rule "{view.rule.name}" ({view.rule.rule_id}); '
            f"the {view.open_items} runs it has waiting stay in the queue."
        )


@queue_rules_group.command("preview")
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--rule", "rule_id", help="Sample as this rule does (with no match options, try the rule as it is)."
)
@_when_options
@click.option("--sample", type=float, help="The share of matches [default: the rule's, or 1].")
@click.option(
    "--last",
    type=int,
    default=expert_rules.PREVIEW_LAST,
    show_default=True,
    help=f"How many of the newest runs to try it on, up to {expert_rules.MAX_PREVIEW_LAST}.",
)
@pass_context
def preview(
    context: CliContext,
    project: str,
    rule_id: str | None,
    agents: tuple[str, ...],
    flows: tuple[str, ...],
    versions: tuple[str, ...],
    include_dry_runs: bool | None,
    sample: float | None,
    last: int,
) -> None:
    """How many of the project's recent runs a rule would have queued, with its sample but not its cap."""
    with as_operator(context, write=False) as (session, actor):
        project_id = identity.find_project(session, actor, project).id
        asked = expert_rules.PreviewAsk(
            when=_matching(session, actor, project_id, agents, flows, versions, include_dry_runs),
            sample=sample,
            last=last,
            rule_id=_id(rule_id, "a queue rule") if rule_id else None,
        )
        found = expert_rules.preview(session, actor, project_id, asked)
    about = "about " if found.estimate else ""
    click.echo(f"It would have queued {about}{found.matched} of the last {found.considered} runs.")


@queue_rules_group.command("queue-recent")
@click.argument("rule_id")
@click.option("--last", type=int, help=f"The newest runs, up to {expert_rules.MAX_RECENT_LAST:,}.")
@click.option(
    "--since", callback=_time, help="Runs completed at or after this ISO 8601 time (with a timezone)."
)
@pass_context
def queue_recent(context: CliContext, rule_id: str, last: int | None, since: datetime | None) -> None:
    """Queue the matches of the rule RULE_ID among the project's recent runs (the last 100 unless
    --last or --since say otherwise), sampled as it samples, whatever its cap."""
    with as_operator(context) as (session, actor):
        view = _rule(session, actor, rule_id)
        outcome = expert_rules.queue_recent(
            session, actor, view.rule.project_id, view.rule.rule_id, last=last, since=since
        )
    click.echo(
        f"Queued {outcome.queued}; already waiting for it: {outcome.already_queued}; "
        f"already corrected or dismissed: {outcome.already_reviewed}."
    )


@queue_rules_group.command("results")
@click.argument("rule_id")
@click.option("--since", callback=_time, help="Only the runs queued on or after this time's UTC day.")
@pass_context
def rule_results(context: CliContext, rule_id: str, since: datetime | None) -> None:
    """The results of the rule RULE_ID, a line for each rule version and agent version, never pooled;
    then how far its corrector groups agree on the runs it queued (as the job worker last computed it)."""
    with as_operator(context, write=False) as (session, actor):
        view = _rule(session, actor, rule_id)
        found = results_service.rule_results(
            session,
            actor,
            view.rule.project_id,
            view.rule.rule_id,
            since_day=day_of(since) if since else None,
        )
        served = rule_agreement(session, found)
    if served.asking is not None:
        with as_operator(context) as (session, _):
            ask_for_figures(session, served.asking)
    agreement = served.by_rule[found.rule_id]
    rows = [
        (
            str(group.rule_version),
            group.agent_version or "-",
            *(
                str(count)
                for count in (
                    group.added,
                    group.open,
                    group.corrected,
                    group.dismissed,
                    group.erased,
                    group.skipped_by_cap,
                    group.corrections,
                    group.runs_with_corrections,
                )
            ),
            f"{group.yes_share:.1%}" if group.yes_share is not None else "-",
        )
        for group in found.groups
    ]
    header = ("RULE VERSION", "AGENT VERSION", "ADDED", "OPEN", "CORRECTED", "DISMISSED", "ERASED")
    print_table(rows, (*header, "SKIPPED BY CAP", "CORRECTIONS", "RUNS CORRECTED", "MARKED RIGHT"))
    for sentence in [agreement["stateSentence"], *agreement["sentences"]]:
        click.echo(sentence)


# ------------------------------------------------------------------------------------------- the queue


@expert_queue_group.command("list")
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(expert.STATES),
    help="open, corrected, dismissed or erased; repeat for more [default: all].",
)
@click.option("--rule", "rule_id", help="Only runs this rule (id) queued.")
@click.option("--agent", help="Only runs of this agent (name or id).")
@click.option("--group", help="Only runs a rule of which wants this corrector group (id).")
@click.option("--added-after", callback=_time, help="Queued at or after this ISO 8601 time.")
@click.option("--closed-after", callback=_time, help="Closed at or after this ISO 8601 time.")
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(min=0), help="Show at most this many."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, as the API has them.")
@pass_context
def list_items(
    context: CliContext,
    project: str,
    states: tuple[str, ...],
    rule_id: str | None,
    agent: str | None,
    group: str | None,
    added_after: datetime | None,
    closed_after: datetime | None,
    limit: int,
    as_json: bool,
) -> None:
    """The runs in the expert queue, oldest first, and how many the filters match."""
    with as_operator(context, write=False) as (session, actor):
        project_id = identity.find_project(session, actor, project).id
        filters = expert_listing.QueueFilters(
            states=states,
            rule_id=_id(rule_id, "a queue rule") if rule_id else None,
            agent_id=_agent(session, actor, agent, project_id).id if agent else None,
            corrector_group_id=_id(group, "a corrector group") if group else None,
            added_after=added_after,
            closed_after=closed_after,
        )
        views: list[expert_listing.ItemView] = []
        cursor: str | None = None
        while True:
            page, total = expert_listing.list_items(
                session, actor, project_id, filters, limit=min(MAX_LIMIT, limit - len(views)), cursor=cursor
            )
            views.extend(page.items)
            cursor = page.next_cursor
            if cursor is None or len(views) >= limit:
                break
        agents = {a.id: a.name for a in traces.list_agents(session, actor, project_id)}
        names = _group_names(session, project_id)
    if as_json:
        for view in views:
            click.echo(dumps(expert_listing.item_dict(view)).decode())
    else:
        rows = [
            (
                str(view.item.run_id),
                agents.get(view.item.agent_id, str(view.item.agent_id))
                if view.item.agent_id
                else f"flow {view.item.flow_id}",
                view.item.agent_version or "-",
                view.item.state,
                ", ".join(rule.name for rule in view.rules),
                ", ".join(
                    names.get(rule.wanted_group_id, str(rule.wanted_group_id))
                    if rule.wanted_group_id
                    else "any"
                    for rule in view.rules
                ),
                str(sum(view.progress.values())),
                when_text(view.item.added_at),
            )
            for view in views
        ]
        print_table(rows, ("RUN", "AGENT", "VERSION", "STATE", "RULES", "WANTS", "CORRECTIONS", "ADDED"))
    click.echo(f"{total} in all.", err=True)


def _project_of_run(session: Session, actor: Actor, run_id: str) -> tuple[uuid.UUID, uuid.UUID]:
    run = traces.readable_trace(session, actor, _id(run_id, "a run"), "read")
    return run.project_id, run.id


@expert_queue_group.command("dismiss")
@click.argument("run_id")
@click.option("--reason", help="Why the run isn't worth correcting (up to 500 characters).")
@pass_context
def dismiss(context: CliContext, run_id: str, reason: str | None) -> None:
    """Take the run RUN_ID out of the expert queue."""
    if reason is not None and len(reason) > 500:
        raise click.BadParameter("at most 500 characters.", param_hint="--reason")
    with as_operator(context) as (session, actor):
        project_id, run = _project_of_run(session, actor, run_id)
        expert.dismiss(session, actor, project_id, run, reason)
    click.echo(f"Dismissed run {run} from the expert queue" + (f": {reason}" if reason else "."))


@expert_queue_group.command("reopen")
@click.argument("run_id")
@pass_context
def reopen(context: CliContext, run_id: str) -> None:
    """Put the dismissed run RUN_ID back in the expert queue."""
    with as_operator(context) as (session, actor):
        project_id, run = _project_of_run(session, actor, run_id)
        expert.reopen(session, actor, project_id, run)
    click.echo(f"Run {run} waits in the expert queue again.")


@expert_queue_group.command("progress")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--json", "as_json", is_flag=True, help="As the API has it.")
@pass_context
def queue_progress(context: CliContext, project: str, as_json: bool) -> None:
    """Each corrector's part in the expert queue: the runs they corrected in a place, and hold now."""
    with as_operator(context, write=False) as (session, actor):
        project_id = identity.find_project(session, actor, project).id
        found = progress(session, actor, project_id)
    if as_json:
        click.echo(dumps(progress_dict(found)).decode())
        return
    rows = [
        (one.name or "someone since removed", str(one.principal_id), str(one.corrected), str(one.held))
        for one in found.correctors
    ]
    print_table(rows, ("CORRECTOR", "ID", "CORRECTED", "HOLDS"))
    click.echo(f"{found.waiting} waiting, {found.held} of them held now.", err=True)
