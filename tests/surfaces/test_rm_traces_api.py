"""Traces on the rm surface over HTTP, on both stores: the list and its counts, a trace read whole, imports
in each format with every refusal the document words, re-imports that keep step ids, and who may do what.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationChange, AnnotationIn
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.service import Actor
from tests.conftest import ADMIN_TOKEN, Harness
from tests.samples import jsonl, stash_record

RM = "/api/v1/rm"
SUMMARY_KEYS = [
    "id",
    "external_id",
    "title",
    "source_format",
    "step_count",
    "positive_count",
    "negative_count",
    "comment_count",
    "label_error_count",
    "latest_score",
    "created_at",
    "shared_training_allowed",
    "action_credit",
]
DETAIL_KEYS = [
    *SUMMARY_KEYS,
    "metadata",
    "steps",
    "spans",
    "annotations",
    "scores",
    "action_scores",
    "scoring_runs",
]
NOBODY = "5f0c3a9e-8d1b-4c47-9e2a-6b7d8c9e0f1a"  # a UUID no trace has
STEP_KEYS = ["id", "index", "role", "content", "tool_name", "tool_input", "tool_call_id", "metadata"]

REFUND: dict[str, Any] = stash_record(metadata={"channel": "chat"})
REFUND["steps"][4]["metadata"] = {"thinking": "ok"}
OPENAI = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
ANTHROPIC = {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}


def stash_trace(ident: str | None = None, *contents: str) -> dict[str, Any]:
    """A stash record of alternating user and assistant steps."""
    roles = ("user", "assistant")
    steps = [{"role": roles[i % 2], "content": text} for i, text in enumerate(contents or ("hi", "hello"))]
    return {"id": ident, "steps": steps} if ident else {"steps": steps}


def _import(
    harness: Harness,
    data: str,
    fmt: str = "auto",
    headers: dict[str, str] | None = None,
    project_id: str | None = None,
) -> Any:
    params = {"project_id": project_id} if project_id else None
    return harness.client.post(
        f"{RM}/traces/import",
        json={"data": data, "format": fmt},
        params=params,
        headers=headers or harness.admin,
    )


def _imported(harness: Harness, data: str, fmt: str = "auto", **kwargs: Any) -> dict[str, Any]:
    answer = _import(harness, data, fmt, **kwargs)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _get(harness: Harness, path: str, headers: dict[str, str] | None = None, **params: Any) -> Any:
    answer = harness.client.get(f"{RM}{path}", params=params, headers=headers or harness.admin)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _detail(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert list(body) == ["detail"]
    detail: str = body["detail"]
    return detail


def _admin(harness: Harness) -> Actor:
    with harness.db.read() as session:
        actor, _ = identity.authenticate(session, ADMIN_TOKEN)
    return actor


def _annotate(harness: Harness, trace_id: str, **fields: Any) -> str:
    with harness.db.write() as session:
        made = annotation_service.create(
            session, _admin(harness), uuid.UUID(trace_id), AnnotationIn.model_validate(fields)
        )
        return str(made.id)


def _flag(harness: Harness, annotation_id: str) -> None:
    with harness.db.write() as session:
        annotation_service.change(
            session, _admin(harness), uuid.UUID(annotation_id), AnnotationChange(label_error=True)
        )


def _project(harness: Harness, name: str) -> str:
    made = harness.client.post("/v1/projects", json={"name": name}, headers=harness.admin)
    assert made.status_code == 201, made.text
    project_id: str = made.json()["id"]
    return project_id


# -- the list --------------------------------------------------------------------------------------------


def test_the_list_is_newest_first_with_the_total_and_pages_by_offset(harness: Harness) -> None:
    ids = [_imported(harness, jsonl(stash_trace(f"t{i}")))["trace_ids"][0] for i in range(5)]

    page = _get(harness, "/traces")
    assert page["total"] == 5
    assert [trace["id"] for trace in page["traces"]] == ids[::-1]
    assert list(page["traces"][0]) == SUMMARY_KEYS

    pages = [_get(harness, "/traces", limit=2, offset=offset) for offset in (0, 2, 4)]
    assert [len(p["traces"]) for p in pages] == [2, 2, 1]
    assert {p["total"] for p in pages} == {5}
    assert [trace["id"] for p in pages for trace in p["traces"]] == ids[::-1]
    assert _get(harness, "/traces", limit=2, offset=10**30) == {"traces": [], "total": 5}


def test_traces_stored_at_once_are_listed_by_id(harness: Harness) -> None:
    older = _imported(harness, jsonl(stash_trace("old")))["trace_ids"]
    batch = _imported(harness, jsonl(*(stash_trace(f"b{i}") for i in range(4))))["trace_ids"]

    listed = [trace["id"] for trace in _get(harness, "/traces")["traces"]]

    assert listed == [*sorted(batch, reverse=True), *older]


def test_a_summary_says_what_the_trace_is(harness: Harness) -> None:
    [trace_id] = _imported(harness, jsonl(REFUND))["trace_ids"]

    [summary] = _get(harness, "/traces")["traces"]

    assert summary == {
        "id": trace_id,
        "external_id": "ticket-1182",
        "title": "Refund for 1182",
        "source_format": "stash",
        "step_count": 5,
        "positive_count": 0,
        "negative_count": 0,
        "comment_count": 0,
        "label_error_count": 0,
        "latest_score": None,
        "created_at": summary["created_at"],
        "shared_training_allowed": False,
        "action_credit": None,
    }
    assert summary["created_at"].endswith("+00:00")


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (501, 0), (50, -1)])
def test_a_page_out_of_bounds_is_a_422(harness: Harness, limit: int, offset: int) -> None:
    answer = harness.client.get(
        f"{RM}/traces", params={"limit": limit, "offset": offset}, headers=harness.admin
    )
    detail = _detail(answer, 422)
    assert detail.startswith("limit: " if offset == 0 else "offset: ")


def test_the_list_counts_ratings_comments_and_flags_per_trace(harness: Harness) -> None:
    rated, quiet = _imported(harness, jsonl(REFUND, stash_trace("quiet")))["trace_ids"]
    step_id = _get(harness, f"/traces/{rated}")["steps"][4]["id"]
    _annotate(harness, rated, rating=1)
    _annotate(harness, rated, rating=1, step_id=step_id, comment="Checked the order first")
    _annotate(harness, rated, rating=-1)
    _flag(harness, _annotate(harness, rated, rating=1, comment="wrong label"))
    _annotate(harness, rated, comment="Tone is fine")

    counted = {trace["id"]: trace for trace in _get(harness, "/traces")["traces"]}

    assert {key: counted[rated][key] for key in SUMMARY_KEYS[5:9]} == {
        "positive_count": 2,
        "negative_count": 1,
        "comment_count": 3,
        "label_error_count": 1,
    }
    assert [counted[quiet][key] for key in SUMMARY_KEYS[5:9]] == [0, 0, 0, 0]
    detail = _get(harness, f"/traces/{rated}")
    assert [detail[key] for key in SUMMARY_KEYS[5:9]] == [2, 1, 3, 1]


# -- one trace -------------------------------------------------------------------------------------------


def test_a_trace_is_read_whole_with_its_steps_spans_and_annotations(harness: Harness) -> None:
    spans = [
        {"spanId": "root", "name": "support-agent", "kind": "agent", "startedAt": "2026-11-01T10:00:00Z"}
    ]
    run = harness.client.post(
        "/v1/runs", json=harness.run(spans=spans, metadata={"a": 1}), headers=harness.admin
    )
    assert run.status_code == 201, run.text
    trace_id = run.json()["id"]
    first = _annotate(harness, trace_id, comment="first")
    second = _annotate(harness, trace_id, rating=-1)
    _flag(harness, first)

    trace = _get(harness, f"/traces/{trace_id}")

    assert list(trace) == DETAIL_KEYS
    assert (trace["id"], trace["source_format"], trace["metadata"]) == (trace_id, "native", {"a": 1})
    assert (trace["scores"], trace["action_scores"], trace["scoring_runs"]) == ([], [], [])
    assert [list(step) for step in trace["steps"]] == [STEP_KEYS] * 5
    assert [step["index"] for step in trace["steps"]] == [0, 1, 2, 3, 4]
    assert all(uuid.UUID(step["id"]) for step in trace["steps"])
    assert trace["steps"][2] | {"id": None} == {
        "id": None,
        "index": 2,
        "role": "assistant",
        "content": "",
        "tool_name": "lookup_order",
        "tool_input": {"order_id": "1182"},
        "tool_call_id": "call_1",
        "metadata": {},
    }
    assert trace["spans"] == [
        {
            "span_id": "root",
            "parent_span_id": None,
            "kind": "agent",
            "name": "support-agent",
            "attributes": {},
            "started_at": "2026-11-01T10:00:00+00:00",
            "ended_at": None,
        }
    ]
    assert [a["id"] for a in trace["annotations"]] == [first, second]
    assert [a["label_error"] for a in trace["annotations"]] == [True, False]
    assert trace["annotations"][0]["author_name"] == "admin"


def test_a_trace_without_metadata_shows_an_empty_object(harness: Harness) -> None:
    [trace_id] = _imported(harness, jsonl(OPENAI))["trace_ids"]

    trace = _get(harness, f"/traces/{trace_id}")

    assert (trace["metadata"], trace["annotations"], trace["spans"]) == ({}, [], [])
    assert [(step["role"], step["content"]) for step in trace["steps"]] == [
        ("user", "hi"),
        ("assistant", "hello"),
    ]


@pytest.mark.parametrize("trace_id", ["not-a-uuid", NOBODY, "1"])
@pytest.mark.parametrize("path", ["/traces/{}", "/workbench/traces/{}/evaluation"])
def test_an_unknown_trace_is_not_found(harness: Harness, trace_id: str, path: str) -> None:
    answer = harness.client.get(RM + path.format(trace_id), headers=harness.admin)
    assert _detail(answer, 404) == "Trace not found"


def test_the_evaluation_says_no_reward_model_scored_the_trace(harness: Harness) -> None:
    [trace_id] = _imported(harness, jsonl(REFUND))["trace_ids"]

    evaluation = _get(harness, f"/workbench/traces/{trace_id}/evaluation")

    assert evaluation == {
        "trace_id": trace_id,
        "status": "not_scored",
        "step_count": 5,
        "actions": [],
        "detail": evaluation["detail"],
    }
    assert "no reward model has scored this trace" in evaluation["detail"].lower()


def test_the_formats_are_listed_in_the_order_auto_tries_them(harness: Harness) -> None:
    formats = _get(harness, "/formats")
    assert [f["name"] for f in formats] == ["stash", "openai_chat", "anthropic_messages", "otel"]
    assert all(list(f) == ["name", "description"] and f["description"] for f in formats)


# -- import ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fmt", "count"),
    [
        (jsonl(REFUND, stash_trace()), "stash", 2),
        (json.dumps([REFUND, stash_trace()], indent=2), "stash", 2),
        (json.dumps(REFUND), "stash", 1),
        (jsonl(OPENAI, OPENAI), "openai_chat", 2),
        (json.dumps(OPENAI["messages"]), "openai_chat", 1),
        (jsonl(ANTHROPIC, ANTHROPIC), "anthropic_messages", 2),
    ],
)
def test_each_format_imports_whether_named_or_detected(
    harness: Harness, data: str, fmt: str, count: int
) -> None:
    for asked in ("auto", fmt):
        body = _imported(harness, data, asked)

        assert list(body) == ["format", "imported", "trace_ids"]
        assert (body["format"], body["imported"], len(body["trace_ids"])) == (fmt, count, count)
        assert all(uuid.UUID(trace_id) for trace_id in body["trace_ids"])
        listed = {trace["id"]: trace for trace in _get(harness, "/traces")["traces"]}
        assert all(listed[trace_id]["source_format"] == fmt for trace_id in body["trace_ids"])


def test_a_stash_trace_keeps_its_id_title_metadata_and_steps(harness: Harness) -> None:
    [trace_id] = _imported(harness, json.dumps(REFUND))["trace_ids"]

    trace = _get(harness, f"/traces/{trace_id}")

    assert (trace["external_id"], trace["title"], trace["metadata"]) == (
        "ticket-1182",
        "Refund for 1182",
        {"channel": "chat"},
    )
    # Read back, every step has every key: unset ones are null, metadata an empty object.
    sent = [{"metadata": {}, **step} for step in REFUND["steps"]]
    shown = [
        {key: value for key, value in step.items() if key not in ("id", "index") and value is not None}
        for step in trace["steps"]
    ]
    assert shown == sent


UNKNOWN = "unknown format 'x'; expected auto or one of: stash, openai_chat, anthropic_messages, otel"
UNDETECTED = "could not detect the trace format; tried: stash, openai_chat, anthropic_messages, otel"


@pytest.mark.parametrize(
    ("data", "fmt", "sentence"),
    [
        (jsonl(REFUND), "x", UNKNOWN),
        (jsonl({"hello": "world"}), "auto", UNDETECTED),
        ("not json at all", "auto", UNDETECTED),
        (jsonl({**REFUND, "status": "completed"}), "auto", UNDETECTED),
        (
            jsonl(REFUND) + "{oops\n",
            "stash",
            "could not parse as stash: trace 1: not valid JSON: "
            "Expecting property name enclosed in double quotes (column 2)",
        ),
        (
            jsonl(stash_trace(), {"steps": [{"role": "user", "content": 7}]}),
            "auto",
            "could not parse as stash: trace 1: steps[0].content: Input should be a valid string",
        ),
        (
            jsonl(OPENAI, {"messages": "hi"}),
            "openai_chat",
            'could not parse as openai_chat: trace 1: a record needs a "messages" list',
        ),
        (
            jsonl({"steps": [{"role": "system", "content": "skill"}]}),
            "auto",
            "trace 0 has only system steps; nothing to judge",
        ),
        (jsonl({"steps": []}), "auto", "trace 0 has no steps"),
        (jsonl({"messages": []}), "openai_chat", "trace 0 has no steps"),
        (
            jsonl(
                {
                    "steps": [
                        {"role": "user", "content": "a"},
                        {"role": "tool"},
                        {"role": "bot", "content": "b"},
                    ]
                }
            ),
            "auto",
            "trace 0 step 2: invalid role 'bot'",
        ),
        (
            jsonl(OPENAI, {"messages": [*OPENAI["messages"], {"role": "bot", "content": "beep"}]}),
            "auto",
            "trace 1 step 2: invalid role 'bot'",
        ),
        (
            jsonl({"system": "s", "messages": [{"role": "user", "content": "hi"}, {"role": "system"}]}),
            "anthropic_messages",
            "trace 0 step 1: invalid role 'system'",
        ),
        ("[]", "stash", "no traces found in stash input"),
        (" \n", "auto", "there is nothing to import: the text is empty"),
        (
            jsonl(stash_trace("a"), stash_trace("b"), stash_trace("a")),
            "auto",
            "trace 2 has the same id as trace 0 ('a'); send each trace once",
        ),
    ],
)
def test_an_import_that_cannot_be_taken_is_a_422_with_the_document_sentence(
    harness: Harness, data: str, fmt: str, sentence: str
) -> None:
    assert _detail(_import(harness, data, fmt), 422) == sentence
    assert _get(harness, "/traces")["total"] == 0


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"format": "auto"}, "data: Field required"),
        ({"data": 5}, "data: Input should be a valid string"),
    ],
)
def test_an_import_body_that_does_not_parse_is_a_422_naming_the_field(
    harness: Harness, body: dict[str, Any], sentence: str
) -> None:
    answer = harness.client.post(f"{RM}/traces/import", json=body, headers=harness.admin)
    assert _detail(answer, 422) == sentence


def test_reimporting_an_id_replaces_its_steps_and_keeps_the_ids_and_annotations_of_those_left(
    harness: Harness,
) -> None:
    [trace_id] = _imported(harness, jsonl(stash_trace("t1", "a", "b", "c", "d")))["trace_ids"]
    before = _get(harness, f"/traces/{trace_id}")["steps"]
    on_trace = _annotate(harness, trace_id, rating=1)
    on_kept = _annotate(harness, trace_id, step_id=before[1]["id"], comment="kept")
    _annotate(harness, trace_id, step_id=before[3]["id"], rating=-1)

    again = _imported(harness, jsonl(stash_trace("t1", "a", "b")))

    assert again["trace_ids"] == [trace_id]
    trace = _get(harness, f"/traces/{trace_id}")
    assert [step["id"] for step in trace["steps"]] == [step["id"] for step in before[:2]]
    assert trace["step_count"] == 2
    assert [a["id"] for a in trace["annotations"]] == [on_trace, on_kept]
    assert (trace["positive_count"], trace["negative_count"], trace["comment_count"]) == (1, 0, 1)

    _imported(harness, jsonl(stash_trace("t1", "a", "b", "c")))

    grown = _get(harness, f"/traces/{trace_id}")["steps"]
    assert [step["id"] for step in grown[:2]] == [step["id"] for step in before[:2]]
    assert grown[2]["id"] not in {step["id"] for step in before}
    assert [step["index"] for step in grown] == [0, 1, 2]
    assert _get(harness, "/traces")["total"] == 1


def test_a_step_whose_words_changed_keeps_its_id_and_what_was_said_about_it(harness: Harness) -> None:
    """The same role at the same index is the same step, edited: its annotations stay, and a quote on it
    is looked for in the new words (tests/annotations/test_reanchoring.py has the cases)."""
    [trace_id] = _imported(harness, jsonl(stash_trace("t1", "a", "I can refund it")))["trace_ids"]
    before = _get(harness, f"/traces/{trace_id}")["steps"]
    on_same = _annotate(harness, trace_id, step_id=before[0]["id"], comment="still true")
    quoted = {"text": "refund", "prefix": "can ", "suffix": " it"}
    on_edited = _annotate(harness, trace_id, step_id=before[1]["id"], comment="no", quote=quoted)

    _imported(harness, jsonl(stash_trace("t1", "a", "Sure, I can refund it now")))

    trace = _get(harness, f"/traces/{trace_id}")
    assert [step["id"] for step in trace["steps"]] == [step["id"] for step in before]
    assert trace["steps"][1]["content"] == "Sure, I can refund it now"
    assert [a["id"] for a in trace["annotations"]] == [on_same, on_edited]
    assert trace["annotations"][1]["quote"] == {**quoted, "start": 12, "end": 18, "anchor": "exact"}
    assert trace["comment_count"] == 2


def test_a_step_whose_role_changed_is_a_new_step(harness: Harness) -> None:
    """What was said about another message is not carried over to this one."""
    [trace_id] = _imported(harness, jsonl(stash_trace("t1", "a", "b")))["trace_ids"]
    before = _get(harness, f"/traces/{trace_id}")["steps"]
    on_same = _annotate(harness, trace_id, step_id=before[0]["id"], comment="still true")
    _annotate(harness, trace_id, step_id=before[1]["id"], comment="about b")
    changed = {"id": "t1", "steps": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}

    _imported(harness, jsonl(changed))

    trace = _get(harness, f"/traces/{trace_id}")
    assert trace["steps"][0]["id"] == before[0]["id"]
    assert trace["steps"][1]["id"] != before[1]["id"]
    assert [a["id"] for a in trace["annotations"]] == [on_same]
    assert trace["comment_count"] == 1


# -- who may do what -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/traces"),
        ("GET", f"/traces/{NOBODY}"),
        ("GET", f"/workbench/traces/{NOBODY}/evaluation"),
        ("GET", "/formats"),
        ("POST", "/traces/import"),
    ],
)
@pytest.mark.parametrize("token", [None, "rl_not_a_token"])
def test_without_a_valid_token_every_route_is_a_401(
    harness: Harness, method: str, path: str, token: str | None
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"data": jsonl(REFUND)} if method == "POST" else None
    answer = harness.client.request(method, RM + path, json=body, headers=headers)
    assert _detail(answer, 401)


def test_a_reader_reads_but_cannot_import(harness: Harness) -> None:
    [trace_id] = _imported(harness, jsonl(REFUND))["trace_ids"]
    reader = harness.caller("rita", role="read")

    assert _get(harness, "/traces", headers=reader)["total"] == 1
    assert _get(harness, f"/traces/{trace_id}", headers=reader)["id"] == trace_id
    assert _get(harness, f"/workbench/traces/{trace_id}/evaluation", headers=reader)["trace_id"] == trace_id
    nowhere = _detail(_import(harness, jsonl(OPENAI), headers=reader), 403)
    assert "write" in nowhere
    named = _detail(_import(harness, jsonl(OPENAI), headers=reader, project_id=harness.project_id), 403)
    assert named == 'This needs the write role in project "default"; you have read.'
    assert _get(harness, "/traces")["total"] == 1


def test_imports_go_to_the_named_project_or_the_oldest_the_caller_writes_to(harness: Harness) -> None:
    second = _project(harness, "second")
    third = _project(harness, "third")
    writer = harness.caller("wes", role="read")
    for project_id in (second, third):
        made = harness.client.put(
            f"/v1/projects/{project_id}/members/{_user_id(harness, writer)}",
            json={"role": "write"},
            headers=harness.admin,
        )
        assert made.status_code == 200, made.text

    [by_default] = _imported(harness, jsonl(OPENAI), headers=writer)["trace_ids"]
    [named] = _imported(harness, jsonl(OPENAI), headers=writer, project_id=third)["trace_ids"]

    assert _project_of(harness, by_default) == second
    assert _project_of(harness, named) == third
    assert _detail(_import(harness, jsonl(OPENAI), project_id="nope"), 404) == 'No project "nope".'


def _user_id(harness: Harness, headers: dict[str, str]) -> str:
    me = harness.client.get("/v1/me", headers=headers)
    user_id: str = me.json()["id"]
    return user_id


def _project_of(harness: Harness, trace_id: str) -> str:
    run = harness.client.get(f"/v1/runs/{trace_id}", headers=harness.admin)
    project_id: str = run.json()["projectId"]
    return project_id


def test_a_caller_outside_the_project_sees_no_trace(harness: Harness) -> None:
    [trace_id] = _imported(harness, jsonl(REFUND))["trace_ids"]
    outsider = harness.caller("otto")

    assert _get(harness, "/traces", headers=outsider) == {"traces": [], "total": 0}
    for path in (f"/traces/{trace_id}", f"/workbench/traces/{trace_id}/evaluation"):
        assert _detail(harness.client.get(RM + path, headers=outsider), 404) == "Trace not found"


def test_another_workspace_sees_nothing_of_this_one(harness: Harness) -> None:
    [trace_id] = _imported(harness, jsonl(REFUND))["trace_ids"]
    with harness.db.write() as session:
        workspace = workspaces.new_workspace(session, "elsewhere")
        founder = Actor(workspace.id, None, "operator", "operator", workspace_admin=True)
        admin = identity.create_user(session, founder, name="eve", kind="user", workspace_admin=True)
        secret = identity.create_token(session, founder, admin.id, "t").secret
        identity.create_project(session, Actor.of(admin), "theirs")
    elsewhere = {"Authorization": f"Bearer {secret}"}

    assert _get(harness, "/traces", headers=elsewhere) == {"traces": [], "total": 0}
    assert _detail(harness.client.get(f"{RM}/traces/{trace_id}", headers=elsewhere), 404) == "Trace not found"
    other = _imported(harness, jsonl(REFUND), headers=elsewhere)["trace_ids"]
    assert other != [trace_id]
    assert _get(harness, "/traces")["total"] == 1
    named = _import(harness, jsonl(REFUND), headers=elsewhere, project_id=harness.project_id)
    assert _detail(named, 404) == f'No project "{harness.project_id}".'
