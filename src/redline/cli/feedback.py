"""`redline annotations` and `redline pairs`: feedback out of the store, and what it would train."""

from __future__ import annotations

from pathlib import Path

import click

from redline.annotations.export import export_chunks
from redline.cli.context import (
    CliContext,
    fail,
    open_output,
    output_option,
    pass_context,
    trace_ids,
    tune_gc_for_bulk_work,
)
from redline.cli.progress import progress
from redline.cli.reward_models import write_pairs
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.jsonio import dumps
from redline.learning import exports
from redline.learning import service as learning
from redline.learning.pairs import DEFAULT_MAX_PAIRS
from redline.learning.service import MAX_PAIRS_LIMIT
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
            for chunk in export_chunks(session, identity.operator(session)):
                sink.write(chunk)
                lines = chunk.count(b"\n")
                count += lines
                shown.advance(lines)
    except RedlineError as error:
        raise fail(error) from error
    if output:
        click.echo(f"Wrote {counted(count, 'annotation')} to {output}.")


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
@pass_context
def preview_pairs(context: CliContext, traces: tuple[str, ...], max_pairs: int) -> None:
    """Print the pairs the traces' ratings make, one JSON object per line, without making a model."""
    chosen = trace_ids(traces)
    db = context.ready_database()
    # Pairs over thousands of traces keep tens of thousands of rows alive while the texts are built; with
    # the default thresholds the cyclic GC would rescan them over and over (bench/README.md), as in imports.
    tune_gc_for_bulk_work()
    try:
        with db.read() as session:
            pairs = learning.preview_pairs(session, identity.operator(session), chosen, max_pairs)
    except RedlineError as error:
        raise fail(error) from error
    for pair in pairs:
        line = {
            "granularity": pair.granularity,
            "source": pair.source,
            "chosen": pair.chosen,
            "rejected": pair.rejected,
            "source_ids": pair.source_ids,
        }
        click.echo(dumps(line).decode())
    click.echo(f"{counted(len(pairs), 'pair')}.", err=True)


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
