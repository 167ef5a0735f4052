"""`redline annotations export` and `redline pairs preview`, against a fresh store on each backend."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from click.testing import CliRunner

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationChange, AnnotationIn, QuoteIn
from redline.cli.main import cli
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.traces import service as traces
from redline.traces.schemas import RunIn, StepIn
from tests.cli.test_reward_models_cli import _two_contexts
from tests.conftest import Harness, bootstrap_admin
from tests.samples import EXPORT_KEYS


def _two_rated_traces(db: Database) -> list[str]:
    first = bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        stored = ingest.record_runs(
            session,
            actor,
            [
                RunIn(
                    project_id=first.project.id,
                    external_id=f"t{i}",
                    status="completed",
                    steps=[
                        StepIn(role="user", content="refund?"),
                        StepIn(role="assistant", content=f"answer {i}"),
                    ],
                )
                for i in range(2)
            ],
        )
        good = annotation_service.create(session, actor, stored[0].id, AnnotationIn(rating=1))
        annotation_service.create(
            session,
            actor,
            stored[1].id,
            AnnotationIn(
                rating=-1,
                comment="Promised a refund",
                step_id=traces.get_run(session, actor, stored[1].id).steps[1].id,
                quote=QuoteIn(text="answer", suffix=" 1"),
            ),
        )
        annotation_service.change(
            session, actor, good.id, AnnotationChange(label_error=True, label_error_note="n")
        )
        annotation_service.create(session, actor, stored[0].id, AnnotationIn(rating=1, comment="good"))
    return [str(run.id) for run in stored]


def test_annotations_export_writes_the_documents_lines(
    database_url: str, db: Database, tmp_path: Path
) -> None:
    _two_rated_traces(db)
    out = tmp_path / "annotations.ndjson"
    result = CliRunner().invoke(
        cli, ["--database-url", database_url, "annotations", "export", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 3
    assert all(list(line) == EXPORT_KEYS for line in lines)
    assert [line["label_error"] for line in lines] == [True, False, False]
    assert lines[1]["quote"] == {"text": "answer", "prefix": "", "suffix": " 1"}
    assert lines[1]["step_index"] == 1
    assert lines[1]["trace_external_id"] == "t1"
    assert lines[0]["author"] == "operator"


def test_pairs_preview_prints_pairs_without_a_model(database_url: str, db: Database) -> None:
    trace_ids = _two_rated_traces(db)
    with db.write() as session:
        annotation_service.create(
            session, identity.operator(session), uuid.UUID(trace_ids[1]), AnnotationIn(rating=-1)
        )
    args = ["--database-url", database_url, "pairs", "preview", *(f"--trace={t}" for t in trace_ids)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    # t0: a flagged +1 (dropped) and a +1; t1: a −1. One trace pair; the step's −1 has no + partner.
    [line, summary] = result.output.strip().splitlines()
    pair = json.loads(line)
    assert pair["granularity"] == "trace"
    assert pair["chosen"] == "user: refund?\n\nassistant: answer 0"
    assert pair["rejected"] == "user: refund?\n\nassistant: answer 1"
    # Both answer "refund?": a same-context pair, named by the conversation both answer.
    assert pair["kind"] == "same_context"
    assert pair["context_id"].startswith("conversation:")
    assert summary == "1 pair: 1 same-context, 0 cross, 0 preference."
    with db.read() as session:
        assert (
            session.execute(__import__("sqlalchemy").text("SELECT count(*) FROM reward_models")).scalar() == 0
        )
    bad = CliRunner().invoke(cli, ["--database-url", database_url, "pairs", "preview", "--trace", "nope"])
    assert bad.exit_code == 2
    missing = "00000000-0000-0000-0000-000000000001"
    gone = CliRunner().invoke(cli, ["--database-url", database_url, "pairs", "preview", "--trace", missing])
    assert gone.exit_code == 1
    assert f"Trace {missing} not found" in gone.output


def test_pairs_preview_takes_the_pairing_rule_and_counts_the_kinds(
    harness: Harness, database_url: str
) -> None:
    traces = [f"--trace={trace}" for trace in _two_contexts(harness)]
    preview = ["--database-url", database_url, "pairs", "preview", *traces]
    for options, kinds, summary in (
        ([], ["same_context"] * 3 + ["cross"] * 3, "6 pairs: 3 same-context, 3 cross, 0 preference."),
        (["--min-pairs", "0"], ["same_context"] * 3, "3 pairs: 3 same-context, 0 cross, 0 preference."),
        (
            ["--min-pairs", "4"],
            ["same_context"] * 3 + ["cross"],
            "4 pairs: 3 same-context, 1 cross, 0 preference.",
        ),
        (
            ["--pairing", "every_pair", "--max-pairs", "6"],
            None,
            "6 pairs: 3 same-context, 3 cross, 0 preference.",
        ),
    ):
        result = CliRunner().invoke(cli, [*preview, *options])
        assert result.exit_code == 0, result.output
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        if kinds is not None:
            assert [line["kind"] for line in lines] == kinds
        assert result.stderr == f"{summary}\n"
    bad = CliRunner().invoke(cli, [*preview, "--pairing", "nearest"])
    assert bad.exit_code == 2
    assert (
        "Invalid value for '--pairing': 'nearest' is not one of 'every_pair', 'same_context_first'."
        in bad.output
    )
    bad = CliRunner().invoke(cli, [*preview, "--pairing", "every_pair", "--min-pairs", "3"])
    assert bad.exit_code == 2
    assert "Error: --min-pairs is for --pairing same_context_first." in bad.output
