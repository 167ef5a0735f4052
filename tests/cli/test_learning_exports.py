"""`redline pairs export` (TRL's conversational format, and the API's pairs) and `redline gepa export`,
on both stores: traces rated, commented and corrected over HTTP, a model made (and, for GEPA, trained by
the real worker and scoring traces), then the command's lines read back exactly."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from sqlalchemy import update

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationIn
from redline.cli.main import cli
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.learning import service as learning
from redline.learning.gepa import NO_FEEDBACK
from redline.traces.models import Trace
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import Harness, bootstrap_admin, run_waiting_jobs
from tests.samples import REFUND_STEPS

RM = "/api/v1/rm"
USER = {"role": "user", "content": "I want a refund for order 1182"}
LOOKUP = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {"type": "function", "function": {"name": "lookup_order", "arguments": {"order_id": "1182"}}}
    ],
}
RESULT = {"role": "tool", "content": '{"status": "delivered"}'}
ANSWER = {"role": "assistant", "content": "Your order was delivered on May 3."}
# A run that refunds before looking the order up, saying so as it calls: text and a call in one step.
REFUND_FIRST = copy.deepcopy(REFUND_STEPS)
REFUND_FIRST[2].update(
    content="Let me refund that.", toolName="issue_refund", toolInput={"order_id": "1182", "amount": 40}
)
REFUND_FIRST[3]["content"] = '{"refunded": true}'
REFUND_FIRST[4]["content"] = "I've issued a full refund to your card."
REFUND_CALL = {
    "role": "assistant",
    "content": "Let me refund that.",
    "tool_calls": [
        {
            "type": "function",
            "function": {"name": "issue_refund", "arguments": {"order_id": "1182", "amount": 40}},
        }
    ],
}


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def _run(harness: Harness, steps: list[dict[str, Any]]) -> str:
    run = harness.run(steps=copy.deepcopy(steps))
    return str(_ok(harness.client.post("/v1/runs", json=run, headers=harness.admin), 201)["id"])


def _annotate(harness: Harness, trace_id: str, **body: Any) -> dict[str, Any]:
    made: dict[str, Any] = _ok(
        harness.client.post(f"{RM}/traces/{trace_id}/annotations", json=body, headers=harness.admin)
    )
    return made


def _model(harness: Harness, trace_ids: list[str], name: str = "refunds") -> dict[str, Any]:
    body = {"name": name, "trace_ids": trace_ids}
    made: dict[str, Any] = _ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    return made


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _rated_and_corrected(harness: Harness) -> tuple[str, str, dict[str, Any]]:
    """A good run rated +, a refund-first run rated −, and a correction of the good run's answer."""
    good, bad = _run(harness, REFUND_STEPS), _run(harness, REFUND_FIRST)
    _annotate(harness, good, rating=1)
    _annotate(harness, bad, rating=-1, comment="Refunded before looking the order up")
    body = {"runId": good, "answer": "wrong", "shouldSay": "It was delivered on May 3; want a refund?"}
    _ok(harness.client.post("/v1/corrections", json=body, headers=harness.admin), 201)
    return good, bad, _model(harness, [good, bad])


# ---------------------------------------------------------------------------------------- pairs export


def test_trl_export_is_conversational_with_tool_calls(
    harness: Harness, database_url: str, tmp_path: Path
) -> None:
    _, _, model = _rated_and_corrected(harness)
    out = tmp_path / "pairs.jsonl"
    result = invoke(database_url, "pairs", "export", model["id"], "--format", "trl", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert result.output == f'Wrote 2 pairs of "refunds" to {out} (trl).\n'
    lines = _lines(out)
    # Each line's other columns are the pair's kind and context, as the API lists them (docs/learning.md).
    listed = _ok(harness.client.get(f"{RM}/reward-models/{model['id']}/pairs", headers=harness.admin))[
        "pairs"
    ]
    assert [(line.pop("kind"), line.pop("context_id")) for line in lines] == [
        (pair["kind"], pair["context_id"]) for pair in listed
    ]
    # Both answer the same conversation; the correction's two answers follow the same steps.
    assert [pair["kind"] for pair in listed] == ["same_context", "same_context"]
    assert listed[0]["context_id"].startswith("conversation:")
    assert listed[1]["context_id"].startswith("prefix:")
    rating, correction = lines
    # The trace pair: whole runs, system steps left out; the call with text is one message with both.
    assert rating == {
        "chosen": [USER, LOOKUP, RESULT, ANSWER],
        "rejected": [
            USER,
            REFUND_CALL,
            {"role": "tool", "content": '{"refunded": true}'},
            {"role": "assistant", "content": "I've issued a full refund to your card."},
        ],
    }
    # The correction's step pair: the same three messages, then the answer it should have given.
    assert correction == {
        "chosen": [
            USER,
            LOOKUP,
            RESULT,
            {"role": "assistant", "content": "It was delivered on May 3; want a refund?"},
        ],
        "rejected": [USER, LOOKUP, RESULT, ANSWER],
    }
    assert correction["chosen"][:3] == correction["rejected"][:3]
    assert all(list(line) == ["chosen", "rejected"] for line in (rating, correction))


def test_jsonl_export_is_the_apis_pairs(harness: Harness, database_url: str) -> None:
    _, _, model = _rated_and_corrected(harness)
    listed = _ok(harness.client.get(f"{RM}/reward-models/{model['id']}/pairs", headers=harness.admin))[
        "pairs"
    ]
    result = CliRunner().invoke(
        cli, ["--database-url", database_url, "pairs", "export", "refunds", "--format", "jsonl"]
    )
    assert result.exit_code == 0, result.output
    assert [json.loads(line) for line in result.stdout.splitlines()] == listed
    assert result.stderr == "2 pairs.\n"
    # `reward-models pairs` writes the same lines.
    same = CliRunner().invoke(cli, ["--database-url", database_url, "reward-models", "pairs", model["id"]])
    assert same.stdout == result.stdout


def test_pairs_export_refuses_what_it_cannot_find(harness: Harness, database_url: str) -> None:
    missing = str(uuid.uuid4())
    result = invoke(database_url, "pairs", "export", missing)
    assert (result.exit_code, result.output) == (1, f'Error: No reward-model "{missing}".\n')
    result = invoke(database_url, "pairs", "export", "nameless")
    assert (result.exit_code, result.output) == (1, 'Error: No reward-model "nameless".\n')
    result = invoke(database_url, "pairs", "export", missing, "--format", "csv")
    assert result.exit_code == 2
    assert "'csv' is not one of 'trl', 'jsonl'" in result.output


def test_a_large_model_exports_every_pair_a_page_at_a_time(
    db: Database, database_url: str, tmp_path: Path
) -> None:
    """50 runs rated + and 50 rated − make 2,500 trace pairs: three pages of 1,000, all of them written."""
    first = bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        stored = ingest.record_runs(
            session,
            actor,
            [
                RunIn(
                    project_id=first.project.id,
                    external_id=f"r{i}",
                    status="completed",
                    steps=[
                        StepIn(role="user", content=f"question {i}"),
                        StepIn(role="assistant", content="", tool_name="lookup", tool_input={"n": i}),
                    ],
                )
                for i in range(100)
            ],
        )
        for number, run in enumerate(stored):
            annotation_service.create(session, actor, run.id, AnnotationIn(rating=1 if number % 2 else -1))
        model = learning.create(
            session, actor, name="big", trace_ids=[run.id for run in stored], config={"max_pairs": 2500}
        )
    assert model.num_pairs == 2500
    for export_format in ("trl", "jsonl"):
        out = tmp_path / f"{export_format}.jsonl"
        result = invoke(
            database_url, "pairs", "export", "big", "--format", export_format, "--output", str(out)
        )
        assert result.exit_code == 0, result.output
        assert result.output == f'Wrote 2,500 pairs of "big" to {out} ({export_format}).\n'
        lines = _lines(out)
        assert len(lines) == 2500
    assert [line["position"] for line in lines] == list(range(2500))
    assert len({(line["chosen"], line["rejected"]) for line in lines}) == 2500


# ---------------------------------------------------------------------------------------------- GEPA


def _work(harness: Harness) -> int:
    return run_waiting_jobs(harness.db)


def _trained(harness: Harness) -> tuple[dict[str, Any], list[str], list[str]]:
    good: list[str] = []
    bad: list[str] = []
    for _ in range(6):
        good.append(_run(harness, REFUND_STEPS))
        _annotate(harness, good[-1], rating=1)
        bad.append(_run(harness, REFUND_FIRST))
        _annotate(harness, bad[-1], rating=-1)
    model = _model(harness, good + bad)
    assert _work(harness) == 1
    ready: dict[str, Any] = _ok(
        harness.client.get(f"{RM}/reward-models/{model['id']}", headers=harness.admin)
    )
    assert ready["status"] == "ready"
    return ready, good, bad


def _gepa(database_url: str, *args: str) -> tuple[list[dict[str, Any]], Result]:
    result = CliRunner().invoke(cli, ["--database-url", database_url, "gepa", "export", *args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()], result


def test_gepa_record_of_a_scored_and_commented_run(harness: Harness, database_url: str) -> None:
    model, _, bad = _trained(harness)
    trace = bad[0]
    body = {"trace_ids": [trace]}
    [scored] = _ok(
        harness.client.post(f"{RM}/reward-models/{model['id']}/score", json=body, headers=harness.admin)
    )["scores"]
    steps = _ok(harness.client.get(f"{RM}/traces/{trace}", headers=harness.admin))["steps"]
    _annotate(harness, trace, comment="Never refund before the order is looked up.")
    _annotate(
        harness,
        trace,
        step_id=steps[4]["id"],
        rating=-1,
        comment="Promised a refund",
        quote={"text": "full refund"},
    )
    flagged = _annotate(harness, trace, comment="wrong trace, ignore")
    _ok(
        harness.client.patch(
            f"{RM}/annotations/{flagged['id']}", json={"label_error": True}, headers=harness.admin
        )
    )

    [record], result = _gepa(database_url, "--project", "default", "--trace", trace)
    assert result.stderr == "1 record.\n"
    assert list(record) == ["Inputs", "Generated Outputs", "Feedback", "trace_id"]
    assert record["trace_id"] == trace
    assert record["Inputs"] == {
        "system_prompt": "You are a support agent.",
        "user_messages": "I want a refund for order 1182",
    }
    # Arguments as stored: PostgreSQL's JSONB keeps an object's keys in an order of its own.
    call = f"assistant: Let me refund that.\nassistant → issue_refund({json.dumps(steps[2]['tool_input'])})"
    assert record["Generated Outputs"] == (
        "user: I want a refund for order 1182\n\n"
        f"{call}\n\n"
        'tool: {"refunded": true}\n\n'
        "assistant: I've issued a full refund to your card."
    )
    credits = sorted(scored["actions"], key=lambda action: (action["credit"], action["index"]))
    rendered = {
        2: call,
        4: "assistant: I've issued a full refund to your card.",
    }
    assert record["Feedback"] == "\n\n".join(
        [
            f'Reward model "refunds" scored this run {scored["score"]:.4f} (higher is better).',
            "Reviewers' comments:\n"
            "- On the whole run: Never refund before the order is looked up.\n"
            '- On step 4, rated -1, about "full refund": Promised a refund',
            'Lowest-credit steps (reward model "refunds"):\n'
            + "\n".join(
                f"- Step {action['index']}, credit {action['credit']:+.4f}: {rendered[action['index']]}"
                for action in credits
            ),
        ]
    )
    # The refund issued first is the lowest-credit action.
    assert credits[0]["index"] == 2


def test_gepa_export_pages_newest_first_and_leaves_erased_runs_out(
    harness: Harness, database_url: str, tmp_path: Path
) -> None:
    runs = [_run(harness, REFUND_STEPS) for _ in range(5)]
    with harness.db.write() as session:
        session.execute(
            update(Trace).where(Trace.id == uuid.UUID(runs[1])).values(erased_at=Trace.created_at)
        )
    records, result = _gepa(database_url, "--project", "default")
    newest_first = [run for run in reversed(runs) if run != runs[1]]
    assert [record["trace_id"] for record in records] == newest_first
    assert {record["Feedback"] for record in records} == {NO_FEEDBACK}
    assert result.stderr == "4 records.\n"
    out = tmp_path / "gepa.jsonl"
    limited = invoke(
        database_url, "gepa", "export", "--project", harness.project_id, "--limit", "2", "--output", str(out)
    )
    assert limited.output == f'Wrote 2 records of project "default" to {out}.\n'
    assert [record["trace_id"] for record in _lines(out)] == newest_first[:2]
    # Named runs come in the order given.
    named, _ = _gepa(database_url, "--project", "default", "--trace", runs[0], "--trace", runs[4])
    assert [record["trace_id"] for record in named] == [runs[0], runs[4]]


def test_gepa_export_pages_through_more_runs_than_a_chunk(db: Database, database_url: str) -> None:
    first = bootstrap_admin(db)
    with db.write() as session:
        stored = ingest.record_runs(
            session,
            identity.operator(session),
            [
                RunIn(
                    project_id=first.project.id,
                    external_id=f"r{i:03}",
                    status="completed",
                    steps=[StepIn(role="user", content=f"q{i}"), StepIn(role="assistant", content=f"a{i}")],
                )
                for i in range(450)
            ],
        )
    records, result = _gepa(database_url, "--project", "default")
    assert result.stderr == "450 records.\n"
    assert sorted(record["trace_id"] for record in records) == sorted(str(run.id) for run in stored)
    assert len({record["trace_id"] for record in records}) == 450


def test_gepa_export_refuses_a_project_or_trace_it_cannot_find(harness: Harness, database_url: str) -> None:
    result = invoke(database_url, "gepa", "export", "--project", "nope")
    assert (result.exit_code, result.output) == (1, 'Error: No project "nope".\n')
    missing = str(uuid.uuid4())
    result = invoke(database_url, "gepa", "export", "--project", "default", "--trace", missing)
    assert (result.exit_code, result.output) == (1, f"Error: Trace {missing} not found in the project\n")
    result = invoke(database_url, "gepa", "export", "--project", "default", "--trace", "x")
    assert result.exit_code == 2
    assert "each --trace is a trace id (a UUID)." in result.output
