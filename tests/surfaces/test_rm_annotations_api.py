"""Annotations on the rm surface over HTTP, on both stores: every rule of rm-annotations.txt answers its
own sentence, quotes resolve to the occurrence their context names, flags keep the record, and only the
author or a project admin changes what was said."""

from __future__ import annotations

import functools
import json
import uuid
from typing import Any

import pytest

from redline.annotations import service as annotation_service
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.models import Principal
from redline.surfaces import responses
from tests.conftest import Harness
from tests.samples import EXPORT_KEYS

RM = "/api/v1/rm"
ANNOTATION_KEYS = [
    "id",
    "trace_id",
    "step_id",
    "rating",
    "comment",
    "quote",
    "label_error",
    "label_error_note",
    "author_id",
    "author_name",
    "created_at",
]
# REFUND_STEPS (tests/samples.py): 0 system, 1 user, 2 tool call, 3 tool result, 4 answer.
SYSTEM, USER, ANSWER = 0, 1, 4
TWICE = "Sure! I've issued a full refund to your card. Again: I've issued a full refund to your wallet."


def _trace(harness: Harness, **fields: Any) -> dict[str, Any]:
    """A stored run (a trace on the rm surface) with its steps and their ids."""
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _annotate(
    harness: Harness, trace_id: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    return harness.client.post(
        f"{RM}/traces/{trace_id}/annotations", json=body, headers=headers or harness.admin
    )


def _created(harness: Harness, trace_id: str, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
    answer = _annotate(harness, trace_id, body, **kw)
    assert answer.status_code == 200, answer.text
    created: dict[str, Any] = answer.json()
    return created


def _patch(
    harness: Harness, annotation_id: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    return harness.client.patch(
        f"{RM}/annotations/{annotation_id}", json=body, headers=headers or harness.admin
    )


def _listed(harness: Harness, trace_id: str) -> list[dict[str, Any]]:
    answer = harness.client.get(f"{RM}/traces/{trace_id}/annotations", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    listed: list[dict[str, Any]] = answer.json()
    return listed


def _detail(answer: Any, status: int) -> str:
    """The rm error sentence, after checking the status and that `detail` is the body's only key."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert list(body) == ["detail"], body
    assert isinstance(body["detail"], str)
    return str(body["detail"])


def _stranger(harness: Harness) -> dict[str, str]:
    """Headers of a workspace admin of another workspace: it must never see this one's ids."""
    with harness.db.write() as session:
        other = workspaces.new_workspace(session, "other")
        stranger = Principal(name="stranger", kind="user", workspace_id=other.id, workspace_admin=True)
        session.add(stranger)
        session.flush()
        secret = identity.create_token(session, identity.Actor.of(stranger), stranger.id, "t").secret
    return {"Authorization": f"Bearer {secret}"}


def _export(harness: Harness, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    answer = harness.client.get(f"{RM}/export/annotations", headers=headers or harness.admin)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/x-ndjson"
    assert answer.text == "" or answer.text.endswith("\n")
    return [json.loads(line, object_pairs_hook=dict) for line in answer.text.splitlines()]


# ------------------------------------------------------------------------------------------- create


def test_annotate_a_whole_trace_and_a_step(harness: Harness) -> None:
    run = _trace(harness)
    whole = _created(harness, run["id"], {"step_id": None, "comment": "Never checked the refund policy"})
    assert list(whole) == ANNOTATION_KEYS
    assert uuid.UUID(whole["id"])
    assert whole["trace_id"] == run["id"]
    assert whole["step_id"] is None
    assert (whole["rating"], whole["quote"], whole["label_error"], whole["label_error_note"]) == (
        None,
        None,
        False,
        None,
    )
    assert (whole["author_id"], whole["author_name"]) == (harness.admin_id, "admin")
    assert whole["created_at"].endswith("+00:00")

    step = _created(harness, run["id"], {"step_id": run["steps"][ANSWER]["id"], "rating": -1})
    assert (step["step_id"], step["rating"], step["comment"]) == (run["steps"][ANSWER]["id"], -1, None)
    both = _created(harness, run["id"], {"rating": 1, "comment": "Resolved it"})
    assert (both["rating"], both["comment"]) == (1, "Resolved it")

    assert [a["id"] for a in _listed(harness, run["id"])] == [whole["id"], step["id"], both["id"]]
    assert _listed(harness, run["id"])[1] == step


def test_a_system_step_takes_a_comment_but_no_rating(harness: Harness) -> None:
    run = _trace(harness)
    system = run["steps"][SYSTEM]["id"]
    comment = _created(harness, run["id"], {"step_id": system, "comment": "The prompt forgets the policy"})
    assert comment["step_id"] == system
    refused = _annotate(harness, run["id"], {"step_id": system, "rating": 1, "comment": "fine"})
    assert _detail(refused, 422) == "system steps can be commented on but not rated"


def test_every_rule_answers_422_with_the_documents_sentence(harness: Harness) -> None:
    run, other = _trace(harness, externalId="run"), _trace(harness, externalId="other")
    answer_step = run["steps"][ANSWER]["id"]
    quote_elsewhere = {"text": "refund policy", "prefix": "", "suffix": ""}
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "an annotation needs a rating, a comment, or both"),
        (
            {"step_id": None, "rating": None, "comment": None},
            "an annotation needs a rating, a comment, or both",
        ),
        ({"comment": ""}, "an annotation needs a rating, a comment, or both"),
        (
            {"step_id": run["steps"][SYSTEM]["id"], "rating": -1},
            "system steps can be commented on but not rated",
        ),
        ({"step_id": other["steps"][ANSWER]["id"], "rating": 1}, "step_id is not a step of this trace"),
        ({"step_id": str(uuid.uuid4()), "comment": "x"}, "step_id is not a step of this trace"),
        ({"comment": "x", "quote": {"text": "delivered"}}, "a quote needs a step_id"),
        (
            {"step_id": answer_step, "comment": "x", "quote": quote_elsewhere},
            "quote text does not appear in the step's content",
        ),
        ({"rating": 2}, "rating: Input should be 1 or -1"),
        ({"rating": 0, "comment": "x"}, "rating: Input should be 1 or -1"),
        (
            {"step_id": answer_step, "comment": "x", "quote": {"text": ""}},
            "quote.text: String should have at least 1 character",
        ),
    ]
    for body, sentence in cases:
        assert _detail(_annotate(harness, run["id"], body), 422) == sentence, body
    bad_id = _detail(_annotate(harness, run["id"], {"step_id": "step-4", "rating": 1}), 422)
    assert bad_id.startswith("step_id: Input should be a valid UUID"), bad_id
    assert _listed(harness, run["id"]) == []


def test_an_unknown_or_malformed_trace_is_not_found(harness: Harness) -> None:
    for trace_id in (str(uuid.uuid4()), "not-a-uuid"):
        assert _detail(_annotate(harness, trace_id, {"comment": "x"}), 404) == "Trace not found"
        listed = harness.client.get(f"{RM}/traces/{trace_id}/annotations", headers=harness.admin)
        assert _detail(listed, 404) == "Trace not found"


def test_a_quote_resolves_to_the_occurrence_its_context_names(harness: Harness) -> None:
    steps = [{"role": "user", "content": "Refund me"}, {"role": "assistant", "content": TWICE}]
    run = _trace(harness, steps=steps)
    step_id = run["steps"][1]["id"]
    text = "I've issued a full refund"
    second = TWICE.index(text, TWICE.index(text) + 1)

    chosen = {"text": text, "prefix": "Again: ", "suffix": " to your wallet"}
    quoted = _created(harness, run["id"], {"step_id": step_id, "comment": "Not allowed", "quote": chosen})
    assert quoted["quote"] == {**chosen, "start": second, "end": second + len(text), "anchor": "exact"}

    plain = _created(harness, run["id"], {"step_id": step_id, "comment": "c", "quote": {"text": text}})
    first = TWICE.index(text)
    assert plain["quote"] == {
        "text": text,
        "prefix": "",
        "suffix": "",
        "start": first,
        "end": first + len(text),
        "anchor": "exact",
    }


# -------------------------------------------------------------------------------------------- change


def test_patch_changes_only_the_fields_sent(harness: Harness) -> None:
    run = _trace(harness)
    made = _created(harness, run["id"], {"rating": 1, "comment": "Good"})

    renamed = _patch(harness, made["id"], {"comment": "Good answer"})
    assert renamed.status_code == 200, renamed.text
    assert (renamed.json()["rating"], renamed.json()["comment"]) == (1, "Good answer")
    flipped = _patch(harness, made["id"], {"rating": -1}).json()
    assert (flipped["rating"], flipped["comment"]) == (-1, "Good answer")
    unrated = _patch(harness, made["id"], {"rating": None}).json()
    assert (unrated["rating"], unrated["comment"]) == (None, "Good answer")
    assert {key: unrated[key] for key in ("id", "trace_id", "author_id", "created_at")} == {
        key: made[key] for key in ("id", "trace_id", "author_id", "created_at")
    }

    emptied = _patch(harness, made["id"], {"comment": None})
    assert _detail(emptied, 422) == "an annotation needs a rating, a comment, or both"
    assert _listed(harness, run["id"]) == [unrated]
    assert _patch(harness, made["id"], {}).json() == unrated


def test_patch_keeps_the_rules_of_the_annotations_step(harness: Harness) -> None:
    run = _trace(harness)
    on_system = _created(harness, run["id"], {"step_id": run["steps"][SYSTEM]["id"], "comment": "c"})
    refused = _patch(harness, on_system["id"], {"rating": 1})
    assert _detail(refused, 422) == "system steps can be commented on but not rated"
    unknown_field = _patch(harness, on_system["id"], {"step_id": None})
    assert _detail(unknown_field, 422).startswith("step_id: Extra inputs are not permitted")


def test_a_flagged_label_stays_visible_and_counts_apart(harness: Harness) -> None:
    run = _trace(harness)
    kept = _created(harness, run["id"], {"rating": 1})
    wrong = _created(harness, run["id"], {"rating": -1, "comment": "Refused a valid refund"})
    _created(harness, run["id"], {"rating": -1, "step_id": run["steps"][ANSWER]["id"]})

    note = "Policy allows refunds on damaged items"
    flagged = _patch(harness, wrong["id"], {"label_error": True, "label_error_note": note})
    assert flagged.status_code == 200, flagged.text
    assert (flagged.json()["label_error"], flagged.json()["label_error_note"]) == (True, note)
    assert (flagged.json()["rating"], flagged.json()["comment"]) == (-1, "Refused a valid refund")
    assert [a["label_error"] for a in _listed(harness, run["id"])] == [False, True, False]

    with harness.db.read() as session:
        counts = annotation_service.counts(session, [uuid.UUID(run["id"])])[uuid.UUID(run["id"])]
    assert (counts.positive, counts.negative, counts.comments, counts.label_errors) == (1, 1, 1, 1)
    [summary] = _summaries(harness, run["id"])
    assert (summary["positive_count"], summary["negative_count"]) == (1, 1)
    assert (summary["comment_count"], summary["label_error_count"]) == (1, 1)

    unflagged = _patch(harness, wrong["id"], {"label_error": False}).json()
    assert (unflagged["label_error"], unflagged["label_error_note"]) == (False, note)
    assert kept in _listed(harness, run["id"])
    [summary] = _summaries(harness, run["id"])
    assert (summary["negative_count"], summary["label_error_count"]) == (2, 0)


def _summaries(harness: Harness, trace_id: str) -> list[dict[str, Any]]:
    """The trace's summary as GET /traces lists it, where the document puts the counts."""
    answer = harness.client.get(f"{RM}/traces", params={"limit": 500, "offset": 0}, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    return [trace for trace in answer.json()["traces"] if trace["id"] == trace_id]


# ----------------------------------------------------------------------------------------- who may


def test_only_the_author_or_a_project_admin_changes_an_annotation(harness: Harness) -> None:
    run = _trace(harness)
    author = harness.caller("author", role="write")
    other_writer = harness.caller("other-writer", role="write")
    project_admin = harness.caller("project-admin", role="admin")
    made = _created(harness, run["id"], {"rating": 1, "comment": "ok"}, headers=author)
    assert made["author_name"] == "author"

    assert _patch(harness, made["id"], {"comment": "mine now"}, other_writer).status_code == 403
    forbidden = harness.client.delete(f"{RM}/annotations/{made['id']}", headers=other_writer)
    assert (
        _detail(forbidden, 403) == "Only the annotation's author or a project admin can change or delete it."
    )

    assert (
        _patch(harness, made["id"], {"comment": "edited by author"}, author).json()["comment"]
        == "edited by author"
    )
    by_admin = _patch(harness, made["id"], {"label_error": True}, project_admin)
    assert by_admin.status_code == 200, by_admin.text
    assert by_admin.json()["author_name"] == "author"
    assert harness.client.delete(f"{RM}/annotations/{made['id']}", headers=project_admin).status_code == 204


def test_a_reader_reads_but_does_not_annotate(harness: Harness) -> None:
    run = _trace(harness)
    reader = harness.caller("reader", role="read")
    made = _created(harness, run["id"], {"rating": 1})
    assert _annotate(harness, run["id"], {"rating": 1}, reader).status_code == 403
    listed = harness.client.get(f"{RM}/traces/{run['id']}/annotations", headers=reader)
    assert [a["id"] for a in listed.json()] == [made["id"]]
    assert _patch(harness, made["id"], {"rating": -1}, reader).status_code == 403
    assert [line["rating"] for line in _export(harness, reader)] == [1]


def test_another_workspace_and_a_non_member_see_nothing(harness: Harness) -> None:
    run = _trace(harness)
    made = _created(harness, run["id"], {"rating": 1})
    for headers in (_stranger(harness), harness.caller("outsider")):
        assert _detail(_annotate(harness, run["id"], {"rating": 1}, headers), 404) == "Trace not found"
        listed = harness.client.get(f"{RM}/traces/{run['id']}/annotations", headers=headers)
        assert _detail(listed, 404) == "Trace not found"
        assert _detail(_patch(harness, made["id"], {"rating": -1}, headers), 404) == "Annotation not found"
        deleted = harness.client.delete(f"{RM}/annotations/{made['id']}", headers=headers)
        assert _detail(deleted, 404) == "Annotation not found"
        assert _export(harness, headers) == []
    assert _listed(harness, run["id"])[0]["rating"] == 1


def test_delete_answers_204_then_not_found(harness: Harness) -> None:
    run = _trace(harness)
    made = _created(harness, run["id"], {"comment": "remove me"})
    deleted = harness.client.delete(f"{RM}/annotations/{made['id']}", headers=harness.admin)
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert _listed(harness, run["id"]) == []
    again = harness.client.delete(f"{RM}/annotations/{made['id']}", headers=harness.admin)
    assert _detail(again, 404) == "Annotation not found"
    assert _detail(_patch(harness, made["id"], {"comment": "x"}), 404) == "Annotation not found"
    malformed = harness.client.delete(f"{RM}/annotations/not-a-uuid", headers=harness.admin)
    assert _detail(malformed, 404) == "Annotation not found"
    assert _detail(_patch(harness, "42", {"comment": "x"}), 404) == "Annotation not found"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/traces/{trace}/annotations"),
        ("GET", "/traces/{trace}/annotations"),
        ("PATCH", "/annotations/{annotation}"),
        ("DELETE", "/annotations/{annotation}"),
        ("GET", "/export/annotations"),
    ],
)
def test_without_a_token_every_route_answers_401(harness: Harness, method: str, path: str) -> None:
    run = _trace(harness)
    made = _created(harness, run["id"], {"rating": 1})
    url = RM + path.format(trace=run["id"], annotation=made["id"])
    body = {"rating": 1} if method in ("POST", "PATCH") else None
    answer = harness.client.request(method, url, json=body)
    assert _detail(answer, 401) == "Missing bearer token: send Authorization: Bearer <token>."
    wrong = harness.client.request(method, url, json=body, headers={"Authorization": "Bearer rl_nope"})
    assert _detail(wrong, 401) == "The bearer token is not valid or has been revoked."


# -------------------------------------------------------------------------------------------- export


def test_export_lines_have_exactly_the_documents_keys(harness: Harness) -> None:
    run = _trace(harness, externalId="ticket-1182")
    bare = _trace(harness)
    quote = {"text": "delivered", "prefix": "was ", "suffix": " on May 3"}
    step_id = run["steps"][ANSWER]["id"]
    quoted = _created(
        harness, run["id"], {"step_id": step_id, "rating": -1, "comment": "Wrong", "quote": quote}
    )
    wrong = _created(harness, bare["id"], {"rating": 1})
    _patch(harness, wrong["id"], {"label_error": True, "label_error_note": "mislabelled"})
    _created(harness, run["id"], {"step_id": run["steps"][USER]["id"], "comment": "Polite"})

    lines = _export(harness)
    assert [list(line) for line in lines] == [EXPORT_KEYS] * 3
    first, flagged, third = lines
    assert first == {
        "trace_id": run["id"],
        "trace_external_id": "ticket-1182",
        "step_index": ANSWER,
        "rating": -1,
        "comment": "Wrong",
        "quote": quote,
        "label_error": False,
        "label_error_note": None,
        "author": "admin",
        "created_at": quoted["created_at"],
    }
    assert (flagged["trace_id"], flagged["trace_external_id"], flagged["step_index"]) == (
        bare["id"],
        None,
        None,
    )
    assert (flagged["label_error"], flagged["label_error_note"], flagged["quote"]) == (
        True,
        "mislabelled",
        None,
    )
    assert (third["step_index"], third["rating"], third["comment"]) == (USER, None, "Polite")


def test_export_streams_every_line_once_across_pages(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two rows and a flush after every line: the walk by (created_at, id) loses and repeats none."""
    monkeypatch.setattr(
        annotation_service, "iter_export", functools.partial(annotation_service.iter_export, chunk=2)
    )
    monkeypatch.setattr(responses, "STREAM_CHUNK_BYTES", 1)
    runs = [_trace(harness, externalId=f"run-{i}") for i in range(3)]
    made = [_created(harness, run["id"], {"comment": f"note {i}"}) for i, run in enumerate(runs * 3)]
    lines = _export(harness)
    assert [line["comment"] for line in lines] == [annotation["comment"] for annotation in made]
    assert len({(line["trace_id"], line["comment"]) for line in lines}) == 9
