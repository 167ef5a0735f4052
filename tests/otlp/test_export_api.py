"""POST /v1/traces against the real app and store: spans in, runs out, whatever the encoding, the
batching, the order or the resending (otlp-ingest §2, §3, §8, edge cases 1-3, 21-23)."""

from __future__ import annotations

import gzip
from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from redline.app import create_app
from redline.db import Database
from redline.jobs.models import Job
from redline.traces.models import Span, Step, Trace
from redline.traces.otlp.model import RawSpan
from tests.conftest import bootstrap_admin
from tests.otlp.builders import hex_id, raw_spans, trace_hex
from tests.otlp.examples import STEPS_10_1, example_10_1, example_10_5
from tests.otlp.otlpapp import BEARER, ENCODINGS, Encoding, OtlpApp, otlp_app, otlp_settings, steps_of

__all__ = ["otlp_app"]


@pytest.mark.parametrize(("encoding", "gzip"), ENCODINGS)
def test_the_langgraph_example_becomes_one_run_with_its_steps(
    otlp_app: OtlpApp, encoding: Encoding, gzip: bool
) -> None:
    answer = otlp_app.send(raw_spans(example_10_1()), encoding=encoding, gzip=gzip)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == (
        "application/x-protobuf" if encoding == "protobuf" else "application/json"
    )
    assert answer.content == (b"" if encoding == "protobuf" else b"{}")
    [listed] = otlp_app.runs()
    assert listed["externalId"] == trace_hex()
    assert listed["sourceFormat"] == "otel"
    assert listed["status"] == "running"
    run = otlp_app.run(listed["id"])
    assert steps_of(run) == STEPS_10_1
    assert run["input"] == {"messages": [["user", "Weather in Paris?"]]}
    assert run["output"] == "It is rainy, 14 °C."
    assert run["metadata"]["session_id"] == "thread-7"
    assert len(run["spans"]) == 7


@pytest.mark.parametrize("seed", range(4))
def test_batch_splits_and_arrival_order_never_change_the_run(otlp_app: OtlpApp, seed: int) -> None:
    otlp_app.send_in_batches(
        raw_spans(example_10_1()), seed=seed, encoding="json" if seed % 2 else "protobuf"
    )
    [listed] = otlp_app.runs()
    run = otlp_app.run(listed["id"])
    assert steps_of(run) == STEPS_10_1
    assert run["output"] == "It is rainy, 14 °C."


def test_step_ids_survive_rederivation_so_annotations_stay(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_1())
    root, rest = spans[0], spans[1:]
    otlp_app.send(rest)
    [listed] = otlp_app.runs()
    before = {step["index"]: step["id"] for step in otlp_app.run(listed["id"])["steps"]}
    otlp_app.send([root])
    after = {step["index"]: step["id"] for step in otlp_app.run(listed["id"])["steps"]}
    assert after == before


def test_a_resent_batch_changes_nothing_and_a_later_copy_replaces_with_a_warning(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_1())
    assert otlp_app.send(spans).status_code == 200
    with otlp_app.db.read() as session:
        updated = session.scalar(select(Trace.updated_at))
    again = otlp_app.send(spans, encoding="json")
    assert (again.status_code, again.json()) == (200, {})
    with otlp_app.db.read() as session:
        assert session.scalar(select(Trace.updated_at)) == updated
        assert session.scalar(select(func.count()).select_from(Span)) == len(spans)
    changed = replace(
        spans[0], end_ns=spans[0].end_ns + 5, attributes={**spans[0].attributes, "output.value": "Sunny."}
    )
    answer = otlp_app.send([changed], encoding="json")
    assert answer.status_code == 200
    assert answer.json() == {
        "partialSuccess": {"rejectedSpans": "0", "errorMessage": "1 span replaced an earlier copy."}
    }
    [listed] = otlp_app.runs()
    assert otlp_app.run(listed["id"])["output"] == "Sunny."
    older = replace(
        spans[0], end_ns=spans[0].end_ns - 1, attributes={**spans[0].attributes, "output.value": "Old."}
    )
    assert otlp_app.send([older], encoding="json").json() == {}
    assert otlp_app.run(listed["id"])["output"] == "Sunny."


def test_two_copies_in_one_request_the_second_wins(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_1())
    second = replace(spans[0], attributes={**spans[0].attributes, "output.value": "Second."})
    assert otlp_app.send([*spans, second]).status_code == 200
    [listed] = otlp_app.runs()
    assert otlp_app.run(listed["id"])["output"] == "Second."
    with otlp_app.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Span)) == len(spans)


def test_only_http_and_database_spans_are_kept_but_the_run_is_hidden(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_5())
    answer = otlp_app.send(spans)
    assert (answer.status_code, answer.content) == (200, b"")
    assert otlp_app.runs() == []
    with otlp_app.db.read() as session:
        run_id = session.scalar(select(Trace.id))
        assert session.scalar(select(func.count()).select_from(Span)) == 2
    run = otlp_app.run(str(run_id))
    assert run["steps"] == []
    assert {span["kind"] for span in run["spans"]} == {"UNKNOWN"}


def test_a_run_settles_once_quiet_and_late_spans_keep_annotated_steps(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_1())
    otlp_app.send(spans[:-1])
    [listed] = otlp_app.runs()
    assert listed["status"] == "running"
    assert otlp_app.settle() >= 1
    run = otlp_app.run(listed["id"])
    assert run["status"] == "completed"
    user_step = next(step for step in run["steps"] if step["role"] == "user")
    annotated = otlp_app.client.post(
        f"/api/v1/rm/traces/{listed['id']}/annotations",
        json={"step_id": user_step["id"], "comment": "Ambiguous city."},
        headers=BEARER,
    )
    assert annotated.status_code == 200, annotated.text
    otlp_app.send(spans[-1:])
    late = otlp_app.run(listed["id"])
    assert late["status"] == "completed"
    assert late["metadata"]["otlp"]["late_spans"] == 1
    assert steps_of(late) == STEPS_10_1
    assert user_step["id"] in {step["id"] for step in late["steps"]}
    assert otlp_app.settle() == 0


def test_an_annotated_step_that_vanishes_is_kept_after_the_others_as_superseded(otlp_app: OtlpApp) -> None:
    first = raw_spans(
        [
            {
                "span": "root",
                "parent": None,
                "name": "agent",
                "attributes": {
                    "openinference.span.kind": "AGENT",
                    "input.value": "Hi",
                    "output.value": "Hello.",
                },
            }
        ]
    )
    otlp_app.send(first)
    [listed] = otlp_app.runs()
    run = otlp_app.run(listed["id"])
    answer_step = next(step for step in run["steps"] if step["role"] == "assistant")
    assert (
        otlp_app.client.post(
            f"/api/v1/rm/traces/{listed['id']}/annotations",
            json={"step_id": answer_step["id"], "rating": 1},
            headers=BEARER,
        ).status_code
        == 200
    )
    changed = [
        replace(
            first[0],
            end_ns=first[0].end_ns + 1,
            attributes={**first[0].attributes, "output.value": "Goodbye."},
        )
    ]
    otlp_app.send(changed)
    steps = otlp_app.run(listed["id"])["steps"]
    assert [step["content"] for step in steps] == ["Hi", "Goodbye.", "Hello."]
    assert steps[-1]["id"] == answer_step["id"]
    assert steps[-1]["metadata"]["superseded"] is True
    with otlp_app.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Step)) == 3


SAID = "Sure! I've issued a full refund to your card."
QUOTE = {"text": "I've issued a full refund", "prefix": "Sure! ", "suffix": " to your card"}


def _agent_answering(output: str, *, later: int = 0) -> list[RawSpan]:
    """One agent span answering "Hi" with `output`; `later` ns later than the first copy (a re-export)."""
    [span] = raw_spans(
        [
            {
                "span": "root",
                "parent": None,
                "name": "agent",
                "attributes": {
                    "openinference.span.kind": "AGENT",
                    "input.value": "Hi",
                    "output.value": output,
                },
            }
        ]
    )
    return [replace(span, end_ns=span.end_ns + later)]


def _quoted_answer(otlp_app: OtlpApp) -> tuple[str, str, dict[str, Any], str]:
    """The run of an agent saying SAID, its answer step, a comment quoting it and a rating of the step."""
    otlp_app.send(_agent_answering(SAID))
    [listed] = otlp_app.runs()
    answer_step = next(s for s in otlp_app.run(listed["id"])["steps"] if s["role"] == "assistant")
    said = {"step_id": answer_step["id"], "comment": "Promised a refund", "quote": QUOTE}
    quoted = otlp_app.client.post(f"/api/v1/rm/traces/{listed['id']}/annotations", json=said, headers=BEARER)
    assert quoted.status_code == 200, quoted.text
    rated = otlp_app.client.post(
        f"/api/v1/rm/traces/{listed['id']}/annotations",
        json={"step_id": answer_step["id"], "rating": -1},
        headers=BEARER,
    )
    assert rated.status_code == 200, rated.text
    return listed["id"], answer_step["id"], quoted.json(), rated.json()["id"]


def _rm_trace(otlp_app: OtlpApp, run_id: str) -> dict[str, Any]:
    answer = otlp_app.client.get(f"/api/v1/rm/traces/{run_id}", headers=BEARER)
    assert answer.status_code == 200, answer.text
    trace: dict[str, Any] = answer.json()
    return trace


def test_a_quote_whose_words_are_in_the_new_step_moves_onto_it(otlp_app: OtlpApp) -> None:
    """A changed answer is a new step beside the superseded one (§8.10): the quote found in it moves
    there, at its changed words; the rating of the old step stays with the old words."""
    run_id, old_step, quoted, rated = _quoted_answer(otlp_app)
    changed = "Sure! I have issued a full refund to your card."

    otlp_app.send(_agent_answering(changed, later=1))

    trace = _rm_trace(otlp_app, run_id)
    assert [(s["content"], s["metadata"].get("superseded")) for s in trace["steps"]] == [
        ("Hi", None),
        (changed, None),
        (SAID, True),
    ]
    new_step = trace["steps"][1]["id"]
    assert trace["steps"][2]["id"] == old_step
    [moved, stayed] = trace["annotations"]
    start = changed.index("I have")
    assert moved == {
        **quoted,
        "step_id": new_step,
        "quote": {
            **QUOTE,
            "start": start,
            "end": start + len("I have issued a full refund"),
            "anchor": "fuzzy",
        },
    }
    assert (stayed["id"], stayed["step_id"], stayed["quote"]) == (rated, old_step, None)
    assert (trace["negative_count"], trace["comment_count"]) == (1, 1)


def test_a_quote_whose_words_are_not_in_the_new_step_is_detached_on_the_old(otlp_app: OtlpApp) -> None:
    run_id, old_step, quoted, _ = _quoted_answer(otlp_app)

    otlp_app.send(_agent_answering("I can't refund this order.", later=1))

    trace = _rm_trace(otlp_app, run_id)
    assert [s["content"] for s in trace["steps"]] == ["Hi", "I can't refund this order.", SAID]
    assert trace["annotations"][0] == {
        **quoted,
        "step_id": old_step,
        "quote": {**QUOTE, "start": None, "end": None, "anchor": "detached"},
    }
    # Derived again (a late copy), the old step is superseded already: nothing changes.
    otlp_app.send(_agent_answering("I can't refund this order.", later=2))
    assert _rm_trace(otlp_app, run_id)["annotations"] == trace["annotations"]


def test_a_re_spaced_message_keeps_its_step_and_its_quote_follows_the_words(otlp_app: OtlpApp) -> None:
    """Whitespace does not change a step's id (its fingerprint collapses it), but it moves the words."""
    run_id, old_step, quoted, _ = _quoted_answer(otlp_app)
    respaced = "Sure!   I've issued a full refund to your card."

    otlp_app.send(_agent_answering(respaced, later=1))

    trace = _rm_trace(otlp_app, run_id)
    assert [(s["id"], s["content"]) for s in trace["steps"][1:]] == [(old_step, respaced)]
    assert trace["annotations"][0] == {**quoted, "quote": {**QUOTE, "start": 8, "end": 33, "anchor": "exact"}}


def test_a_trace_of_another_project_is_refused_and_not_mixed(otlp_app: OtlpApp) -> None:
    made = otlp_app.client.post("/v1/projects", json={"name": "other"}, headers=BEARER)
    assert made.status_code == 201, made.text
    spans = [replace(span, resource={"redline.project": "default"}) for span in raw_spans(example_10_1())]
    assert otlp_app.send(spans[:3]).status_code == 200
    moved = [replace(span, resource={"service.name": "x", "redline.project": "other"}) for span in spans[3:]]
    answer = otlp_app.send([*spans[:3], *moved], encoding="json")
    assert answer.status_code == 200
    body = answer.json()["partialSuccess"]
    assert body["rejectedSpans"] == str(len(moved))
    assert f"trace {trace_hex()} belongs to another project" in body["errorMessage"]
    with otlp_app.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Trace)) == 1
    only_moved = otlp_app.send(moved, encoding="json")
    assert only_moved.status_code == 400
    assert "belongs to another project" in only_moved.json()["message"]


def test_the_project_header_wins_and_names_must_be_writable(otlp_app: OtlpApp) -> None:
    made = otlp_app.client.post("/v1/projects", json={"name": "agents"}, headers=BEARER)
    spans = raw_spans(example_10_1())
    answer = otlp_app.send(spans, headers={"x-redline-project": "agents"})
    assert answer.status_code == 200
    [listed] = otlp_app.runs()
    assert listed["projectId"] == made.json()["id"]
    missing = otlp_app.send(spans, encoding="json", headers={"x-redline-project": "nope"})
    assert missing.status_code == 404
    assert missing.json()["code"] == 5


def test_without_a_project_hint_a_token_writing_to_two_projects_is_told_how(otlp_app: OtlpApp) -> None:
    otlp_app.client.post("/v1/projects", json={"name": "second"}, headers=BEARER)
    answer = otlp_app.send(raw_spans(example_10_1()), encoding="json")
    assert answer.status_code == 400
    assert (
        "send the x-redline-project header or set the redline.project resource attribute"
        in answer.json()["message"]
    )
    by_attribute = otlp_app.send(
        [
            replace(span, resource={"openinference.project.name": "second"})
            for span in raw_spans(example_10_1())
        ]
    )
    assert by_attribute.status_code == 200


def test_basic_auth_carries_the_token_as_its_password_and_bad_tokens_are_refused(otlp_app: OtlpApp) -> None:
    import base64

    from tests.conftest import ADMIN_TOKEN

    basic = base64.b64encode(f"pk-anything:{ADMIN_TOKEN}".encode()).decode()
    assert (
        otlp_app.send(raw_spans(example_10_1()), headers={"Authorization": f"Basic {basic}"}).status_code
        == 200
    )
    bad = otlp_app.send(raw_spans(example_10_1()), encoding="json", headers={"Authorization": "Bearer nope"})
    assert (bad.status_code, bad.json()["message"]) == (
        401,
        "The bearer token is not valid or has been revoked.",
    )


def test_erasing_a_run_erases_its_raw_spans_and_refuses_more_of_them(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_1())
    otlp_app.send(spans)
    [listed] = otlp_app.runs()
    erased = otlp_app.client.post(f"/v1/runs/{listed['id']}/erase", headers=BEARER)
    assert erased.status_code == 200, erased.text
    from redline.traces.models import OtlpResource

    with otlp_app.db.read() as session:
        assert session.scalars(select(Span.attributes).where(Span.attributes.is_not(None))).all() == []
        assert session.scalar(select(func.count()).select_from(OtlpResource)) == 0
    again = otlp_app.send([replace(spans[0], end_ns=spans[0].end_ns + 1)], encoding="json")
    assert again.status_code == 400
    assert f"trace {trace_hex()} was erased" in again.json()["message"]


def test_logs_and_metrics_are_answered_not_kept(otlp_app: OtlpApp) -> None:
    answer = otlp_app.client.post(
        "/v1/logs",
        content=b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{},{}]}]}]}',
        headers={"content-type": "application/json", **BEARER},
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "partialSuccess": {"rejectedLogRecords": "2", "errorMessage": "Redline ingests traces only"}
    }
    wrong_method = otlp_app.client.get("/v1/traces", headers=BEARER)
    assert wrong_method.status_code == 405


def test_a_span_id_hex_is_stored_lowercase_and_runs_get_stable_ids(otlp_app: OtlpApp) -> None:
    otlp_app.send(raw_spans(example_10_1()))
    with otlp_app.db.read() as session:
        ids = set(session.scalars(select(Span.span_id)))
    assert hex_id("L1") in ids


def _app_with(db: Database, database_url: str, **settings: object) -> OtlpApp:
    first = bootstrap_admin(db)
    client = TestClient(
        create_app(otlp_settings(database_url, **settings), db), raise_server_exceptions=False
    )
    return OtlpApp(client, db, str(first.project.id))


def test_limits_answer_413_and_415_naming_them(db: Database, database_url: str) -> None:
    app = _app_with(db, database_url, otlp_max_spans=3, otlp_max_body_bytes=65536)
    spans = raw_spans(example_10_1())
    too_many = app.send(spans, encoding="json")
    assert too_many.status_code == 413
    assert (
        too_many.json()["message"]
        == "request has 7 spans, over the limit of 3 per request (REDLINE_OTLP_MAX_SPANS)"
    )
    bomb = gzip.compress(b"{" + b" " * 1_000_000 + b"}")
    inflated = app.client.post(
        "/v1/traces",
        content=bomb,
        headers={"content-type": "application/json", "content-encoding": "gzip", **BEARER},
    )
    assert inflated.status_code == 413
    assert inflated.json()["message"].endswith("limit once decompressed (REDLINE_OTLP_MAX_BODY_BYTES)")
    brotli = app.send(spans[:1], headers={"content-encoding": "br"})
    assert brotli.status_code == 415
    logs = app.client.post(
        "/v1/traces", content=b'{"resourceLogs": []}', headers={"content-type": "application/json", **BEARER}
    )
    assert (logs.status_code, logs.json()) == (200, {})


def test_a_token_over_its_span_rate_is_told_when_to_come_back(db: Database, database_url: str) -> None:
    app = _app_with(db, database_url, otlp_rate_spans_per_sec=7)
    spans = raw_spans(example_10_1())
    assert app.send(spans).status_code == 200
    again = app.send(spans, encoding="json")
    assert again.status_code == 429
    assert again.headers["retry-after"] == "1"
    assert "this token may send 7 spans per second" in again.json()["message"]


def test_large_traces_are_derived_by_the_worker_and_a_backlog_answers_503(
    db: Database, database_url: str
) -> None:
    app = _app_with(db, database_url, otlp_inline_derive_max_spans=2, otlp_max_pending_derive=1)
    spans = raw_spans(example_10_1())
    assert app.send(spans).status_code == 200
    with db.read() as session:
        assert session.scalar(select(Trace.step_count)) == 0
    busy = app.send(raw_spans(example_10_1(), trace="other"), encoding="json")
    assert busy.status_code == 503
    assert busy.headers["retry-after"] == "5"
    app.settle()
    [listed] = app.runs()
    run = app.run(listed["id"])
    assert (run["status"], steps_of(run)) == ("completed", STEPS_10_1)
    assert app.send(raw_spans(example_10_1(), trace="other")).status_code == 200


def test_credentials_in_other_shapes_are_refused_with_what_to_send(otlp_app: OtlpApp) -> None:
    spans = raw_spans(example_10_1())
    for authorization, message in (
        ("Basic ###", "The Basic credentials are not base64 of user:token."),
        (
            "Token abc",
            "Send the token as Authorization: Bearer <token> (or Basic, with the token as password).",
        ),
    ):
        answer = otlp_app.send(spans, encoding="json", headers={"Authorization": authorization})
        assert (answer.status_code, answer.json()["message"]) == (401, message)
    logs = otlp_app.client.post("/v1/metrics", content=b"{}", headers={"content-type": "application/json"})
    assert logs.status_code == 401


def test_nul_characters_are_kept_as_replacement_characters(otlp_app: OtlpApp) -> None:
    [span] = raw_spans(
        [
            {
                "span": "root",
                "parent": None,
                "name": "agent\x00run",
                "attributes": {
                    "openinference.span.kind": "AGENT",
                    "input.value": "Hi\x00",
                    "tags": ["a\x00"],
                },
                "events": [{"name": "note", "attributes": {"text": "x\x00"}}],
                "resource": {"service.name": "nul\x00agent"},
            }
        ]
    )
    assert otlp_app.send([span]).status_code == 200
    with otlp_app.db.read() as session:
        stored = session.scalars(select(Span)).one()
        assert stored.name == "agent\ufffdrun"
        assert stored.attributes == {
            "openinference.span.kind": "AGENT",
            "input.value": "Hi\ufffd",
            "tags": ["a\ufffd"],
        }
        assert stored.events is not None
        assert stored.events[0]["attributes"] == {"text": "x\ufffd"}


def test_a_settle_job_put_off_by_later_spans_waits_again(db: Database, database_url: str) -> None:
    app = _app_with(db, database_url, otlp_settle_seconds=3600)
    app.send(raw_spans(example_10_1()))
    with db.write() as session:
        # Due now, as a settle job is once its wait has passed, while the run's last span is recent.
        session.execute(update(Job).values(run_after=Job.created_at))
    app.settle()
    [listed] = app.runs()
    assert listed["status"] == "running"
    with db.read() as session:
        waiting = session.scalars(
            select(Job.run_after).where(Job.kind == "otlp_settle", Job.state == "queued")
        ).all()
    assert len(waiting) == 1
