"""`redline datasets list|create|show|export`: datasets from a shell, as the local operator.

The same service as `/v2/datasets`. `export` writes a dataset's datapoints as JSON lines, each shaped as
the API answers a datapoint, so a file exported here and a page read over HTTP hold the same objects.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import click
from sqlalchemy.orm import Session

from redline.cli.context import (
    CliContext,
    as_operator,
    open_output,
    output_option,
    pass_context,
    print_table,
    when_text,
)
from redline.cli.progress import track
from redline.datasets import service as datasets
from redline.datasets.models import Datapoint
from redline.datasets.schemas import DatasetChange, DatasetIn
from redline.datasets.service import DatasetView
from redline.datasets.wire import datapoint_dict
from redline.db.id_pages import MAX_LIMIT, every_item, with_items
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.sentences import counted

# How much of a datapoint's inputs and expected output a table row shows.
_CELL = 60


@click.group("datasets")
def datasets_group() -> None:
    """Datasets: curated inputs, messages and expected outputs for experiments."""


def _all_datasets(
    session: Session, actor: Actor, project_id: str | None = None, search: str | None = None
) -> list[DatasetView]:
    return list(
        every_item(
            lambda after: datasets.list_datasets(
                session, actor, limit=MAX_LIMIT, starting_after=after, search=search, project_id=project_id
            )
        )
    )


def find_dataset(session: Session, actor: Actor, name_or_id: str) -> DatasetView:
    """A dataset by id, or by its exact name when one dataset has it."""
    try:
        return datasets.get_dataset(session, actor, uuid.UUID(name_or_id))
    except ValueError:
        pass
    named = [
        view for view in _all_datasets(session, actor, search=name_or_id) if view.dataset.name == name_or_id
    ]
    if not named:
        raise datasets.dataset_not_found(actor, name_or_id)
    if len(named) > 1:
        raise click.ClickException(f'{len(named)} datasets are named "{name_or_id}": name one by its id.')
    return named[0]


def _datapoints(session: Session, actor: Actor, dataset_id: uuid.UUID) -> Iterator[Datapoint]:
    """Every datapoint of the dataset, newest first, a page at a time."""
    return every_item(
        lambda after: with_items(
            datasets.list_datapoints(session, actor, dataset_id, limit=MAX_LIMIT, starting_after=after)
        )
    )


def _cell(value: object) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else dumps(value).decode()
    text = " ".join(text.split())
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


# ------------------------------------------------------------------------------------------- commands


@datasets_group.command("list")
@click.option("--project", help="Only this project's datasets (name or id) [default: every project].")
@click.option("--search", help="Only datasets whose name holds this, in any case.")
@pass_context
def list_datasets(context: CliContext, project: str | None, search: str | None) -> None:
    """Datasets, newest first, with their datapoint counts and versions."""
    with as_operator(context, write=False) as (session, actor):
        project_id = str(identity.find_project(session, actor, project).id) if project else None
        names = {p.id: p.name for p, _ in identity.visible_projects(session, actor)}
        rows = [
            (
                str(view.dataset.id),
                view.dataset.name,
                names.get(view.dataset.project_id, "-"),
                view.dataset.path or "-",
                str(view.datapoints_count),
                str(view.dataset.version),
            )
            for view in _all_datasets(session, actor, project_id, search)
        ]
    print_table(rows, ("ID", "NAME", "PROJECT", "PATH", "DATAPOINTS", "VERSION"))


@datasets_group.command("create")
@click.argument("name")
@click.option("--project", help="Project name or id [default: the first project, or the path's first part].")
@click.option("--path", help="A folder path such as evals/refunds.")
@pass_context
def create_dataset(context: CliContext, name: str, project: str | None, path: str | None) -> None:
    """Make the dataset NAME, empty."""
    with as_operator(context) as (session, actor):
        view = datasets.create_dataset(session, actor, DatasetIn(display_name=name, path=path))
        if project is not None:
            target = identity.find_project(session, actor, project)
            if target.id != view.dataset.project_id:
                change = DatasetChange(project_id=str(target.id))
                view = datasets.update_dataset(session, actor, view.dataset.id, change)
        names = {p.id: p.name for p, _ in identity.visible_projects(session, actor)}
        click.echo(
            f'Created dataset "{view.dataset.name}" ({view.dataset.id}) in project '
            f'"{names.get(view.dataset.project_id, "-")}".'
        )


@datasets_group.command("show")
@click.argument("dataset")
@click.option(
    "--limit", default=20, show_default=True, type=click.IntRange(min=1), help="Show at most this many."
)
@pass_context
def show_dataset(context: CliContext, dataset: str, limit: int) -> None:
    """The dataset DATASET (name or id) and its newest datapoints."""
    with as_operator(context, write=False) as (session, actor):
        view = find_dataset(session, actor, dataset)
        rows: list[tuple[str, ...]] = []
        for datapoint in _datapoints(session, actor, view.dataset.id):
            if len(rows) == limit:
                break
            rows.append(
                (
                    str(datapoint.id),
                    when_text(datapoint.created_at),
                    str(datapoint.trace_id) if datapoint.trace_id else "-",
                    _cell(datapoint.inputs),
                    _cell(datapoint.expected_output),
                )
            )
        click.echo(f'Dataset "{view.dataset.name}" ({view.dataset.id}), path {view.dataset.path or "-"}')
        click.echo(f"  {view.datapoints_count} datapoints, version {view.dataset.version}")
    if rows:
        click.echo("")
        print_table(rows, ("ID", "CREATED", "TRACE", "INPUTS", "EXPECTED OUTPUT"))
    if view.datapoints_count > len(rows):
        click.echo(f"More datapoints: raise --limit (now {limit}) or export them.", err=True)


@datasets_group.command("export")
@click.argument("dataset")
@output_option
@pass_context
def export_dataset(context: CliContext, dataset: str, output: Path | None) -> None:
    """Every datapoint of DATASET (name or id), newest first, as JSON lines shaped as the API's datapoints."""
    with as_operator(context, write=False) as (session, actor):
        view = find_dataset(session, actor, dataset)
        written = 0
        with open_output(output) as sink:
            datapoints = _datapoints(session, actor, view.dataset.id)
            for datapoint in track(datapoints, f'Exporting "{view.dataset.name}"', noun="datapoint"):
                sink.write(dumps(datapoint_dict(datapoint, actor.workspace_id)) + b"\n")
                written += 1
    if output is not None:
        click.echo(f'Wrote {counted(written, "datapoint")} of "{view.dataset.name}" to {output}.')
