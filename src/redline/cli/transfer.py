"""`redline import` and `redline export`: runs in and out of a project as files."""

from __future__ import annotations

import time
from pathlib import Path

import click

from redline.cli.context import CliContext, fail, pass_context
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.jsonio import dumps
from redline.traces import service as traces
from redline.traces.importers.registry import format_names, parse_text
from redline.traces.native import run_to_input_dict
from redline.traces.schemas import RunIn

# Runs stored per transaction: large enough to amortise a commit, small enough to keep memory flat.
IMPORT_CHUNK = 500


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["auto", *format_names()]),
    default="auto",
    show_default=True,
    help="The file's format; auto tries each in turn.",
)
@pass_context
def import_runs(context: CliContext, file: Path, project: str, format_: str) -> None:
    """Import the runs in FILE into a project, keeping the good records and listing the skipped ones.

    A record whose external id is already in the project replaces that run; when the file holds an
    external id more than once, its last record wins. Runs are stored 500 to a transaction, so a
    failure part-way keeps the runs before it: importing the file again replaces them, not duplicates
    them, when the records have external ids.
    """
    db = context.ready_database()
    started = time.perf_counter()
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise click.ClickException(f"{file} is not UTF-8 text (byte {error.start}).") from None
    try:
        with db.read() as session:
            target = identity.find_project(session, identity.operator(session), project)
        resolved, parsed = parse_text(text, target.id, format_)
        runs, repeated = last_of_each_external_id(parsed.runs)
        imported = steps = 0
        with click.progressbar(length=len(runs), label=f"Importing {resolved}", show_pos=True) as bar:
            for start in range(0, len(runs), IMPORT_CHUNK):
                chunk = runs[start : start + IMPORT_CHUNK]
                with db.write() as session:
                    stored = traces.ingest_runs(
                        session, identity.operator(session), chunk, source_format=resolved
                    )
                imported += len(stored)
                steps += sum(run.step_count for run in stored)
                bar.update(len(chunk))
    except RedlineError as error:
        raise fail(error) from error
    seconds = time.perf_counter() - started
    click.echo(f"Imported {imported} runs ({steps} steps) into {target.name} in {seconds:.1f} s.")
    if repeated:
        click.echo(f"{repeated} records repeated an earlier record's external id; the last of each was kept.")
    if parsed.skipped:
        click.echo(f"Skipped {len(parsed.skipped)}:")
        for skipped in parsed.skipped:
            click.echo(f"  record {skipped.record}: {skipped.reason}")


def last_of_each_external_id(runs: list[RunIn]) -> tuple[list[RunIn], int]:
    """The runs with each external id kept once, at its last record; and how many were dropped."""
    last_index = {run.external_id: index for index, run in enumerate(runs) if run.external_id is not None}
    kept = [
        run
        for index, run in enumerate(runs)
        if run.external_id is None or last_index[run.external_id] == index
    ]
    return kept, len(runs) - len(kept)


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
        with db.read() as session, click.open_file(str(output) if output else "-", "wb") as sink:
            actor = identity.operator(session)
            target = identity.find_project(session, actor, project)
            for view in traces.iter_project_runs(session, actor, target.id):
                sink.write(dumps(run_to_input_dict(view)) + b"\n")
                count += 1
    except RedlineError as error:
        raise fail(error) from error
    if output:
        click.echo(f"Wrote {count} runs to {output}.")
