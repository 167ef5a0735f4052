"""`redline gepa export`: a project's runs and what was said about them, as GEPA's reflective dataset
(`learning.gepa`; docs/learning.md shows how to hand it to `gepa.optimize`)."""

from __future__ import annotations

from pathlib import Path

import click

from redline.cli.context import (
    CliContext,
    as_operator,
    output_option,
    pass_context,
    trace_ids,
    write_json_lines,
)
from redline.cli.progress import track
from redline.identity import service as identity
from redline.learning import gepa
from redline.sentences import counted


@click.group("gepa")
def gepa_group() -> None:
    """Feedback for GEPA, the prompt optimiser: one reflective record per run."""


@gepa_group.command("export")
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--trace", "traces", multiple=True, help="Only this trace (an id); repeat for more [default: all]."
)
@click.option("--limit", type=click.IntRange(min=1), help="At most this many runs [default: every run].")
@output_option
@pass_context
def export(
    context: CliContext, project: str, traces: tuple[str, ...], limit: int | None, output: Path | None
) -> None:
    """Write {"Inputs", "Generated Outputs", "Feedback", "trace_id"} per run, one JSON object per line.

    Runs newest first, or the --trace ones in the order given; erased runs are left out. Feedback holds
    the latest reward-model score, the reviewers' comments and the lowest-credit steps.
    """
    chosen = trace_ids(traces)
    with as_operator(context, write=False) as (session, actor):
        target = identity.find_project(session, actor, project)
        lines = gepa.feedback_records(session, actor, target.id, trace_ids=chosen, limit=limit)
        count = write_json_lines(output, track(lines, "Writing GEPA records", noun="record", total=limit))
    records = counted(count, "record")
    if output:
        click.echo(f'Wrote {records} of project "{target.name}" to {output}.')
    else:
        click.echo(f"{records}.", err=True)
