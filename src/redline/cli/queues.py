"""`redline queues list|create|update|show|progress|agreement|add-items|remove-items|automations`:
annotation queues from a shell, as the local operator.

The same services as `/v2/annotation-queues`, so items are added once however often they are sent, the
counts are the queue's own, and a refusal is the API's sentence. A queue is named by its id or, when
that is unambiguous, by its name.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click
from sqlalchemy.orm import Session

from redline.cli.context import CliContext, as_operator, pass_context, print_table, when_text
from redline.cli.reviews import key_in
from redline.db import parse_id
from redline.db.id_pages import MAX_LIMIT, every_item
from redline.identity import service as identity
from redline.identity.service import REVIEWER_ROLES, Actor
from redline.queues.annotation import adjudication, progress
from redline.queues.annotation import automations as automations_service
from redline.queues.annotation import service as queues
from redline.queues.annotation.items import WHOLE_TRACE
from redline.queues.annotation.reviewers import is_blind, who_reviews
from redline.queues.annotation.schemas import (
    MAX_ITEMS_PER_CALL,
    AutomationIn,
    ItemRef,
    QueueChange,
    QueueIn,
    ReviewersIn,
    when_to_filters,
)
from redline.queues.annotation.service import QueueView
from redline.queues.models import Queue, QueueItem, QueueRule
from redline.stats import agreement_words, disagreement_words
from redline.stats.agreement_job import ask_for_figures
from redline.stats.agreement_served import COMPUTING, computed_now, served_agreement
from redline.stats.disagreements import Disagreement, disagreements
from redline.stats.disagreements_wire import disagreements_dict


@click.group("queues")
def queues_group() -> None:
    """Annotation queues: traces waiting for people, with the review keys they are reviewed with."""


def _all_queues(session: Session, actor: Actor, search: str | None = None) -> list[QueueView]:
    return list(
        every_item(
            lambda after: queues.list_queues(
                session, actor, limit=MAX_LIMIT, starting_after=after, search=search
            )
        )
    )


def find_queue(session: Session, actor: Actor, name_or_id: str) -> QueueView:
    """A queue by id, or by its exact name when one queue has it."""
    try:
        return queues.get_queue(session, actor, uuid.UUID(name_or_id))
    except ValueError:
        pass
    named = [view for view in _all_queues(session, actor, name_or_id) if view.queue.name == name_or_id]
    if not named:
        raise queues.queue_not_found(actor, name_or_id)
    if len(named) > 1:
        raise click.ClickException(f'{len(named)} queues are named "{name_or_id}": name one by its id.')
    return named[0]


def _project_names(session: Session, actor: Actor) -> dict[uuid.UUID, str]:
    return {project.id: project.name for project, _ in identity.visible_projects(session, actor)}


def _reviewing_options(command: Any) -> Any:
    """How a queue is reviewed, for create and update: overlap, hold, blind and who may review."""
    options = [
        click.option(
            "--reviewers-per-item",
            type=int,
            help="How many distinct people review each item, 1 to 20 (a new queue: 1).",
        ),
        click.option(
            "--hold-minutes",
            type=int,
            help="How many minutes the item a reviewer opens is held for them, 1 to 1440 (a new queue: 10).",
        ),
        click.option(
            "--blind",
            type=click.Choice(["on", "off", "auto"]),
            help="Whether reviewers are blind to each other's values; auto (a new queue's): on when more "
            "than one reviews each item.",
        ),
        click.option(
            "--reviewer",
            "reviewer_names",
            multiple=True,
            help="A user (name or id) who may review; repeat for each.",
        ),
        click.option(
            "--reviewer-group",
            "reviewer_groups",
            multiple=True,
            help="A corrector group (id): those who may correct as it may review; repeat for each.",
        ),
        click.option(
            "--min-reviewer-role",
            type=click.Choice(REVIEWER_ROLES),
            help="Users of this reviewer role or above may review.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _reviewing(
    session: Session,
    actor: Actor,
    *,
    reviewers_per_item: int | None,
    hold_minutes: int | None,
    blind: str | None,
    reviewer_names: tuple[str, ...],
    reviewer_groups: tuple[str, ...],
    min_reviewer_role: str | None,
) -> dict[str, Any]:
    """The reviewing fields given, as QueueIn and QueueChange take them (none given: none there)."""
    fields: dict[str, Any] = {}
    if reviewers_per_item is not None:
        fields["reviewers_per_item"] = reviewers_per_item
    if hold_minutes is not None:
        fields["hold_minutes"] = hold_minutes
    if blind is not None:
        fields["blind"] = {"on": True, "off": False, "auto": None}[blind]
    if reviewer_names or reviewer_groups or min_reviewer_role:
        fields["reviewers"] = ReviewersIn(
            principal_ids=[str(identity.find_user(session, actor, name).id) for name in reviewer_names],
            group_ids=list(reviewer_groups),
            min_reviewer_role=min_reviewer_role,
        )
    return fields


def _reviewing_text(session: Session, queue: Queue) -> str:
    """How the queue is reviewed, in a line: "2 reviewers per item, blind; holds of 10 minutes; …"."""
    per_item = queue.reviewers_per_item
    return (
        f"{per_item} reviewer{'s' if per_item != 1 else ''} per item"
        f"{', blind' if is_blind(queue) else ''}; holds of {queue.hold_minutes} minutes; "
        f"reviewed by {who_reviews(session, queue)}"
    )


# ------------------------------------------------------------------------------------------ the queues


@queues_group.command("list")
@click.option("--project", help="Only this project's queues (name or id) [default: every project].")
@click.option("--search", help="Only queues whose name holds this, in any case.")
@pass_context
def list_queues(context: CliContext, project: str | None, search: str | None) -> None:
    """Annotation queues, newest first, with how many items each holds and how many are reviewed."""
    with as_operator(context, write=False) as (session, actor):
        only = identity.find_project(session, actor, project).id if project else None
        names = _project_names(session, actor)
        rows = [
            (
                str(view.queue.id),
                view.queue.name,
                names.get(view.queue.project_id, "-") if view.queue.project_id else "-",
                str(view.items_count),
                str(view.reviewed_count),
                str(view.items_count - view.reviewed_count),
            )
            for view in _all_queues(session, actor, search)
            if only is None or view.queue.project_id == only
        ]
    print_table(rows, ("ID", "NAME", "PROJECT", "ITEMS", "REVIEWED", "TO REVIEW"))


@queues_group.command("create")
@click.argument("name")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--description", default="", help="What reviewers should look for.")
@click.option(
    "--review-key",
    "review_keys",
    multiple=True,
    help="A human review key (or id) of the project to review with, in order; repeat for each "
    "[default: every key of the project].",
)
@_reviewing_options
@pass_context
def create_queue(
    context: CliContext,
    /,
    name: str,
    project: str,
    description: str,
    review_keys: tuple[str, ...],
    **reviewing: Any,
) -> None:
    """Make the annotation queue NAME in a project."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        asked = _reviewing(session, actor, **reviewing)
        view = queues.create_queue(
            session,
            actor,
            QueueIn(display_name=name, description=description, project_id=str(target.id), **asked),
        )
        if review_keys:
            ids = [str(key_in(session, actor, target, key).id) for key in review_keys]
            view = queues.update_queue(session, actor, view.queue.id, QueueChange(human_review_ids=ids))
        keys = ", ".join(key.key for key in queues.review_keys(session, view.queue)) or "none yet"
        click.echo(f'Created queue "{view.queue.name}" ({view.queue.id}) in project "{target.name}".')
        click.echo(f"  reviewed with: {keys}")
        click.echo(f"  {_reviewing_text(session, view.queue)}")


@queues_group.command("update")
@click.argument("queue")
@click.option("--name", help="A new name.")
@click.option("--description", help="A new description.")
@_reviewing_options
@click.option(
    "--anyone",
    is_flag=True,
    help="Let anyone who may write in the project review again (lifts --reviewer, --reviewer-group and "
    "--min-reviewer-role).",
)
@pass_context
def update_queue(
    context: CliContext,
    /,
    queue: str,
    name: str | None,
    description: str | None,
    anyone: bool,
    **reviewing: Any,
) -> None:
    """Change QUEUE's name, description or how it is reviewed: only what is given changes. A new number of
    reviewers per item re-decides which items are fully reviewed."""
    with as_operator(context) as (session, actor):
        view = find_queue(session, actor, queue)
        asked = _reviewing(session, actor, **reviewing)
        if anyone and "reviewers" in asked:
            raise click.UsageError("--anyone lifts the reviewers that --reviewer and the like would name.")
        fields: dict[str, Any] = {**asked}
        if anyone:
            fields["reviewers"] = None
        if name is not None:
            fields["display_name"] = name
        if description is not None:
            fields["description"] = description
        if not fields:
            raise click.UsageError("Give at least one thing to change.")
        after = queues.update_queue(session, actor, view.queue.id, QueueChange(**fields))
        click.echo(
            f'Queue "{after.queue.name}" ({after.queue.id}): '
            f"{after.reviewed_count} of {after.items_count} reviewed."
        )
        click.echo(f"  {_reviewing_text(session, after.queue)}")


@queues_group.command("progress")
@click.argument("queue")
@pass_context
def queue_progress(context: CliContext, queue: str) -> None:
    """How far QUEUE (name or id) has come: its items fully reviewed, partly and untouched, then each
    reviewer's reviewed, held and skipped items."""
    with as_operator(context, write=False) as (session, actor):
        view = find_queue(session, actor, queue)
        found = progress.progress(session, actor, view.queue.id)
    click.echo(
        f'Queue "{view.queue.name}": {found.items} items, {found.reviewed} fully reviewed, '
        f"{found.partly} partly, {found.untouched} untouched ({found.reviewers_per_item} "
        f"reviewer{'s' if found.reviewers_per_item != 1 else ''} per item); {found.held} held now."
    )
    if not found.reviewers:
        click.echo("Nobody has reviewed, held or skipped an item yet.")
        return
    click.echo("")
    print_table(
        [
            (one.name or str(one.principal_id), str(one.reviewed), str(one.held), str(one.skipped))
            for one in found.reviewers
        ],
        ("REVIEWER", "REVIEWED", "HELD", "SKIPPED"),
    )


def _items(session: Session, actor: Actor, queue_id: uuid.UUID, limit: int) -> tuple[list[QueueItem], bool]:
    """The queue's first `limit` items in review order, and whether there are more."""
    found: list[QueueItem] = []
    after: str | None = None
    while len(found) < limit:
        page = queues.list_items(
            session, actor, queue_id, limit=min(MAX_LIMIT, limit - len(found)), starting_after=after
        )
        found.extend(page.items)
        if not page.has_more or not page.items:
            return found, False
        after = str(page.items[-1].id)
    return found, True


def _added_by(item: QueueItem, names: dict[uuid.UUID, str]) -> str:
    if item.added_by_rules:
        return "automation"
    return names.get(item.added_by, "operator") if item.added_by else "operator"


@queues_group.command("show")
@click.argument("queue")
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(min=1), help="Show at most this many items."
)
@pass_context
def show_queue(context: CliContext, queue: str, limit: int) -> None:
    """The queue QUEUE (name or id): its counts, review keys and first items in review order."""
    with as_operator(context, write=False) as (session, actor):
        view = find_queue(session, actor, queue)
        names = {principal.id: principal.name for principal in identity.list_users(session, actor)}
        keys = ", ".join(key.key for key in queues.review_keys(session, view.queue)) or "none"
        items, more = _items(session, actor, view.queue.id, limit)
        project = (
            _project_names(session, actor).get(view.queue.project_id, "-") if view.queue.project_id else "-"
        )
        click.echo(f'Queue "{view.queue.name}" ({view.queue.id}), project "{project}"')
        if view.queue.description:
            click.echo(f"  {view.queue.description}")
        click.echo(f"  {view.items_count} items, {view.reviewed_count} reviewed; reviewed with: {keys}")
        click.echo(f"  {_reviewing_text(session, view.queue)}")
        rows = [
            (
                str(item.seq),
                str(item.id),
                str(item.trace_id) if item.trace_id else f"datapoint {item.datapoint_id}",
                item.span_key if item.span_key != WHOLE_TRACE else "(whole trace)",
                (
                    f"{names.get(item.reviewed_by, 'operator') if item.reviewed_by else 'operator'} "
                    f"{when_text(item.reviewed_at)}"
                )
                if item.reviewed_at
                else "-",
                _added_by(item, names),
            )
            for item in items
        ]
    if rows:
        click.echo("")
        print_table(rows, ("#", "ITEM", "TRACE", "SPAN", "REVIEWED", "ADDED BY"))
    if more:
        click.echo(f"More items: raise --limit (now {limit}) to see them.", err=True)


def _agreement_row(key: dict[str, Any]) -> tuple[str, ...]:
    """A key's figures as the table shows them; "-" where there is none to show."""
    measured = key["metric"] is not None
    bounds = key["range"]
    return (
        key["key"],
        key["metric"] or "-",
        str(key["items"]) if measured else "-",
        str(key["values"]) if measured else "-",
        agreement_words.figure(key["alpha"]) if key["alpha"] is not None else "-",
        agreement_words.range_text(bounds["low"], bounds["high"]) if bounds else "-",
        agreement_words.percent(key["share_agreed"]) if key["share_agreed"] is not None else "-",
    )


@queues_group.command("agreement")
@click.argument("queue")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, as GET …/agreement answers it.")
@click.option(
    "--now",
    is_flag=True,
    help="Compute the figures in this process, whatever the queue's size, instead of answering as the "
    "server does (a large queue's stored figures, or that they are being computed).",
)
@pass_context
def agreement(context: CliContext, queue: str, as_json: bool, now: bool) -> None:
    """How far the reviewers of QUEUE (name or id) agree, per review key: Krippendorff's α with its 95%
    range, the items and values it rests on, the share of items everyone agreed on, then each key's
    sentences, κ for each pair of reviewers among them (docs/api-queues-datasets.md). A large queue's as
    the job worker last computed them, with their as-of time, as the server answers; --now computes them
    here."""
    live_items = context.settings().agreement_live_items
    with as_operator(context, write=False) as (session, actor):
        found = find_queue(session, actor, queue).queue
        name = found.name
        served = None if now else served_agreement(session, actor, found.id, live_items)
        answer = computed_now(session, actor, found.id) if served is None else served.answer
    if served is not None and served.wants_job:
        with as_operator(context) as (session, _):
            ask_for_figures(session, served.queue_id, served.reader_id)
    if as_json:
        click.echo(json.dumps(answer, ensure_ascii=False))
        return
    if answer["state_sentence"]:
        click.echo(answer["state_sentence"])
        click.echo("--now computes the figures here, in this process.", err=True)
    keys = answer["keys"]
    if not keys:
        if answer["state"] != COMPUTING:
            click.echo(f'"{name}" is reviewed with no human review: there is nothing to agree on.')
        return
    print_table(
        [_agreement_row(key) for key in keys],
        ("KEY", "METRIC", "ITEMS", "VALUES", "ALPHA", "95% RANGE", "AGREED"),
    )
    for key in keys:
        click.echo("")
        for sentence in key["sentences"]:
            click.echo(sentence)


def _disagreement_row(found: Disagreement) -> tuple[str, ...]:
    settled = found.adjudication
    return (
        str(found.item.seq),
        str(found.item.id),
        found.review_key.key,
        disagreement_words.apart_text(found),
        disagreement_words.said_text(found.values),
        disagreement_words.value_text(settled.value) if settled else "-",
    )


@queues_group.command("disagreements")
@click.argument("queue")
@click.option("--key", help="Only this review key's disagreements.")
@click.option("--open", "only_open", is_flag=True, help="Only those with no settled value yet.")
@click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=50, show_default=True, help="How many.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, as GET …/disagreements answers it.")
@pass_context
def list_disagreements(
    context: CliContext, queue: str, key: str | None, only_open: bool, limit: int, as_json: bool
) -> None:
    """The items of QUEUE (name or id) whose reviewers gave different values, per review key, most apart
    first: each value with who gave it, and the value settled, if any (docs/api-queues-datasets.md)."""
    with as_operator(context, write=False) as (session, actor):
        queue_id = find_queue(session, actor, queue).queue.id
        page = disagreements(session, actor, queue_id, limit=limit, key=key, only_open=only_open)
        answer = disagreements_dict(page)
        rows = [_disagreement_row(found) for found in page.items]
    if as_json:
        click.echo(json.dumps(answer, ensure_ascii=False))
        return
    if not rows:
        click.echo("No disagreements: on every item, its reviewers gave the same values.")
        return
    print_table(rows, ("#", "ITEM", "KEY", "APART", "VALUES", "SETTLED"))
    if page.has_more:
        click.echo(f"More disagreements: raise --limit (now {limit}) to see them.", err=True)


@queues_group.command("adjudicate")
@click.argument("queue")
@click.argument("item")
@click.argument("key")
@click.argument("value", nargs=-1)
@click.option("--note", help="Why this value.")
@click.option("--clear", is_flag=True, help="Take the settled value back instead.")
@pass_context
def adjudicate(
    context: CliContext,
    queue: str,
    item: str,
    key: str,
    value: tuple[str, ...],
    note: str | None,
    clear: bool,
) -> None:
    """Settle the value of ITEM (its id) in QUEUE under KEY where its reviewers disagree: VALUE as a
    reviewer would give it (each option of a multi-select, space apart), checked as theirs are; their own
    values stay. Settling again replaces it; --clear takes it back."""
    if clear == bool(value):
        raise click.UsageError("Give VALUE to settle, or --clear to take the settled value back.")
    with as_operator(context) as (session, actor):
        queue_id = find_queue(session, actor, queue).queue.id
        item_id = parse_id(item)
        if item_id is None:
            raise queues.item_not_found(actor, item)
        if clear:
            adjudication.take_back(session, actor, queue_id, item_id, key)
            click.echo(f'Took back the settled value of item {item_id} under "{key}".')
            return
        settled, _ = adjudication.adjudicate(session, actor, queue_id, item_id, key, value, note, typed=True)
        shown = disagreement_words.value_text(settled.value)
    click.echo(f'Settled item {item_id} under "{key}": {shown}.')


# ------------------------------------------------------------------------------------------------ items


def _refs(trace_refs: Sequence[str], from_file: Path | None) -> list[str]:
    """The traces named on the command line and in the file, one a line, blank lines and # comments
    skipped; each once, in the order given."""
    refs = list(trace_refs)
    if from_file is not None:
        for line in from_file.read_text().splitlines():
            text = line.strip()
            if text and not text.startswith("#"):
                refs.append(text)
    if not refs:
        raise click.UsageError("Name at least one trace, as an argument or in --from-file.")
    return list(dict.fromkeys(refs))


def _chunks(values: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


@queues_group.command("add-items")
@click.argument("queue")
@click.argument("traces", nargs=-1)
@click.option(
    "--from-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file of trace ids (or external ids), one a line.",
)
@click.option("--span", help="Add this span of each trace rather than the whole trace.")
@pass_context
def add_items(
    context: CliContext, queue: str, traces: tuple[str, ...], from_file: Path | None, span: str | None
) -> None:
    """Add TRACES (Redline ids or the tracer's external ids) to QUEUE, all or none; a trace already in
    the queue stays where it is."""
    refs = _refs(traces, from_file)
    with as_operator(context) as (session, actor):
        view = find_queue(session, actor, queue)
        before = view.items_count
        for chunk in _chunks(refs, MAX_ITEMS_PER_CALL):
            queues.add_items(
                session, actor, view.queue.id, [ItemRef(trace_id=ref, span_id=span or ref) for ref in chunk]
            )
        after = queues.get_queue(session, actor, view.queue.id)
        added = after.items_count - before
        click.echo(
            f'Added {added} of {len(refs)} to "{view.queue.name}" ({len(refs) - added} already there); '
            f"it holds {after.items_count}, {after.reviewed_count} reviewed."
        )


@queues_group.command("remove-items")
@click.argument("queue")
@click.argument("span_ids", nargs=-1, required=True)
@pass_context
def remove_items(context: CliContext, queue: str, span_ids: tuple[str, ...]) -> None:
    """Take the items of SPAN_IDS out of QUEUE (a trace's id takes out its whole-trace item); ids that
    name nothing are passed over."""
    with as_operator(context) as (session, actor):
        view = find_queue(session, actor, queue)
        for chunk in _chunks(list(dict.fromkeys(span_ids)), MAX_ITEMS_PER_CALL):
            queues.remove_items(session, actor, view.queue.id, chunk)
        after = queues.get_queue(session, actor, view.queue.id)
        click.echo(
            f'Removed {view.items_count - after.items_count} from "{view.queue.name}"; '
            f"it holds {after.items_count}, {after.reviewed_count} reviewed."
        )


# ------------------------------------------------------------------------------------------ automations


@queues_group.group("automations")
def automations_group() -> None:
    """Automations: add the runs that match filters to a queue as they arrive."""


def _filters_text(rule: QueueRule) -> str:
    return json.dumps(when_to_filters(rule.when), separators=(",", ":"), sort_keys=True)


@automations_group.command("list")
@click.argument("queue")
@pass_context
def list_automations(context: CliContext, queue: str) -> None:
    """The live automations of QUEUE, oldest first."""
    with as_operator(context, write=False) as (session, actor):
        view = find_queue(session, actor, queue)
        rows = [
            (
                str(rule.rule_id),
                rule.name,
                str(rule.version),
                f"{rule.sample:g}",
                "yes" if rule.enabled else "no",
                _filters_text(rule),
            )
            for rule in automations_service.list_automations(session, actor, view.queue.id)
        ]
    print_table(rows, ("ID", "NAME", "VERSION", "SAMPLE", "ENABLED", "FILTERS"))


def _json_object(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, Any]:
    if value is None:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter('a JSON object, such as \'{"status": ["failed"]}\'.')
    return parsed


@automations_group.command("add")
@click.argument("queue")
@click.option("--name", required=True, help="What it picks, for people reading the list.")
@click.option(
    "--filters",
    callback=_json_object,
    help="A JSON object as the API takes it: agent_ids or flow_ids, versions, status, include_dry_runs, "
    'metadata [{"path", "op", "value"}] [default: every completed run].',
)
@click.option("--sample", type=float, default=1.0, show_default=True, help="The share of matches to take.")
@pass_context
def add_automation(
    context: CliContext, queue: str, name: str, filters: dict[str, Any], sample: float
) -> None:
    """Add matching runs to QUEUE as they arrive, from now on."""
    with as_operator(context) as (session, actor):
        view = find_queue(session, actor, queue)
        rule = automations_service.create_automation(
            session, actor, view.queue.id, AutomationIn(name=name, filters=filters, sample=sample)
        )
        click.echo(
            f'Automation "{rule.name}" ({rule.rule_id}) fills "{view.queue.name}": {_filters_text(rule)}'
        )


@automations_group.command("remove")
@click.argument("queue")
@click.argument("automation_id")
@pass_context
def remove_automation(context: CliContext, queue: str, automation_id: str) -> None:
    """Stop the automation AUTOMATION_ID of QUEUE; the items it queued stay."""
    try:
        ident = uuid.UUID(automation_id)
    except ValueError:
        raise click.BadParameter(f'"{automation_id}" is not an automation id.') from None
    with as_operator(context) as (session, actor):
        view = find_queue(session, actor, queue)
        automations_service.delete_automation(session, actor, view.queue.id, ident)
        click.echo(f'Stopped automation {ident} of "{view.queue.name}"; the items it queued stay.')
