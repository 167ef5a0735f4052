"""`redline reviews list|add|remove|add-defaults`: a project's human review definitions ("review keys"),
as the local operator.

The same service as `/v2/human-reviews`, so the rules (a key unique in its project, options for a
categorical key, min < max for a range) and the sentences of a refusal are the API's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import click
from pydantic import ValidationError
from sqlalchemy.orm import Session

from redline.cli.context import CliContext, as_operator, pass_context, print_table
from redline.db.id_pages import MAX_LIMIT, every_item, with_items
from redline.identity import service as identity
from redline.identity.models import Project
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.reviews import service as reviews
from redline.reviews.models import ReviewKey
from redline.reviews.schemas import REVIEW_TYPES, ReviewKeyIn


@click.group("reviews")
def reviews_group() -> None:
    """Human reviews: the keys (with their options or range) people review a project's traces with."""


def project_keys(session: Session, actor: Actor, project: Project) -> list[ReviewKey]:
    """Every definition of the project, newest first, read a page at a time."""
    return list(
        every_item(
            lambda after: with_items(
                reviews.list_keys(
                    session, actor, project_id=project.id, limit=MAX_LIMIT, starting_after=after
                )
            )
        )
    )


def key_in(session: Session, actor: Actor, project: Project, name_or_id: str) -> ReviewKey:
    """A definition of the project by key or by id."""
    try:
        review_key = reviews.get(session, actor, uuid.UUID(name_or_id), "read")
    except ValueError:
        found = reviews.by_keys(session, project.id, [name_or_id]).get(name_or_id)
        if found is None:
            raise reviews.key_not_found(actor, name_or_id) from None
        return found
    if review_key.project_id != project.id:
        raise reviews.not_found(actor, name_or_id)
    return review_key


def _shape(review_key: ReviewKey) -> str:
    """What values the key takes, in a few characters: its options, or its range."""
    if review_key.type == "categorical":
        options = ", ".join(option["value"] for option in review_key.options or [])
        return f"{'any of' if review_key.multiple else 'one of'}: {options}"
    if review_key.type == "range":
        return f"{review_key.min:g} to {review_key.max:g}"
    return "text, up to 200 characters"


def _key_line(review_key: ReviewKey) -> dict[str, object]:
    """A definition for --json: the fields a script needs, snake_case as on /v2."""
    line: dict[str, object] = {
        "_id": str(review_key.id),
        "key": review_key.key,
        "display_name": review_key.title,
        "description": review_key.description,
        "type": review_key.type,
        "project_id": str(review_key.project_id),
    }
    if review_key.type == "categorical":
        line["options"] = review_key.options or []
        line["multiple"] = review_key.multiple
    if review_key.type == "range":
        line["min"], line["max"] = review_key.min, review_key.max
    return line


def _print_keys(found: Sequence[ReviewKey]) -> None:
    print_table(
        [(str(key.id), key.key, key.type, _shape(key), key.title) for key in found],
        ("ID", "KEY", "TYPE", "VALUES", "TITLE"),
    )


@reviews_group.command("list")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of a table.")
@pass_context
def list_keys(context: CliContext, project: str, as_json: bool) -> None:
    """The project's human review definitions, newest first."""
    with as_operator(context, write=False) as (session, actor):
        found = project_keys(session, actor, identity.find_project(session, actor, project))
        if as_json:
            for review_key in found:
                click.echo(dumps(_key_line(review_key)).decode())
        else:
            _print_keys(found)


def _definition(**fields: object) -> ReviewKeyIn:
    """The definition as POST /v2/human-reviews would take it; a field's own limit is a usage error."""
    try:
        return ReviewKeyIn.model_validate(
            {name: value for name, value in fields.items() if value is not None}
        )
    except ValidationError as error:
        problem = error.errors()[0]
        name = "--" + str(problem["loc"][0]).replace("_", "-")
        raise click.BadParameter(str(problem["msg"]), param_hint=name) from None


@reviews_group.command("add")
@click.argument("key")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--type", "kind", type=click.Choice(REVIEW_TYPES), required=True, help="What values it takes.")
@click.option(
    "--option",
    "options",
    multiple=True,
    help="A categorical key's option, as VALUE or VALUE=DESCRIPTION; repeat for each.",
)
@click.option("--multiple", is_flag=True, help="A categorical value may pick several options.")
@click.option("--min", "low", type=float, help="A range's lowest value.")
@click.option("--max", "high", type=float, help="A range's highest value.")
@click.option("--title", help="How people see it [default: the key].")
@click.option("--description", help="What it asks of the reviewer.")
@pass_context
def add_key(
    context: CliContext,
    key: str,
    project: str,
    kind: str,
    options: tuple[str, ...],
    multiple: bool,
    low: float | None,
    high: float | None,
    title: str | None,
    description: str | None,
) -> None:
    """Define the human review KEY in a project: categorical (--option …), range (--min, --max) or text."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        body = _definition(
            key=key,
            type=kind,
            display_name=title,
            description=description,
            options=[_option(option) for option in options] or None,
            multiple=multiple or None,
            min=low,
            max=high,
            project_id=target.id,
        )
        review_key = reviews.create(session, actor, body)
        click.echo(
            f'Defined {review_key.type} "{review_key.key}" in project "{target.name}" ({review_key.id}).'
        )


def _option(text: str) -> dict[str, str]:
    value, sep, meaning = text.partition("=")
    return {"value": value, "description": meaning} if sep else {"value": value}


@reviews_group.command("remove")
@click.argument("key")
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def remove_key(context: CliContext, key: str, project: str) -> None:
    """Delete the definition KEY (a key or an id): queues stop offering it; values already recorded under
    it stay on their traces."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        review_key = key_in(session, actor, target, key)
        name = review_key.key
        reviews.delete(session, actor, review_key.id)
        click.echo(f'Removed "{name}" from project "{target.name}"; values recorded under it stay.')


@reviews_group.command("add-defaults")
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def add_defaults(context: CliContext, project: str) -> None:
    """Add the legacy definitions `rating` (good, bad) and `defects` (multi-select), keeping any of those
    keys the project already has."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        added = reviews.add_defaults(session, actor, target.id)
        if added:
            click.echo(f'Added to project "{target.name}": {", ".join(key.key for key in added)}.')
        else:
            click.echo(f'Project "{target.name}" has rating and defects already; nothing added.')
