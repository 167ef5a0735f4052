"""`redline import` and `redline export`: runs in and out of a project as files."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import click

from redline.cli.context import CliContext, fail, open_output, pass_context, tune_gc_for_bulk_work
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.jsonio import dumps
from redline.traces import service as traces
from redline.traces.importers.base import Skipped
from redline.traces.importers.registry import format_names, iter_text, list_formats
from redline.traces.native import run_to_input_dict
from redline.traces.schemas import RunIn

# Runs stored per transaction: large enough to amortise a commit, small enough to keep memory flat.
IMPORT_CHUNK = 500


def _format_help() -> str:
    described = "; ".join(f"{name}: {description}" for name, description in list_formats())
    return f"The file's format; auto tries each in turn ({described})."


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["auto", *format_names()]),
    default="auto",
    show_default=True,
    help=_format_help(),
)
@pass_context
def import_runs(context: CliContext, file: Path, project: str, format_: str) -> None:
    """Import the runs in FILE into a project, keeping the good records and listing the skipped ones.

    A record whose external id is already in the project replaces that run, so when the file holds
    an external id more than once its last record wins. The file's text is read whole; its records
    are parsed and stored 500 at a time, each group in its own transaction: a failure part-way keeps
    the groups before it, and importing the file again replaces them rather than duplicating them
    when the records have external ids.
    """
    db = context.ready_database()
    tune_gc_for_bulk_work()
    started = time.perf_counter()
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise click.ClickException(f"{file} is not UTF-8 text (byte {error.start}).") from None
    imported = steps = 0
    skipped: list[Skipped] = []
    try:
        with db.read() as session:
            target = identity.find_project(session, identity.operator(session), project)
        resolved, records = iter_text(text, target.id, format_)
        with click.progressbar(
            _groups(records, skipped), label=f"Importing {resolved} records", show_pos=True
        ) as groups:
            for group in groups:
                with db.write() as session:
                    stored = traces.ingest_runs(
                        session, identity.operator(session), group, source_format=resolved
                    )
                imported += len(stored)
                steps += sum(run.step_count for run in stored)
    except RedlineError as error:
        raise fail(error) from error
    seconds = time.perf_counter() - started
    click.echo(f"Imported {imported} runs ({steps} steps) into {target.name} in {seconds:.1f} s.")
    if skipped:
        click.echo(f"Skipped {len(skipped)}:")
        for skip in skipped:
            click.echo(f"  record {skip.record}: {skip.reason}")


def _groups(records: Iterator[RunIn | Skipped], skipped: list[Skipped]) -> Iterator[list[RunIn]]:
    """Runs in groups of IMPORT_CHUNK, noting skips as they pass.

    Within a group an external id is kept once, at its last record; across groups the later group
    replaces the earlier run when it is stored, so the file's last record wins either way.
    """
    group: dict[object, RunIn] = {}
    for item in records:
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        key: object = item.external_id if item.external_id is not None else object()
        group.pop(key, None)
        group[key] = item
        if len(group) == IMPORT_CHUNK:
            yield list(group.values())
            group = {}
    if group:
        yield list(group.values())


@click.group()
def export() -> None:
    """Write what Redline holds to files."""


@export.command("runs")
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write [default: standard output].",
)
@pass_context
def export_runs(context: CliContext, project: str, output: Path | None) -> None:
    """Every run of a project as native JSONL, oldest first; `redline import` reads it back."""
    db = context.ready_database()
    count = 0
    try:
        with db.read() as session, open_output(output) as sink:
            actor = identity.operator(session)
            target = identity.find_project(session, actor, project)
            for view in traces.iter_project_runs(session, actor, target.id):
                sink.write(dumps(run_to_input_dict(view)) + b"\n")
                count += 1
    except RedlineError as error:
        raise fail(error) from error
    if output:
        click.echo(f"Wrote {count} runs to {output}.")
