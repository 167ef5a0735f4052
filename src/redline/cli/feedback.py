"""`redline annotations` and `redline pairs`: feedback out of the store and back in, and what it trains."""

from __future__ import annotations

import time
from pathlib import Path

import click

from redline.annotations.export import export_chunks
from redline.annotations.import_pipeline import ImportTarget, import_file
from redline.annotations.lines import SkippedLine, count_lines
from redline.cli.context import (
    CliContext,
    fail,
    lock_waits,
    open_output,
    output_option,
    pass_context,
    still_busy,
    trace_ids,
    tune_gc_for_bulk_work,
)
from redline.cli.progress import progress
from redline.cli.reward_models import min_pairs_option, pairing_config, pairing_option, write_pairs
from redline.db import StillBusy
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.jsonio import dumps
from redline.learning import exports, figures
from redline.learning import service as learning
from redline.learning.pairs import DEFAULT_MAX_PAIRS
from redline.learning.service import MAX_PAIRS_LIMIT
from redline.queues.annotation.blind import hidden_from
from redline.queues.review_export import review_addition
from redline.sentences import counted


@click.group("annotations")
def annotations_group() -> None:
    """Ratings and comments people left on traces."""


@annotations_group.command("export")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write [default: standard output].",
)
@pass_context
def export_annotations(context: CliContext, output: Path | None) -> None:
    """Every annotation as NDJSON, oldest first, flagged ones included (label_error: true).

    The same lines as GET /api/v1/rm/export/annotations, read a page at a time.
    """
    db = context.ready_database()
    count = 0
    try:
        with (
            db.read() as session,
            open_output(output) as sink,
            progress("Exporting annotations", noun="annotation") as shown,
        ):
            operator = context.operator(session)
            for chunk in export_chunks(session, operator, hidden_from(session, operator), review_addition):
                sink.write(chunk)
                lines = chunk.count(b"\n")
                count += lines
                shown.advance(lines)
    except RedlineError as error:
        raise fail(error) from error
    if output:
        click.echo(f"Wrote {counted(count, 'annotation')} to {output}.")


# Lines stored per transaction: a few thousand amortise a commit and the group's look-ups; a failure
# part-way keeps the groups before it.
IMPORT_GROUP = 2_000


@annotations_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def import_annotations(context: CliContext, file: Path, project: str) -> None:
    """Store the annotations in FILE (the NDJSON `annotations export` writes) on the runs of a project.

    A line's run is the project's run with its trace_id, or else the one with its trace_external_id;
    step_index picks the step (null: the whole trace). Each line keeps a create's rules, its author and
    created_at as written. A line that can't be stored is skipped and listed with its reason; the rest
    are stored 2,000 lines at a time, each group in its own transaction. Importing the file again
    stores nothing twice, and says how many were already there. On SQLite a second process reads the
    lines and finds their runs while this one writes.
    """
    db = context.ready_database()
    tune_gc_for_bulk_work()
    started = time.perf_counter()
    with file.open("rb") as source:
        total = count_lines(source)
    stored = already = 0
    skipped: list[SkippedLine] = []
    try:
        with db.read() as session:
            actor = context.operator(session)
            project_found = identity.find_project(session, actor, project)
        target = ImportTarget(actor, project_found.id, project_found.workspace_id)
        with progress("Importing annotations", noun="line", total=total) as shown:
            for done in import_file(db, target, file, IMPORT_GROUP, lock_waits(context)):
                skipped.extend(done.unread)
                stored += done.stored.stored
                already += done.stored.already
                skipped.extend(done.stored.skipped)
                shown.advance(done.read)
    except RedlineError as error:
        raise fail(error) from error
    except StillBusy as error:
        done_so_far = (
            f"Stored before that: {counted(stored, 'annotation')}; importing the file again adds the rest. "
        )
        raise still_busy(error, done_so_far) from None
    seconds = time.perf_counter() - started
    there = f"; {counted(already, 'annotation')} already there" if already else ""
    click.echo(
        f"Imported {counted(stored, 'annotation')} into {project_found.name} in {seconds:.1f} s{there}."
    )
    if skipped:
        click.echo(f"Skipped {len(skipped)}:")
        for skip in sorted(skipped, key=lambda skip: skip.line):
            click.echo(f"  line {skip.line}: {skip.reason}")


@click.group("pairs")
def pairs_group() -> None:
    """Preference pairs, as a reward model would be built from them."""


@pairs_group.command("preview")
@click.option("--trace", "traces", multiple=True, required=True, help="A trace id; repeat for more traces.")
@click.option(
    "--max-pairs",
    default=DEFAULT_MAX_PAIRS,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_PAIRS_LIMIT),
    help="Cap after the seed-0 shuffle.",
)
@pairing_option
@min_pairs_option
@pass_context
def preview_pairs(
    context: CliContext, traces: tuple[str, ...], max_pairs: int, pairing: str, min_pairs: int
) -> None:
    """Print the pairs the traces' ratings, stated preferences and corrections make, one JSON object per
    line with its kind (same_context, cross, preference), without making a model; then how many of
    each kind."""
    chosen = trace_ids(traces)
    rule = learning.pairing_of(pairing_config(pairing, min_pairs))
    db = context.ready_database()
    # Pairs over thousands of traces keep tens of thousands of rows alive while the texts are built; with
    # the default thresholds the cyclic GC would rescan them over and over (bench/README.md), as in imports.
    tune_gc_for_bulk_work()
    try:
        with db.read() as session:
            pairs = learning.preview_pairs(session, context.operator(session), chosen, max_pairs, rule)
    except RedlineError as error:
        raise fail(error) from error
    for pair in pairs:
        line = {
            "granularity": pair.granularity,
            "source": pair.source,
            "kind": pair.kind,
            "context_id": pair.context_id,
            "chosen": pair.chosen,
            "rejected": pair.rejected,
            "source_ids": pair.source_ids,
        }
        click.echo(dumps(line).decode())
    by_kind = figures.kinds_text(learning.pairs_by_kind(pairs))
    click.echo(f"{counted(len(pairs), 'pair')}: {by_kind}.", err=True)


@pairs_group.command("export")
@click.argument("model_ref", metavar="MODEL")
@click.option(
    "--format",
    "export_format",
    type=click.Choice(exports.FORMATS),
    default="trl",
    show_default=True,
    help="trl: TRL's conversational chosen/rejected; jsonl: the pairs as the API lists them.",
)
@output_option
@pass_context
def export_pairs(context: CliContext, model_ref: str, export_format: str, output: Path | None) -> None:
    """Write the pairs a reward model (id or name) was built with, one JSON object per line.

    `--format trl` is ready for TRL's RewardTrainer and DPOTrainer: {"chosen": [messages], "rejected":
    [messages]}, tool calls as transformers' chat templates take them (docs/learning.md).
    """
    write_pairs(context, model_ref, export_format, output)
