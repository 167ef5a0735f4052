"""Human reviews, span annotations, evaluator results and /v3 traces over HTTP, on both stores.

Every refusal of annotation-queues.txt's "API Error Handling" table answers its sentence verbatim with
its status, in the orq-ai-sdk's `{"message", "code"}`; values replace a person's own earlier value;
definitions go while recorded values stay; a deployment span passes its values on to its log.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.reviews import annotate
from redline.reviews.schemas import ValueIn
from tests.conftest import Harness

V2 = "/v2"
RM = "/api/v1/rm"
SPANS: list[dict[str, Any]] = [
    {"spanId": "root", "kind": "agent", "name": "support-agent", "startedAt": "2026-11-01T10:00:00Z"},
    {
        "spanId": "llm",
        "parentSpanId": "root",
        "kind": "chat_completion",
        "name": "answer",
        "attributes": {
            "provider": "openai",
            "model": "gpt-4o",
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        },
        "startedAt": "2026-11-01T10:00:01Z",
        "endedAt": "2026-11-01T10:00:02.500000Z",
    },
    {
        "spanId": "deploy",
        "parentSpanId": "root",
        "kind": "deployment",
        "name": "deployment call",
        "attributes": {"log_id": "log"},
        "startedAt": "2026-11-01T10:00:03Z",
    },
    {
        "spanId": "log",
        "parentSpanId": "deploy",
        "kind": "log",
        "name": "log",
        "startedAt": "2026-11-01T10:00:04Z",
    },
]
RATING = {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]}
DEFECTS = {
    "key": "defects",
    "display_name": "Defects",
    "type": "categorical",
    "options": ["grammatical", "spelling", "ambiguity"],
    "multiple": True,
}
SCORE = {"key": "score", "display_name": "Score", "type": "range", "min": 0, "max": 10}
CONFIDENCE = {"key": "confidence_score", "display_name": "Confidence", "type": "range", "min": 0, "max": 1}
CORRECTION = {"key": "correction", "display_name": "Correction", "type": "text"}


# --------------------------------------------------------------------------------------------- helpers


def _workspace(harness: Harness) -> str:
    answer = harness.client.get("/v1/me", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    workspace: str = answer.json()["workspaceId"]
    return workspace


def _trace(harness: Harness, **fields: Any) -> str:
    body = harness.run(spans=SPANS, startedAt="2026-11-01T10:00:00Z", endedAt="2026-11-01T10:00:05Z")
    body.update(fields)
    answer = harness.client.post("/v1/runs", json=body, headers=harness.admin)
    assert answer.status_code == 201, answer.text
    trace_id: str = answer.json()["id"]
    return trace_id


def _define(
    harness: Harness, *definitions: dict[str, Any], headers: dict[str, str] | None = None
) -> list[str]:
    ids = []
    for definition in definitions:
        answer = harness.client.post(f"{V2}/human-reviews", json=definition, headers=headers or harness.admin)
        assert answer.status_code == 200, answer.text
        ids.append(answer.json()["_id"])
    return ids


def _annotate(
    harness: Harness, trace_id: str, span_id: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    return harness.client.post(
        f"{V2}/traces/{trace_id}/spans/{span_id}/annotation", json=body, headers=headers or harness.admin
    )


def _saved(harness: Harness, trace_id: str, span_id: str, *annotations: dict[str, Any], **body: Any) -> Any:
    answer = _annotate(harness, trace_id, span_id, {"annotations": list(annotations), **body})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _remove(
    harness: Harness, trace_id: str, span_id: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    return harness.client.request(
        "DELETE",
        f"{V2}/traces/{trace_id}/spans/{span_id}/annotation",
        json=body,
        headers=headers or harness.admin,
    )


def _refused(answer: Any, status: int) -> str:
    """The reviews surface's error sentence, after checking the status and the body's shape."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body == {"message": body["message"], "code": status}
    message: str = body["message"]
    return message


def _span(harness: Harness, trace_id: str, span_id: str) -> dict[str, Any]:
    answer = harness.client.get(f"/v3/traces/{trace_id}/spans/{span_id}", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    summary: dict[str, Any] = answer.json()["span"]["summary"]
    return summary


def _values(harness: Harness, trace_id: str, span_id: str) -> dict[str, Any]:
    return {item["key"]: item["value"] for item in _span(harness, trace_id, span_id)["annotations"]}


def _evaluation(harness: Harness, trace_id: str, span_id: str, **body: Any) -> dict[str, Any]:
    answer = harness.client.post(
        f"{V2}/traces/{trace_id}/spans/{span_id}/evaluations", json=body, headers=harness.admin
    )
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


# -------------------------------------------------------------------------------------- human reviews


def test_define_read_change_and_delete_a_human_review(harness: Harness) -> None:
    answer = harness.client.post(f"{V2}/human-reviews", json=RATING, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    made = answer.json()
    assert made["key"] == "rating"
    assert made["display_name"] == "Rating"
    assert made["type"] == "categorical"
    assert made["options"] == ["good", "bad"]
    assert made["multiple"] is False
    assert made["project_id"] == harness.project_id
    assert made["workspace_id"] == _workspace(harness)
    assert made["created"]
    assert made["updated"]
    assert "min" not in made

    got = harness.client.get(f"{V2}/human-reviews/{made['_id']}", headers=harness.admin)
    assert got.json() == made

    changed = harness.client.patch(
        f"{V2}/human-reviews/{made['_id']}",
        json={
            "display_name": "Quality",
            "options": [{"value": "good", "description": "fine"}, "bad", "ugly"],
        },
        headers=harness.admin,
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["display_name"] == "Quality"
    assert changed.json()["options"] == ["good", "bad", "ugly"]
    assert changed.json()["option_details"][0] == {"value": "good", "description": "fine"}

    deleted = harness.client.delete(f"{V2}/human-reviews/{made['_id']}", headers=harness.admin)
    assert deleted.status_code == 204
    gone = harness.client.get(f"{V2}/human-reviews/{made['_id']}", headers=harness.admin)
    assert _refused(gone, 404) == (
        f"The human review with id {made['_id']} for workspace {_workspace(harness)} was not found."
    )
    assert _refused(harness.client.get(f"{V2}/human-reviews/nope", headers=harness.admin), 404)


def test_a_key_is_unique_in_its_project(harness: Harness) -> None:
    _define(harness, RATING)
    again = harness.client.post(f"{V2}/human-reviews", json=RATING, headers=harness.admin)
    assert _refused(again, 409) == (
        'A human review with key "rating" already exists in project "default"; '
        "change that one, or pick another key."
    )
    other = harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin)
    assert other.status_code == 201, other.text
    elsewhere = harness.client.post(
        f"{V2}/human-reviews", json={**RATING, "project_id": other.json()["id"]}, headers=harness.admin
    )
    assert elsewhere.status_code == 200, elsewhere.text


@pytest.mark.parametrize(
    ("definition", "sentence"),
    [
        (
            {"key": "r", "type": "categorical"},
            "options: a categorical human review needs at least one option.",
        ),
        (
            {"key": "r", "type": "categorical", "options": ["a", "a"]},
            'options: "a" is listed twice; each option appears once.',
        ),
        ({"key": "r", "type": "range", "min": 5, "max": 5}, "min must be less than max; they are 5 and 5."),
        ({"key": "r", "type": "range", "min": 1}, "A range human review needs both min and max."),
        ({"key": "r", "type": "text", "options": ["a"]}, "options: a text human review has no options."),
        (
            {"key": "r", "type": "text", "multiple": True},
            "multiple: only a categorical human review takes several values.",
        ),
        (
            {"key": "r", "type": "categorical", "options": ["a"], "max": 3},
            "min and max belong to range human reviews, not categorical ones.",
        ),
        (
            {"key": "two words", "type": "text"},
            'key: "two words" is not a key: use letters, digits, "_", "." and "-", '
            "starting with a letter or digit.",
        ),
        ({"key": "r", "type": "stars"}, "type: Input should be 'categorical', 'range' or 'text'"),
    ],
)
def test_a_definition_must_make_sense(harness: Harness, definition: dict[str, Any], sentence: str) -> None:
    answer = harness.client.post(f"{V2}/human-reviews", json=definition, headers=harness.admin)
    assert _refused(answer, 400) == sentence


def test_a_key_never_changes_and_a_type_change_is_checked(harness: Harness) -> None:
    [score_id] = _define(harness, SCORE)
    renamed = harness.client.patch(
        f"{V2}/human-reviews/{score_id}", json={"key": "points"}, headers=harness.admin
    )
    assert "can't change" in _refused(renamed, 400)
    to_text = harness.client.patch(
        f"{V2}/human-reviews/{score_id}", json={"type": "text"}, headers=harness.admin
    )
    assert to_text.status_code == 200, to_text.text
    assert to_text.json()["type"] == "text"
    assert "min" not in to_text.json()
    to_categorical = harness.client.patch(
        f"{V2}/human-reviews/{score_id}", json={"type": "categorical"}, headers=harness.admin
    )
    assert _refused(to_categorical, 400) == "options: a categorical human review needs at least one option."


def test_the_list_pages_by_ids_and_filters_by_project(harness: Harness) -> None:
    ids = _define(harness, *({"key": f"k{i}", "type": "text"} for i in range(5)))
    first = harness.client.get(f"{V2}/human-reviews", params={"limit": 2}, headers=harness.admin).json()
    assert first["object"] == "list"
    assert [item["_id"] for item in first["data"]] == [ids[4], ids[3]]
    assert first["has_more"] is True
    second = harness.client.get(
        f"{V2}/human-reviews", params={"limit": 2, "starting_after": ids[3]}, headers=harness.admin
    ).json()
    assert [item["_id"] for item in second["data"]] == [ids[2], ids[1]]
    back = harness.client.get(
        f"{V2}/human-reviews", params={"limit": 2, "ending_before": ids[2]}, headers=harness.admin
    ).json()
    assert [item["_id"] for item in back["data"]] == [ids[4], ids[3]]
    mine = harness.client.get(
        f"{V2}/human-reviews", params={"project_id": harness.project_id}, headers=harness.admin
    )
    assert len(mine.json()["data"]) == 5
    bad = harness.client.get(f"{V2}/human-reviews", params={"project_id": "x"}, headers=harness.admin)
    assert _refused(bad, 400) == 'project_id: "x" is not a project id.'
    unknown = harness.client.get(
        f"{V2}/human-reviews", params={"starting_after": "nope"}, headers=harness.admin
    )
    assert _refused(unknown, 400) == "starting_after: no item has the id nope."


def test_defaults_add_the_documents_legacy_reviews_once(harness: Harness) -> None:
    _define(harness, {**RATING, "options": ["yes", "no"]})
    answer = harness.client.post(f"{V2}/human-reviews/defaults", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    [defects] = answer.json()["data"]
    assert defects["key"] == "defects"
    assert defects["multiple"] is True
    assert defects["options"] == [
        "grammatical",
        "spelling",
        "hallucination",
        "repetition",
        "inappropriate",
        "off_topic",
        "incompleteness",
        "ambiguity",
    ]
    assert defects["option_details"][2] == {
        "value": "hallucination",
        "description": "Responses that contain hallucinations or factual inaccuracies",
    }
    listed = harness.client.get(f"{V2}/human-reviews", headers=harness.admin).json()["data"]
    rating = next(item for item in listed if item["key"] == "rating")
    assert rating["options"] == ["yes", "no"]  # the project's own stays
    again = harness.client.post(
        f"{V2}/human-reviews/defaults", params={"project_id": harness.project_id}, headers=harness.admin
    )
    assert again.json()["data"] == []


def test_defaults_describe_rating_as_the_document_does(harness: Harness) -> None:
    answer = harness.client.post(f"{V2}/human-reviews/defaults", headers=harness.admin)
    rating = next(item for item in answer.json()["data"] if item["key"] == "rating")
    assert rating["option_details"] == [
        {"value": "good", "description": "The response was helpful and accurate."},
        {"value": "bad", "description": "The response was unhelpful or inaccurate."},
    ]
    assert rating["multiple"] is False


def test_roles_decide_who_defines(harness: Harness) -> None:
    [rating_id] = _define(harness, RATING)
    reader = harness.caller("reader", role="read")
    stranger = harness.caller("stranger")
    assert harness.client.get(f"{V2}/human-reviews/{rating_id}", headers=reader).status_code == 200
    made = harness.client.post(f"{V2}/human-reviews", json=SCORE, headers=reader)
    assert "write role" in _refused(made, 403)
    changed = harness.client.patch(
        f"{V2}/human-reviews/{rating_id}", json={"display_name": "x"}, headers=reader
    )
    assert _refused(changed, 403)
    assert _refused(harness.client.get(f"{V2}/human-reviews/{rating_id}", headers=stranger), 404)
    assert harness.client.get(f"{V2}/human-reviews", headers=stranger).json()["data"] == []
    named = harness.client.post(
        f"{V2}/human-reviews", json={**SCORE, "project_id": harness.project_id}, headers=stranger
    )
    assert _refused(named, 404)
    assert _refused(harness.client.get(f"{V2}/human-reviews"), 401)


# ---------------------------------------------------------------------------------------- annotations


def test_values_are_saved_on_the_span_and_shown_on_both_surfaces(harness: Harness) -> None:
    _define(harness, RATING, DEFECTS, CONFIDENCE, CORRECTION)
    trace_id = _trace(harness)
    text = "The correct answer should emphasize scalability and fault tolerance."
    saved = _saved(
        harness,
        trace_id,
        "llm",
        {"key": "rating", "value": "good"},
        {"key": "defects", "value": ["grammatical", "spelling", "ambiguity"]},
        {"key": "confidence_score", "value": 0.95},
        {"key": "correction", "value": text},
        metadata={"identityId": "user-123", "source": "app", "reviewerId": "rev-9"},
    )
    assert [item["key"] for item in saved] == ["rating", "defects", "confidence_score", "correction"]
    assert saved[0]["span_id"] == "llm"
    assert saved[0]["trace_id"] == trace_id
    assert saved[0]["source"] == "human"
    assert saved[0]["author_name"] == "admin"
    assert saved[0]["metadata"] == {"identity_id": "user-123", "source": "app", "reviewer_id": "rev-9"}
    assert _values(harness, trace_id, "llm") == {
        "rating": "good",
        "defects": ["grammatical", "spelling", "ambiguity"],
        "confidence_score": 0.95,
        "correction": text,
    }
    trace = harness.client.get(f"/v3/traces/{trace_id}", headers=harness.admin).json()["trace"]
    assert {item["key"] for item in trace["annotations"]} == {
        "rating",
        "defects",
        "confidence_score",
        "correction",
    }

    rm = harness.client.get(f"{RM}/traces/{trace_id}", headers=harness.admin).json()
    keyed = {item["key"]: item for item in rm["annotations"]}
    assert keyed["rating"]["value"] == "good"
    assert keyed["rating"]["span_id"] == "llm"
    assert keyed["rating"]["rating"] is None
    assert keyed["rating"]["source"] == "human"
    assert (rm["positive_count"], rm["negative_count"]) == (0, 0)


def test_a_single_select_takes_a_string_or_a_one_item_list(harness: Harness) -> None:
    _define(harness, RATING)
    trace_id = _trace(harness)
    _saved(harness, trace_id, "llm", {"key": "rating", "value": ["bad"]})
    assert _values(harness, trace_id, "llm") == {"rating": "bad"}
    two = _annotate(harness, trace_id, "llm", {"annotations": [{"key": "rating", "value": ["good", "bad"]}]})
    assert (
        _refused(two, 400) == 'The human review "rating" takes one option: send a string or a one-item list.'
    )


def test_a_person_rating_again_replaces_their_own_value_only(harness: Harness) -> None:
    _define(harness, RATING)
    trace_id = _trace(harness)
    writer = harness.caller("writer", role="write")
    first = _saved(harness, trace_id, "llm", {"key": "rating", "value": "good"})
    assert (
        _annotate(
            harness, trace_id, "llm", {"annotations": [{"key": "rating", "value": "bad"}]}, writer
        ).status_code
        == 200
    )
    again = _saved(harness, trace_id, "llm", {"key": "rating", "value": "bad"})
    assert again[0]["_id"] == first[0]["_id"]
    # One value per end user too, when a service saves them under their identity ids.
    _saved(harness, trace_id, "llm", {"key": "rating", "value": "good"}, metadata={"identity_id": "u1"})
    _saved(harness, trace_id, "llm", {"key": "rating", "value": "good"}, metadata={"identity_id": "u1"})
    said = _span(harness, trace_id, "llm")["annotations"]
    assert sorted(
        (item["author_name"], item["metadata"].get("identity_id", ""), item["value"]) for item in said
    ) == [
        ("admin", "", "bad"),
        ("admin", "u1", "good"),
        ("writer", "", "bad"),
    ]


@pytest.mark.parametrize("metadata", [None, {}, {"identity_id": "user-123"}, {"other": "ignored"}])
def test_metadata_may_be_absent_empty_or_the_sdks(harness: Harness, metadata: dict[str, Any] | None) -> None:
    _define(harness, RATING)
    trace_id = _trace(harness)
    body: dict[str, Any] = {"annotations": [{"key": "rating", "value": "good"}]}
    if metadata is not None:
        body["metadata"] = metadata
    answer = _annotate(harness, trace_id, "llm", body)
    assert answer.status_code == 200, answer.text
    expected = {"identity_id": "user-123"} if metadata and "identity_id" in metadata else {}
    assert answer.json()["data"][0]["metadata"] == expected


def test_the_documents_sentences_verbatim(harness: Harness) -> None:
    _define(harness, RATING, SCORE, CORRECTION, DEFECTS)
    trace_id = _trace(harness)
    workspace = _workspace(harness)

    def refused(annotation: dict[str, Any], status: int, span_id: str = "llm", trace: str = trace_id) -> str:
        return _refused(_annotate(harness, trace, span_id, {"annotations": [annotation]}), status)

    assert refused({"key": "rateing", "value": "good"}, 404) == (
        f'The human review with key "rateing" for workspace {workspace} was not found.'
    )
    assert refused({"key": "rating", "value": "good"}, 404, span_id="xyz789") == (
        f"Span with id xyz789 for workspace {workspace} was not found."
    )
    for unknown_trace in (str(uuid.uuid4()), "not-a-uuid"):
        assert refused({"key": "rating", "value": "good"}, 404, trace=unknown_trace) == (
            f"Span with id llm for workspace {workspace} was not found."
        )
    assert (
        refused({"key": "rating", "value": "poor"}, 400)
        == "Invalid value: poor. Valid options are: good, bad."
    )
    assert refused({"key": "score", "value": 15}, 400) == "Value 15 is out of range [0, 10]."
    assert refused({"key": "score", "value": 15.0}, 400) == "Value 15 is out of range [0, 10]."
    assert refused({"key": "score", "value": -0.5}, 400) == "Value -0.5 is out of range [0, 10]."
    assert refused({"key": "correction", "value": "x" * 201}, 400) == (
        "String value exceeds maximum length of 200 characters."
    )
    assert refused({"key": "defects", "value": ["spelling", "poor"]}, 400) == (
        "Invalid value: poor. Valid options are: grammatical, spelling, ambiguity."
    )
    assert _values(harness, trace_id, "llm") == {}
    _saved(harness, trace_id, "llm", {"key": "correction", "value": "x" * 200}, {"key": "score", "value": 10})


@pytest.mark.parametrize(
    ("annotation", "sentence"),
    [
        (
            {"key": "score", "value": "high"},
            'The human review "score" is a range: its value must be a number from 0 to 10.',
        ),
        (
            {"key": "score", "value": True},
            'The human review "score" is a range: its value must be a number from 0 to 10.',
        ),
        (
            {"key": "correction", "value": 5},
            'The human review "correction" is text: its value must be a string.',
        ),
        (
            {"key": "rating", "value": 1},
            'The human review "rating" is categorical: its value is one of its options (good, bad), '
            "as a string.",
        ),
        (
            {"key": "defects", "value": "spelling"},
            'The human review "defects" takes several of its options (grammatical, spelling, ambiguity): '
            'send them as a list, such as ["grammatical"].',
        ),
        (
            {"key": "rating", "parent_annotation_id": "x", "value": "good"},
            "annotations[0]: an annotation has a key (a human review's value) or a parent_annotation_id "
            "(a correction of an evaluator result), and not both",
        ),
        ({"key": "rating"}, "annotations[0].value: Field required"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_clearly(
    harness: Harness, annotation: dict[str, Any], sentence: str
) -> None:
    _define(harness, RATING, SCORE, CORRECTION, DEFECTS)
    trace_id = _trace(harness)
    answer = _annotate(harness, trace_id, "llm", {"annotations": [annotation]})
    assert _refused(answer, 400) == sentence


def test_batch_limits_and_one_value_per_key(harness: Harness) -> None:
    _define(harness, *({"key": f"k{i}", "type": "text"} for i in range(11)))
    trace_id = _trace(harness)
    eleven = [{"key": f"k{i}", "value": "x"} for i in range(11)]
    assert _refused(_annotate(harness, trace_id, "llm", {"annotations": eleven}), 400) == (
        "A request adds at most 10 annotations; this one has 11."
    )
    assert _refused(_annotate(harness, trace_id, "llm", {"annotations": []}), 400) == (
        "annotations: send at least one annotation."
    )
    twice = [{"key": "k1", "value": "x"}, {"key": "k1", "value": "y"}]
    assert _refused(_annotate(harness, trace_id, "llm", {"annotations": twice}), 400) == (
        'annotations[1]: the key "k1" is also annotations[0]; send one value for each.'
    )
    ten = _saved(harness, trace_id, "llm", *eleven[:10])
    assert len(ten) == 10
    # All or nothing: one bad value writes none of the batch.
    bad = _annotate(
        harness,
        trace_id,
        "root",
        {"annotations": [{"key": "k1", "value": "x"}, {"key": "k1x", "value": "y"}]},
    )
    assert _refused(bad, 404)
    assert _values(harness, trace_id, "root") == {}


def test_removing_values_by_key(harness: Harness) -> None:
    _define(harness, RATING, DEFECTS)
    trace_id = _trace(harness)
    writer = harness.caller("writer", role="write")
    _saved(
        harness,
        trace_id,
        "llm",
        {"key": "rating", "value": "good"},
        {"key": "defects", "value": ["spelling"]},
    )
    _annotate(harness, trace_id, "llm", {"annotations": [{"key": "rating", "value": "bad"}]}, writer)
    answer = _remove(harness, trace_id, "llm", {"keys": ["rating", "defects"]})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"deleted": 2}
    # Only one's own values go.
    assert _values(harness, trace_id, "llm") == {"rating": "bad"}
    assert _remove(harness, trace_id, "llm", {"keys": ["rating"]}).json() == {"deleted": 0}
    eleven = _remove(harness, trace_id, "llm", {"keys": [f"k{i}" for i in range(11)]})
    assert _refused(eleven, 400) == "A request removes at most 10 keys; this one names 11."
    assert _refused(_remove(harness, trace_id, "llm", {}), 400) == (
        "Name the keys whose values to remove, or the parent_annotation_ids whose corrections to remove."
    )
    nobody = _remove(harness, trace_id, "nope", {"keys": ["rating"]})
    assert _refused(nobody, 404) == f"Span with id nope for workspace {_workspace(harness)} was not found."


def test_removing_with_an_identity_takes_back_only_that_identitys_values(harness: Harness) -> None:
    _define(harness, RATING)
    trace_id = _trace(harness)
    for identity in ("u1", "u2"):
        _saved(
            harness, trace_id, "llm", {"key": "rating", "value": "good"}, metadata={"identity_id": identity}
        )
    answer = _remove(harness, trace_id, "llm", {"keys": ["rating"], "metadata": {"identity_id": "u1"}})
    assert answer.json() == {"deleted": 1}
    left = _span(harness, trace_id, "llm")["annotations"]
    assert [item["metadata"] for item in left] == [{"identity_id": "u2"}]


def test_deleting_a_definition_keeps_the_values_recorded_under_it(harness: Harness) -> None:
    [rating_id] = _define(harness, RATING)
    trace_id = _trace(harness)
    _saved(harness, trace_id, "llm", {"key": "rating", "value": "good"})
    assert harness.client.delete(f"{V2}/human-reviews/{rating_id}", headers=harness.admin).status_code == 204
    assert _values(harness, trace_id, "llm") == {"rating": "good"}
    rm = harness.client.get(f"{RM}/traces/{trace_id}", headers=harness.admin).json()
    assert [item["value"] for item in rm["annotations"]] == ["good"]
    again = _annotate(harness, trace_id, "llm", {"annotations": [{"key": "rating", "value": "good"}]})
    assert _refused(again, 404).startswith('The human review with key "rating"')
    # What is recorded can still be taken back.
    assert _remove(harness, trace_id, "llm", {"keys": ["rating"]}).json() == {"deleted": 1}


def test_who_may_annotate(harness: Harness) -> None:
    _define(harness, RATING)
    trace_id = _trace(harness)
    body = {"annotations": [{"key": "rating", "value": "good"}]}
    reader = harness.caller("reader", role="read")
    stranger = harness.caller("stranger")
    assert "write role" in _refused(_annotate(harness, trace_id, "llm", body, reader), 403)
    assert _refused(_annotate(harness, trace_id, "llm", body, stranger), 404) == (
        f"Span with id llm for workspace {_workspace(harness)} was not found."
    )
    assert _refused(_remove(harness, trace_id, "llm", {"keys": ["rating"]}, reader), 403)
    assert harness.client.get(f"/v3/traces/{trace_id}", headers=reader).status_code == 200
    assert _refused(harness.client.get(f"/v3/traces/{trace_id}", headers=stranger), 404)


def test_a_deployment_span_passes_its_values_on_to_its_log(harness: Harness) -> None:
    _define(harness, RATING, DEFECTS)
    trace_id = _trace(harness)
    saved = _saved(
        harness,
        trace_id,
        "deploy",
        {"key": "rating", "value": "bad"},
        {"key": "defects", "value": ["spelling"]},
    )
    assert [(item["span_id"], item["key"]) for item in saved] == [
        ("deploy", "rating"),
        ("deploy", "defects"),
        ("log", "rating"),
        ("log", "defects"),
    ]
    assert _values(harness, trace_id, "log") == {"rating": "bad", "defects": ["spelling"]}
    _saved(harness, trace_id, "deploy", {"key": "rating", "value": "good"})
    assert _values(harness, trace_id, "log")["rating"] == "good"
    assert _remove(harness, trace_id, "deploy", {"keys": ["defects"]}).json() == {"deleted": 2}
    assert _values(harness, trace_id, "log") == {"rating": "good"}
    # Annotating the log itself touches nothing else.
    _saved(harness, trace_id, "log", {"key": "defects", "value": ["grammatical"]})
    assert "defects" not in _values(harness, trace_id, "deploy")


# ---------------------------------------------------------------------------------- evaluator results


def test_a_person_corrects_an_evaluator_result_beside_it(harness: Harness) -> None:
    trace_id = _trace(harness)
    result = _evaluation(
        harness,
        trace_id,
        "llm",
        evaluator="disclaimer_check",
        output_type="boolean",
        value=True,
        explanation="ok",
    )
    assert (result["evaluator"], result["value"], result["source"], result["corrections"]) == (
        "disclaimer_check",
        True,
        "evaluator",
        [],
    )
    why = "The response omitted a required disclaimer."
    [correction] = _saved(
        harness, trace_id, "llm", {"parent_annotation_id": result["_id"], "value": False, "explanation": why}
    )
    assert correction["parent_annotation_id"] == result["_id"]
    assert (correction["key"], correction["value"], correction["explanation"]) == (
        "disclaimer_check",
        False,
        why,
    )

    [shown] = _span(harness, trace_id, "llm")["evaluations"]
    assert shown["value"] is True  # the original stays
    assert [item["value"] for item in shown["corrections"]] == [False]
    assert _span(harness, trace_id, "llm")["annotations"] == []
    listed = harness.client.get(f"{V2}/traces/{trace_id}/spans/llm/evaluations", headers=harness.admin).json()
    assert listed["data"] == [shown]

    # Correcting again replaces one's correction; the evaluator running again keeps the corrections.
    _saved(harness, trace_id, "llm", {"parent_annotation_id": result["_id"], "value": True})
    rerun = _evaluation(
        harness, trace_id, "llm", evaluator="disclaimer_check", output_type="boolean", value=False
    )
    assert rerun["_id"] == result["_id"]
    assert [item["value"] for item in rerun["corrections"]] == [True]

    removed = _remove(harness, trace_id, "llm", {"parent_annotation_ids": [result["_id"]]})
    assert removed.json() == {"deleted": 1}
    assert _span(harness, trace_id, "llm")["evaluations"][0]["corrections"] == []


@pytest.mark.parametrize(
    ("output_type", "result", "wrong", "expected"),
    [
        ("boolean", True, "no", "true or false"),
        ("number", 0.4, "high", "a number"),
        ("categorical", "relevant", 3, "one category, as a string"),
        ("text", "fine", False, "a string"),
    ],
)
def test_a_correction_must_match_the_evaluators_output_type(
    harness: Harness, output_type: str, result: Any, wrong: Any, expected: str
) -> None:
    trace_id = _trace(harness)
    made = _evaluation(harness, trace_id, "llm", evaluator="judge", output_type=output_type, value=result)
    answer = _annotate(
        harness, trace_id, "llm", {"annotations": [{"parent_annotation_id": made["_id"], "value": wrong}]}
    )
    assert _refused(answer, 400) == (
        f'The evaluator "judge" gives {output_type} results: a correction of it must be {expected}, '
        "like the result it corrects."
    )


def test_an_unknown_evaluator_result_is_not_found(harness: Harness) -> None:
    trace_id = _trace(harness)
    made = _evaluation(harness, trace_id, "root", evaluator="judge", output_type="boolean", value=True)
    workspace = _workspace(harness)
    for parent in ("ev1", str(uuid.uuid4()), made["_id"]):  # the last is on another span
        answer = _annotate(
            harness, trace_id, "llm", {"annotations": [{"parent_annotation_id": parent, "value": False}]}
        )
        assert _refused(answer, 404) == (
            f"The evaluator result with id {parent} on span llm for workspace {workspace} was not found."
        )


def test_an_evaluator_result_must_be_of_its_output_type(harness: Harness) -> None:
    trace_id = _trace(harness)
    answer = harness.client.post(
        f"{V2}/traces/{trace_id}/spans/llm/evaluations",
        json={"evaluator": "judge", "output_type": "number", "value": "x"},
        headers=harness.admin,
    )
    assert _refused(answer, 400) == "value: an evaluator with output_type number gives a number."
    retyped = _evaluation(harness, trace_id, "llm", evaluator="judge", output_type="number", value=3)
    again = _evaluation(harness, trace_id, "llm", evaluator="judge", output_type="text", value="fine")
    assert again["_id"] != retyped["_id"]
    assert [item["output_type"] for item in _span(harness, trace_id, "llm")["evaluations"]] == ["text"]


# ------------------------------------------------------------------------------------------ /v3 traces


def test_v3_reads_a_trace_and_its_spans(harness: Harness) -> None:
    trace_id = _trace(
        harness, title="Refund for 1182", metadata={"identity_id": "cust-7", "session_id": "s-1"}
    )
    trace = harness.client.get(f"/v3/traces/{trace_id}", headers=harness.admin).json()["trace"]
    assert trace["object"] == "trace"
    assert trace["trace_id"] == trace_id
    assert trace["root_span_id"] == "root"
    assert trace["name"] == "Refund for 1182"
    assert trace["status"] == "completed"
    assert trace["duration_ms"] == 5000
    assert trace["project_id"] == harness.project_id
    assert (trace["identity_id"], trace["session_id"]) == ("cust-7", "s-1")
    assert trace["agent"]["name"] == "support-agent"

    first = harness.client.get(
        f"/v3/traces/{trace_id}/spans", params={"limit": 3}, headers=harness.admin
    ).json()
    assert first["object"] == "list"
    assert [span["span_id"] for span in first["data"]] == ["root", "llm", "deploy"]
    assert first["has_more"] is True
    root, llm, deploy = first["data"]
    assert (root["level"], root["has_children"], deploy["has_children"]) == (0, True, True)
    assert (llm["type"], llm["provider"], llm["model"], llm["duration_ms"]) == (
        "span.chat_completion",
        "openai",
        "gpt-4o",
        1500,
    )
    assert llm["usage"] == {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    rest = harness.client.get(
        f"/v3/traces/{trace_id}/spans", params={"page_token": first["next_page_token"]}, headers=harness.admin
    ).json()
    assert [span["span_id"] for span in rest["data"]] == ["log"]
    # No next page, no token (@orq-ai/node refuses a null where it takes a string).
    assert (rest["has_more"], "next_page_token" in rest, rest["data"][0]["level"]) == (False, False, 2)

    span = harness.client.get(f"/v3/traces/{trace_id}/spans/deploy", headers=harness.admin).json()["span"]
    assert span["attributes"] == {"log_id": "log"}
    assert span["summary"]["parent_span_id"] == "root"


def test_v3_not_found_is_a_message_and_a_code(harness: Harness) -> None:
    trace_id = _trace(harness)
    workspace = _workspace(harness)
    missing = str(uuid.uuid4())
    assert _refused(harness.client.get(f"/v3/traces/{missing}", headers=harness.admin), 404) == (
        f"Trace with id {missing} for workspace {workspace} was not found."
    )
    assert _refused(harness.client.get(f"/v3/traces/{missing}/spans", headers=harness.admin), 404)
    assert _refused(
        harness.client.get(f"/v3/traces/{missing}/spans/llm", headers=harness.admin), 404
    ).startswith("Trace")
    assert _refused(harness.client.get(f"/v3/traces/{trace_id}/spans/nope", headers=harness.admin), 404) == (
        f"Span with id nope for workspace {workspace} was not found."
    )
    bad_token = harness.client.get(
        f"/v3/traces/{trace_id}/spans", params={"page_token": "x"}, headers=harness.admin
    )
    assert _refused(bad_token, 400)


def test_v3_search_by_time_filters_and_text(harness: Harness) -> None:
    _define(harness, RATING)
    early = _trace(
        harness, startedAt="2026-11-01T08:00:00Z", endedAt=None, metadata={"customer": "acme", "tier": 2}
    )
    late = _trace(
        harness, startedAt="2026-11-02T08:00:00Z", endedAt=None, status="failed", title="Angry refund"
    )
    other = _trace(harness, startedAt="2026-11-03T08:00:00Z", endedAt=None, agent="billing-agent")
    _saved(harness, early, "llm", {"key": "rating", "value": "good"})

    def search(**body: Any) -> dict[str, Any]:
        answer = harness.client.post("/v3/traces/search", json=body, headers=harness.admin)
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found

    window = {"from": "2026-11-01T00:00:00Z", "to": "2026-11-04T00:00:00Z"}
    assert [t["trace_id"] for t in search(**window)["data"]] == [other, late, early]
    assert [
        t["trace_id"] for t in search(**window, sort=[{"field": "started_at", "order": "asc"}])["data"]
    ] == [early, late, other]
    assert [
        t["trace_id"]
        for t in search(**{"from_": "2026-11-02T00:00:00Z", "to": "2026-11-03T00:00:00Z"})["data"]
    ] == [late]
    by_status = search(**window, filters=[{"field": "status", "op": "eq", "values": ["failed"]}])
    assert [t["trace_id"] for t in by_status["data"]] == [late]
    by_agent = search(**window, filters=[{"field": "agent.name", "op": "neq", "values": ["support-agent"]}])
    assert [t["trace_id"] for t in by_agent["data"]] == [other]
    for value in ("acme", "2"):
        key = "customer" if value == "acme" else "tier"
        found = search(**window, filters=[{"field": f"metadata.{key}", "op": "in", "values": [value]}])
        assert [t["trace_id"] for t in found["data"]] == [early]
    either = search(
        **window,
        filter_operator="or",
        filters=[
            {"field": "status", "values": ["failed"]},
            {"field": "metadata.customer", "values": ["acme"]},
        ],
    )
    assert [t["trace_id"] for t in either["data"]] == [late, early]
    assert [t["trace_id"] for t in search(**window, query="ANGRY")["data"]] == [late]
    [rated] = search(**window, filters=[{"field": "trace_id", "values": [early]}])["data"]
    assert [item["value"] for item in rated["annotations"]] == ["good"]

    page = search(**window, limit=2)
    assert (len(page["data"]), page["has_more"]) == (2, True)
    rest = search(**window, limit=2, page_token=page["next_page_token"])
    assert ([t["trace_id"] for t in rest["data"]], rest["has_more"], "next_page_token" in rest) == (
        [early],
        False,
        False,
    )


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"from": "2026-11-02T00:00:00Z", "to": "2026-11-01T00:00:00Z"}, "to must be later than from."),
        ({"to": "2026-11-01T00:00:00Z"}, "from: Field required"),
        (
            {
                "from": "2026-11-01T00:00:00Z",
                "to": "2026-11-02T00:00:00Z",
                "filters": [{"field": "colour", "values": ["x"]}],
            },
            'filters: "colour" is not a field traces are searched by; these are: status, '
            "agent (or agent.name), agent.id, agent_version, external_id, project_id, trace_id, "
            "identity_id, session_id, thread_id, metadata.<key>.",
        ),
        (
            {
                "from": "2026-11-01T00:00:00Z",
                "to": "2026-11-02T00:00:00Z",
                "filters": [{"field": "status", "op": "like"}],
            },
            'filters: the operator "like" is not one of eq, in, neq, not_in.',
        ),
        (
            {"from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z", "sort": [{"field": "cost"}]},
            'sort: traces are sorted by started_at, not "cost".',
        ),
        (
            {"from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z", "page_token": "junk"},
            '"junk" is not a cursor this list gave out.',
        ),
    ],
)
def test_v3_search_refuses_what_it_cannot_do(harness: Harness, body: dict[str, Any], sentence: str) -> None:
    assert (
        _refused(harness.client.post("/v3/traces/search", json=body, headers=harness.admin), 400) == sentence
    )


def test_queues_save_values_on_a_whole_trace_through_the_service(harness: Harness) -> None:
    """`save_values` with span_key "" is what a queue item of a whole trace saves through."""
    _define(harness, RATING)
    trace_id = _trace(harness)
    with harness.db.write() as session:
        admin = Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))
        [first] = annotate.save_values(
            session, admin, uuid.UUID(trace_id), "", [ValueIn(key="rating", value="bad")]
        )
        [again] = annotate.save_values(session, admin, trace_id, "", [ValueIn(key="rating", value="good")])
        assert (first.id, first.span_id, first.span_key) == (again.id, None, None)
    trace = harness.client.get(f"/v3/traces/{trace_id}", headers=harness.admin).json()["trace"]
    assert [(item["span_id"], item["value"]) for item in trace["annotations"]] == [(None, "good")]
    with harness.db.write() as session:
        admin = Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))
        assert annotate.remove_values(session, admin, trace_id, "", keys=["rating"]) == 1


def test_v3_search_by_ids(harness: Harness) -> None:
    trace_id = _trace(harness)
    window = {"from": "2026-11-01T00:00:00", "to": "2026-11-02T00:00:00"}  # no zone: UTC
    run = harness.client.get(f"/v1/runs/{trace_id}", headers=harness.admin).json()
    for field, value in (("agent.id", run["agentId"]), ("project_id", harness.project_id)):
        body = {**window, "filters": [{"field": field, "values": [value]}]}
        found = harness.client.post("/v3/traces/search", json=body, headers=harness.admin).json()
        assert [trace["trace_id"] for trace in found["data"]] == [trace_id]
    bad = {**window, "filters": [{"field": "agent.id", "values": ["x"]}]}
    answer = harness.client.post("/v3/traces/search", json=bad, headers=harness.admin)
    assert _refused(answer, 400) == "filters: agent.id takes ids, and one of ['x'] is not."
