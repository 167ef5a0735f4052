"""OTLP JSON imported, through the same pipeline as a live export (otlp-ingest §3.3): the rm surface's
`otel` format and `redline import`, one export request as a document or one per line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import select

from redline.cli.main import cli
from redline.db import Database
from redline.traces.models import Trace
from tests.conftest import Harness
from tests.otlp.builders import raw_spans
from tests.otlp.examples import STEPS_10_1, example_10_1, example_10_4
from tests.otlp.payloads import export_json, export_request


def _export_text(specs: list[dict[str, object]], trace: str = "trace") -> str:
    return json.dumps(export_json(export_request(raw_spans(specs, trace=trace))))


def test_the_rm_import_takes_otlp_json_and_its_runs_settle(harness: Harness) -> None:
    answer = harness.client.post(
        "/api/v1/rm/traces/import",
        json={"format": "auto", "data": _export_text(example_10_1())},
        headers=harness.admin,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["format"], body["imported"]) == ("otel", 1)
    run = harness.client.get(f"/v1/runs/{body['trace_ids'][0]}", headers=harness.admin).json()
    assert run["status"] == "completed"
    assert [step["content"] for step in run["steps"]] == [step["content"] for step in STEPS_10_1]
    formats = harness.client.get("/api/v1/rm/formats", headers=harness.admin).json()
    assert [entry["name"] for entry in formats] == ["stash", "openai_chat", "anthropic_messages", "otel"]


def test_the_rm_import_refuses_what_is_not_otlp_json_in_its_words(harness: Harness) -> None:
    answer = harness.client.post(
        "/api/v1/rm/traces/import",
        json={"format": "otel", "data": '{"resourceSpans": 3}'},
        headers=harness.admin,
    )
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("could not parse as otel: ")
    unknown = harness.client.post(
        "/api/v1/rm/traces/import", json={"format": "x", "data": "{}"}, headers=harness.admin
    )
    assert unknown.json() == {
        "detail": "unknown format 'x'; expected auto or one of: stash, openai_chat, anthropic_messages, otel"
    }


def test_redline_import_reads_otlp_json_lines(store_url: str, tmp_path: Path, db: Database) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(_export_text(example_10_1(), "one") + "\n" + _export_text(example_10_4(), "two") + "\n")
    result = CliRunner().invoke(
        cli, ["--database-url", store_url, "import", str(path), "--project", "default"]
    )
    assert result.exit_code == 0, result.output
    assert "Imported 2 runs (9 steps) into default" in result.output
    with db.read() as session:
        assert sorted(session.scalars(select(Trace.status))) == ["completed", "completed"]
    again = CliRunner().invoke(
        cli, ["--database-url", store_url, "import", str(path), "--format", "otel", "--project", "default"]
    )
    assert again.exit_code == 0, again.output
    with db.read() as session:
        assert len(session.scalars(select(Trace.id)).all()) == 2


def test_redline_import_names_the_line_that_is_not_an_export(store_url: str, tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(_export_text(example_10_1()) + '\n{"resourceSpans": [{"scopeSpans": 1}]}\n')
    result = CliRunner().invoke(
        cli, ["--database-url", store_url, "import", str(path), "--project", "default"]
    )
    assert result.exit_code == 1
    assert "line 2: request body is not valid OTLP JSON" in result.output
