"""Feedback-derived alternatives (issue 7's third source of pairs), over HTTP on both stores, with the
real job worker and a scripted OpenAI-compatible server on 127.0.0.1 standing in for the LLM: what it is
asked (every assistant action, never a tool result or a system step; the feedback offered, never a
flagged comment; a tool-call review that sees nothing after the call), which of its answers become
pairs and why the others don't, View learning, retries, the cap and the order of sources, and the API
key."""

from __future__ import annotations

import copy
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update
from starlette.testclient import TestClient

from redline.adapters.llm import OpenAICompatibleChat, chat_model
from redline.app import create_app
from redline.background import JOB_KINDS, job_kinds
from redline.cli import serving
from redline.config import Settings
from redline.db import Database, utcnow
from redline.jobs.models import DONE, FAILED, QUEUED, Job
from redline.jobs.worker import JobWorker
from redline.learning.assessments import NOT_CONFIGURED
from redline.learning.chat import ChatRefused, ChatUnavailable
from redline.learning.contexts import prefix_context
from redline.learning.models import FeedbackAssessment
from tests.conftest import Harness, bootstrap_admin, run_waiting_jobs
from tests.liveserver import LiveServer, live_server
from tests.llmserver import Recorded, ScriptedLLM, Status, scripted_llm
from tests.samples import REFUND_STEPS

__all__ = ["live_server", "scripted_llm"]

RM = "/api/v1/rm"
MODEL = "judge-1"
QUESTION = "user: I want a refund for order 1182"
LOOKUP = 'assistant → lookup_order({"order_id": "1182"})'
RESULT = 'tool: {"status": "delivered"}'
ANSWER = "assistant: Your order was delivered on May 3."
CORRECTION = "No, I asked for a refund, not the delivery status."
BETTER = "I've started a refund for order 1182; it reaches your card in 3 days."
# The refund run, and the customer's correction after its answer (step 5).
CORRECTED = [*copy.deepcopy(REFUND_STEPS), {"role": "user", "content": CORRECTION}]
# A run that refunds before looking the order up (the call is step 2).
REFUND_FIRST = copy.deepcopy(REFUND_STEPS)
# Its arguments in the order PostgreSQL's JSONB keeps keys (shorter first), so both stores render alike.
REFUND_FIRST[2].update(toolName="issue_refund", toolInput={"amount": 40, "order_id": "1182"})
REFUND_FIRST[3]["content"] = '{"refunded": true}'
REFUND_FIRST[4]["content"] = "I've issued a full refund to your card."
NONE = {"verdict": "no_preference", "rationale": "Nothing says what should have been done."}
TOO_FEW = (
    "training needs at least 2 usable pairs; the ratings, corrections and feedback-derived alternatives "
    "of the selected traces give {count} (View learning shows what the LLM made of the feedback)"
)


def _joined(*lines: str) -> str:
    return "\n\n".join(lines)


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _worse(source_id: str, quote: str, alternative: Any, basis: str = "user_feedback") -> dict[str, Any]:
    return {
        "verdict": "original_worse",
        "basis": basis,
        "source_id": source_id,
        "evidence_quote": quote,
        "rationale": "The customer asked for a refund.",
        "alternative": alternative,
    }


def _llm_settings(database_url: str, url: str, **more: Any) -> Settings:
    """One request at a time unless a test says otherwise: the scripts answer in the order asked."""
    return Settings(
        database_url=database_url, llm_base_url=url, llm_model=MODEL, **{"llm_concurrency": 1, **more}
    )


@pytest.fixture
def llm(db: Database, database_url: str, scripted_llm: ScriptedLLM) -> Iterator[Harness]:
    """The app with an LLM configured (the scripted one), as `harness` is without."""
    first = bootstrap_admin(db)
    settings = _llm_settings(database_url, scripted_llm.url)
    with TestClient(create_app(settings, db), raise_server_exceptions=False) as client:
        yield Harness(client, db, settings, str(first.project.id), str(first.admin.id))


def _store(harness: Harness, steps: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """A run of these steps: its id and its steps' ids, in order."""
    run = _ok(
        harness.client.post("/v1/runs", json=harness.run(steps=copy.deepcopy(steps)), headers=harness.admin),
        201,
    )
    trace = _ok(harness.client.get(f"{RM}/traces/{run['id']}", headers=harness.admin))
    return str(run["id"]), [str(step["id"]) for step in trace["steps"]]


def _comment(
    harness: Harness, trace_id: str, step_id: str | None, text: str, *, flagged: bool = False
) -> str:
    body = {"comment": text, **({"step_id": step_id} if step_id else {})}
    made = _ok(harness.client.post(f"{RM}/traces/{trace_id}/annotations", json=body, headers=harness.admin))
    if flagged:
        patch = {"label_error": True, "label_error_note": "not what happened"}
        _ok(harness.client.patch(f"{RM}/annotations/{made['id']}", json=patch, headers=harness.admin))
    return str(made["id"])


def _rate(harness: Harness, trace_id: str, rating: int) -> None:
    _ok(
        harness.client.post(
            f"{RM}/traces/{trace_id}/annotations", json={"rating": rating}, headers=harness.admin
        )
    )


def _model(harness: Harness, trace_ids: list[str], **config: Any) -> dict[str, Any]:
    body = {"name": "learned", "trace_ids": trace_ids, "training_config": config}
    made: dict[str, Any] = _ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    return made


def _work(harness: Harness, settings: Settings | None = None) -> int:
    """Run every job waiting now with the worker the settings make; how many ran."""
    return run_waiting_jobs(harness.db, job_kinds(settings or harness.settings))


def _get(harness: Harness, model_id: str) -> dict[str, Any]:
    found: dict[str, Any] = _ok(harness.client.get(f"{RM}/reward-models/{model_id}", headers=harness.admin))
    return found


def _learning(harness: Harness, model_id: str, **params: int) -> dict[str, Any]:
    path = f"{RM}/reward-models/{model_id}/learning"
    found: dict[str, Any] = _ok(harness.client.get(path, params=params, headers=harness.admin))
    return found


def _pairs(harness: Harness, model_id: str) -> list[dict[str, Any]]:
    path = f"{RM}/reward-models/{model_id}/pairs"
    pairs: list[dict[str, Any]] = _ok(harness.client.get(path, headers=harness.admin))["pairs"]
    return pairs


def _feedback_section(prompt: str) -> str:
    return prompt.split("\nFEEDBACK\n", 1)[1]


def test_a_user_correction_after_the_response_makes_a_pair(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    first, first_steps = _store(llm, CORRECTED)
    second, second_steps = _store(llm, CORRECTED)
    scripted_llm.answer(
        NONE,
        _worse(first_steps[5], "I asked for a refund", BETTER),
        NONE,
        # Quotes match with whitespace runs read as one space.
        _worse(second_steps[5], "I asked  for\na refund", BETTER),
    )
    # No rating or correction gives a pair, but with an LLM configured the model is made.
    model = _model(llm, [first, second])
    assert (model["status"], model["num_pairs"]) == ("queued", 0)
    assert _work(llm) == 1

    ready = _get(llm, model["id"])
    assert (ready["status"], ready["num_pairs"], ready["error"]) == ("ready", 2, None)
    assert ready["metrics"]["feedback"] == {
        "status": "assessed",
        "llm_model": MODEL,
        "traces": 2,
        "assessments": 4,
        "by_verdict": {"original_worse": 2, "original_better": 0, "no_preference": 2, "ambiguous": 0},
        "pairs": 2,
        "skipped": 2,
        "stopped_at_max_pairs": False,
    }
    assert ready["metrics"]["validation"]["by_source"].keys() <= {"feedback"}
    pairs = _pairs(llm, model["id"])
    assert [pair["position"] for pair in pairs] == [0, 1]
    pair = pairs[0]
    assert (pair["granularity"], pair["source"]) == ("step", "feedback")
    # The shared prefix, then the alternative or the original: no system step, nothing after the answer.
    assert pair["chosen"] == _joined(QUESTION, LOOKUP, RESULT, f"assistant: {BETTER}")
    assert pair["rejected"] == _joined(QUESTION, LOOKUP, RESULT, ANSWER)
    side = {"trace_id": first, "step_id": first_steps[4]}
    assessment = _learning(llm, model["id"])["assessments"][1]
    assert pair["source_ids"] == {
        "assessment_id": pair["source_ids"]["assessment_id"],
        "preference": "original_worse",
        "basis": "user_feedback",
        "source_id": first_steps[5],
        "source_kind": "user_message",
        "evidence_quote": "I asked for a refund",
        "rationale": "The customer asked for a refund.",
        "chosen": side,
        "rejected": side,
    }
    uuid.UUID(pair["source_ids"]["assessment_id"])

    # What the LLM was asked: each assistant action in turn, with the correction offered for the answer.
    assert len(scripted_llm.requests) == 4
    for request in scripted_llm.requests:
        assert request.path == "/v1/chat/completions"
        assert (request.body["model"], request.body["temperature"]) == (MODEL, 0)
        assert "authorization" not in {name.lower() for name in request.headers}
    lookup, answer = scripted_llm.requests[:2]
    assert f"TARGET step 2 (tool call), id {first_steps[2]}" in lookup.prompt
    assert _feedback_section(lookup.prompt).strip() == (
        "(none: no user message followed it, and no one commented on it)"
    )
    assert f"TARGET step 4 (text response), id {first_steps[4]}" in answer.prompt
    assert _feedback_section(answer.prompt).strip() == (
        f"[user_message · id {first_steps[5]} · step 5]\n{CORRECTION}"
    )
    # The findings are not comments: the traces have no annotations.
    for trace_id in (first, second):
        assert _ok(llm.client.get(f"{RM}/traces/{trace_id}/annotations", headers=llm.admin)) == []
    assert assessment["became_pair"] is True


def test_view_learning_lists_every_assessment_with_its_step(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    first, first_steps = _store(llm, CORRECTED)
    second, second_steps = _store(llm, CORRECTED)
    scripted_llm.answer(
        NONE,
        _worse(first_steps[5], "I asked for a refund", BETTER),
        {"verdict": "ambiguous", "rationale": "Could be read either way."},
        _worse(second_steps[5], "I asked for a refund", BETTER),
    )
    model = _model(llm, [first, second])
    _work(llm)
    listed = _learning(llm, model["id"])
    assert listed["total"] == 4
    shown = [
        (a["position"], a["trace_id"], a["step_index"], a["target"], a["verdict"], a["became_pair"])
        for a in listed["assessments"]
    ]
    assert shown == [
        (0, first, 2, "tool_call", "no_preference", False),
        (1, first, 4, "response", "original_worse", True),
        (2, second, 2, "tool_call", "ambiguous", False),
        (3, second, 4, "response", "original_worse", True),
    ]
    assert listed["assessments"][1] == {
        "position": 1,
        "trace_id": first,
        "step_id": first_steps[4],
        "step_index": 4,
        "target": "response",
        "verdict": "original_worse",
        "basis": "user_feedback",
        "source_id": first_steps[5],
        "source_kind": "user_message",
        "evidence_quote": "I asked for a refund",
        "rationale": "The customer asked for a refund.",
        "alternative": BETTER,
        "review": None,
        "became_pair": True,
        "pair_position": 0,
        "skipped_reason": None,
        "created_at": listed["assessments"][1]["created_at"],
    }
    assert [a["skipped_reason"] for a in listed["assessments"]] == [
        "no preference, so no pair",
        None,
        "ambiguous feedback is skipped",
        None,
    ]
    page = _learning(llm, model["id"], limit=1, offset=3)
    assert (page["total"], [a["position"] for a in page["assessments"]]) == (4, [3])
    # The same access rule as reading the model.
    stranger = llm.caller("no role")
    answer = llm.client.get(f"{RM}/reward-models/{model['id']}/learning", headers=stranger)
    assert (answer.status_code, answer.json()) == (404, {"detail": "Reward model not found"})
    answer = llm.client.get(f"{RM}/reward-models/not-a-uuid/learning", headers=llm.admin)
    assert answer.status_code == 404


def test_a_step_comment_makes_a_pair_and_flagged_comments_are_never_offered(
    llm: Harness, scripted_llm: ScriptedLLM
) -> None:
    runs = [_store(llm, REFUND_STEPS) for _ in range(2)]
    comments = []
    for trace_id, steps in runs:
        comments.append(
            _comment(llm, trace_id, steps[4], "Should have offered the refund that was asked for")
        )
        _comment(llm, trace_id, steps[4], "FLAGGED: the tone is rude", flagged=True)
        _comment(llm, trace_id, None, "WHOLE TRACE: slow overall")
    for comment in comments:
        scripted_llm.answer(NONE, _worse(comment, "offered the refund", BETTER))
    model = _model(llm, [trace_id for trace_id, _ in runs])
    _work(llm)
    assert _get(llm, model["id"])["status"] == "ready"
    pairs = _pairs(llm, model["id"])
    assert [(p["source_ids"]["source_id"], p["source_ids"]["source_kind"]) for p in pairs] == [
        (comments[0], "step_comment"),
        (comments[1], "step_comment"),
    ]
    assert pairs[0]["chosen"] == _joined(QUESTION, LOOKUP, RESULT, f"assistant: {BETTER}")
    # The original and the alternative answer the same context: the text before the step.
    assert (pairs[0]["kind"], pairs[0]["context_id"]) == (
        "same_context",
        prefix_context(_joined(QUESTION, LOOKUP, RESULT)),
    )
    answer_request = scripted_llm.requests[1]
    assert _feedback_section(answer_request.prompt).strip() == (
        f"[step_comment · id {comments[0]} · step 4]\nShould have offered the refund that was asked for"
    )
    for request in scripted_llm.requests:
        assert "FLAGGED" not in request.prompt
        assert "WHOLE TRACE" not in request.prompt


def test_tool_results_and_system_steps_are_never_targets(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    steps: list[dict[str, Any]] = [
        {"role": "system", "content": "SYSTEM: you are a support agent."},
        {"role": "user", "content": "Refund order 1182, please."},
        {
            "role": "assistant",
            "content": "Let me check.",
            "toolName": "lookup_order",
            "toolInput": {"order_id": "1182"},
        },
        {"role": "tool", "content": '{"status": "delivered"}'},
        {"role": "assistant", "content": "", "toolName": "check_policy", "toolInput": {"order_id": "1182"}},
        {"role": "tool", "content": '{"refundable": true}'},
        {"role": "assistant", "content": "Refunded."},
        {"role": "user", "content": "Thanks!"},
    ]
    trace_id, ids = _store(llm, steps)
    scripted_llm.answer(NONE, NONE, NONE)
    _model(llm, [trace_id])
    _work(llm)
    targets = [
        re.findall(r"TARGET step (\d+) \(([a-z ]+)\), id (\S+)", r.prompt) for r in scripted_llm.requests
    ]
    assert targets == [
        [("2", "tool call", ids[2])],
        [("4", "tool call", ids[4])],
        [("6", "text response", ids[6])],
    ]
    # The system step is context the LLM sees, never a target; the call with no text is a target.
    assert "[step 0 · id" in scripted_llm.requests[0].prompt


def test_silence_a_new_question_or_a_tool_error_is_no_preference(
    llm: Harness, scripted_llm: ScriptedLLM
) -> None:
    steps = copy.deepcopy(REFUND_STEPS)
    steps[3]["content"] = '{"error": "order not found"}'
    steps[4]["content"] = "I couldn't find that order."
    steps.append({"role": "user", "content": "Also, can I change my delivery address?"})
    trace_id, ids = _store(llm, steps)
    scripted_llm.answer(NONE, NONE)
    model = _model(llm, [trace_id])
    _work(llm)
    # The tool error is not offered as feedback on the call; the new question is offered on the answer.
    call, answer = scripted_llm.requests
    assert "order not found" not in _feedback_section(call.prompt)
    assert _feedback_section(answer.prompt).strip() == (
        f"[user_message · id {ids[5]} · step 5]\nAlso, can I change my delivery address?"
    )
    failed = _get(llm, model["id"])
    assert (failed["status"], failed["error"], failed["num_pairs"]) == ("failed", TOO_FEW.format(count=0), 0)
    listed = _learning(llm, model["id"])["assessments"]
    assert [(a["verdict"], a["became_pair"], a["skipped_reason"]) for a in listed] == [
        ("no_preference", False, "no preference, so no pair"),
        ("no_preference", False, "no preference, so no pair"),
    ]


# Each case: the answer about the run's final answer (step 4) given the ids of the run's steps and
# comments, and why it is skipped.
Case = Callable[[list[str], dict[str, str]], dict[str, Any]]
UNKNOWN = str(uuid.uuid4())
BROKEN_RULES: list[tuple[str, Case, str]] = [
    (
        "ambiguous",
        lambda steps, notes: {"verdict": "ambiguous", "rationale": "Could be praise or blame."},
        "ambiguous feedback is skipped",
    ),
    (
        "missing source",
        lambda steps, notes: _worse(UNKNOWN, "I asked for a refund", BETTER),
        f"the cited source {UNKNOWN} does not exist",
    ),
    (
        "quote not in the source",
        lambda steps, notes: _worse(steps[5], "I love this answer", BETTER),
        "the evidence quote does not occur in the cited source",
    ),
    (
        "correction before the response",
        lambda steps, notes: _worse(steps[1], "refund for order 1182", BETTER),
        "the cited user message (step 1) comes before the action: a user correction must follow it",
    ),
    (
        "tool result",
        lambda steps, notes: _worse(steps[3], "delivered", BETTER),
        "the cited step 3 is a tool result: tool results are context, not feedback",
    ),
    (
        "system step",
        lambda steps, notes: _worse(steps[0], "support agent", BETTER),
        "the cited step 0 is a system step, not feedback",
    ),
    (
        "flagged comment",
        lambda steps, notes: _worse(notes["flagged"], "refund", BETTER),
        "the cited comment is flagged as a label error",
    ),
    (
        "comment on another step",
        lambda steps, notes: _worse(notes["other step"], "look up", BETTER),
        "the cited comment is on step 2, not on this action's step",
    ),
    (
        "user feedback citing the action",
        lambda steps, notes: _worse(steps[4], "delivered on May 3", BETTER),
        "a user-feedback answer must cite a user message or a step comment, not the action itself",
    ),
    (
        "same alternative",
        lambda steps, notes: _worse(steps[5], "I asked for a refund", "Your order was  delivered on May 3."),
        "the alternative is the same as the original",
    ),
    (
        "empty quote",
        lambda steps, notes: _worse(steps[5], "  ", BETTER),
        "the evidence quote is empty",
    ),
]


@pytest.mark.parametrize(
    ("answer", "reason"), [case[1:] for case in BROKEN_RULES], ids=[c[0] for c in BROKEN_RULES]
)
def test_an_answer_that_breaks_a_rule_is_skipped_with_the_rule(
    llm: Harness, scripted_llm: ScriptedLLM, answer: Case, reason: str
) -> None:
    trace_id, steps = _store(llm, CORRECTED)
    notes = {
        "flagged": _comment(llm, trace_id, steps[4], "Should refund", flagged=True),
        "other step": _comment(llm, trace_id, steps[2], "Should look up the policy too"),
    }
    scripted_llm.answer(NONE, answer(steps, notes))
    model = _model(llm, [trace_id])
    assert _work(llm) == 1
    listed = _learning(llm, model["id"])["assessments"]
    assert (listed[1]["step_index"], listed[1]["became_pair"], listed[1]["skipped_reason"]) == (
        4,
        False,
        reason,
    )
    assert _get(llm, model["id"])["error"] == TOO_FEW.format(count=0)


def test_feedback_is_about_the_action_it_follows(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    trace_id, steps = _store(llm, CORRECTED)
    lookup = {"tool": "lookup_order", "args": {"order_id": "1183"}}
    # The correction (step 5) follows the answer, not the call two steps before it; and another
    # assistant action is not feedback.
    scripted_llm.answer(
        _worse(steps[5], "I asked for a refund", lookup), _worse(steps[2], "lookup_order", BETTER)
    )
    model = _model(llm, [trace_id])
    _work(llm)
    assert [a["skipped_reason"] for a in _learning(llm, model["id"])["assessments"]] == [
        "the cited user message (step 5) is not the one that follows the action",
        "the cited step 2 is another assistant action, not feedback about this one",
    ]
    assert scripted_llm.reviews == []


def test_a_response_alternative_must_be_text(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    trace_id, steps = _store(llm, CORRECTED)
    scripted_llm.answer(NONE, _worse(steps[5], "I asked for a refund", {"tool": "issue_refund", "args": {}}))
    model = _model(llm, [trace_id])
    _work(llm)
    assert _get(llm, model["id"])["error"] == (
        f"Malformed extraction: the LLM's assessment of step 4 of trace {trace_id} has an alternative "
        "that is not text, as a text response's must be."
    )


def test_a_tool_call_alternative_needs_an_independent_review(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    runs = [_store(llm, REFUND_FIRST) for _ in range(3)]
    remark = "Refunded before looking the order up"
    comments = [_comment(llm, trace_id, steps[2], remark) for trace_id, steps in runs]
    instead = {"tool": "lookup_order", "args": {"order_id": "1182"}}
    for comment, verdict in zip(comments, ("A", "B", "B"), strict=True):
        scripted_llm.answer(
            _worse(comment, "before looking the order up", instead),
            {"better": verdict, "rationale": f"Call {verdict} fits the conversation so far."},
            NONE,
        )
    model = _model(llm, [trace_id for trace_id, _ in runs])
    _work(llm)
    assert _get(llm, model["id"])["status"] == "ready"

    listed = _learning(llm, model["id"])["assessments"]
    refused, confirmed = listed[0], listed[2]
    assert (refused["target"], refused["alternative"], refused["became_pair"]) == (
        "tool_call",
        instead,
        False,
    )
    assert refused["review"] == {
        "better": "A",
        "rationale": "Call A fits the conversation so far.",
        "confirmed": False,
    }
    assert refused["skipped_reason"] == (
        "the independent review, which saw only the context before the call, preferred the original call: "
        "Call A fits the conversation so far."
    )
    assert (confirmed["became_pair"], confirmed["review"]["confirmed"]) == (True, True)
    pairs = _pairs(llm, model["id"])
    assert len(pairs) == 2
    assert pairs[0]["chosen"] == _joined(QUESTION, LOOKUP)
    assert pairs[0]["rejected"] == _joined(
        QUESTION, 'assistant → issue_refund({"amount": 40, "order_id": "1182"})'
    )
    assert pairs[0]["source_ids"]["chosen"] == {"trace_id": runs[1][0], "step_id": runs[1][1][2]}

    # The review saw the two calls and the context before the call, and nothing after or about it.
    review = scripted_llm.reviews[0]
    assert review.prompt.endswith(
        'CALL A\nissue_refund({"amount": 40, "order_id": "1182"})\n\n'
        'CALL B\nlookup_order({"order_id": "1182"})'
    )
    assert "I want a refund for order 1182" in review.prompt
    for later in ('{"refunded": true}', "I've issued a full refund", remark, "[step 2", "[step 3", "[step 4"):
        assert later not in review.prompt
    assert len(scripted_llm.reviews) == 3


MALFORMED = [
    ("Sure! The answer was fine.", "is not JSON: 'Sure! The answer was fine.'"),
    ('["original_worse"]', "is not a JSON object"),
    ({"rationale": "no verdict"}, 'has no "verdict"'),
    (
        {"verdict": "maybe", "rationale": "?"},
        'has verdict "maybe", not one of original_worse, original_better, no_preference, ambiguous',
    ),
    ({"verdict": "no_preference"}, 'has no "rationale"'),
    ({**NONE, "verdict": "original_worse"}, 'has no "basis"'),
    ({**_worse("x", "y", BETTER), "basis": "gut"}, 'has basis "gut", not one of user_feedback, ai_judgment'),
    ({**_worse("x", "y", BETTER), "source_id": 7}, 'has a "source_id" that is not text'),
    ({**_worse("x", "y", None)}, 'has no "alternative"'),
    (
        _worse("x", "y", "Look the order up first."),
        'has an alternative that is not {"tool": name, "args": {…}}, as a tool call\'s must be',
    ),
]


@pytest.mark.parametrize(("answer", "problem"), MALFORMED)
def test_a_malformed_extraction_fails_the_job(
    llm: Harness, scripted_llm: ScriptedLLM, answer: Any, problem: str
) -> None:
    trace_id, _ = _store(llm, CORRECTED)
    scripted_llm.answer(answer)
    model = _model(llm, [trace_id])
    assert _work(llm) == 1
    failed = _get(llm, model["id"])
    reason = f"Malformed extraction: the LLM's assessment of step 2 of trace {trace_id} {problem}."
    assert (failed["status"], failed["error"]) == ("failed", reason)
    assert failed["status_detail"] == f"Training failed: {reason}"
    with llm.db.read() as session:
        job = session.scalars(select(Job)).one()
        assert (job.state, job.attempts) == (FAILED, 1)
    assert _learning(llm, model["id"])["total"] == 0


def test_a_malformed_review_fails_the_job(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    trace_id, steps = _store(llm, REFUND_FIRST)
    comment = _comment(llm, trace_id, steps[2], "Refund first is wrong")
    scripted_llm.answer(
        _worse(comment, "Refund first", {"tool": "lookup_order", "args": {}}), {"better": "C"}
    )
    model = _model(llm, [trace_id])
    _work(llm)
    assert _get(llm, model["id"])["error"] == (
        f"Malformed extraction: the LLM's review of the alternative to step 2 of trace {trace_id} "
        'has better "C", not one of A, B, neither.'
    )


def test_without_an_llm_the_source_is_skipped_and_the_model_says_so(harness: Harness) -> None:
    traces = [_store(harness, steps) for steps in (REFUND_STEPS, REFUND_FIRST, REFUND_FIRST)]
    for (trace_id, _), rating in zip(traces, (1, -1, -1), strict=True):
        _rate(harness, trace_id, rating)
    model = _model(harness, [trace_id for trace_id, _ in traces])
    worker = JobWorker(harness.db, JOB_KINDS)
    assert worker.run_once()
    ready = _get(harness, model["id"])
    assert (ready["status"], ready["num_pairs"]) == ("ready", 2)
    assert ready["metrics"]["feedback"] == {"status": "skipped", "detail": NOT_CONFIGURED}
    assert NOT_CONFIGURED == (
        "Feedback-derived alternatives skipped: REDLINE_LLM_BASE_URL and REDLINE_LLM_MODEL are not set."
    )
    assert _learning(harness, model["id"]) == {"assessments": [], "total": 0}
    # Without an LLM, fewer than two rating and correction pairs is still refused at creation.
    answer = harness.client.post(
        f"{RM}/reward-models", json={"name": "m", "trace_ids": [traces[0][0]]}, headers=harness.admin
    )
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(
        "training needs at least 2 usable pairs; the selected traces give 0"
    )
    # The settings' own worker has no LLM either: a model's base URL alone is not enough.
    assert chat_model(Settings(database_url=harness.settings.database_url, llm_base_url="http://x")) is None


def test_a_failing_endpoint_is_retried_and_a_retry_resumes_at_the_unfinished_trace(
    llm: Harness, scripted_llm: ScriptedLLM
) -> None:
    first, first_steps = _store(llm, CORRECTED)
    second, second_steps = _store(llm, CORRECTED)
    scripted_llm.answer(NONE, _worse(first_steps[5], "I asked for a refund", BETTER), NONE, Status(503))
    model = _model(llm, [first, second])
    assert _work(llm) == 1
    with llm.db.read() as session:
        job = session.scalars(select(Job)).one()
        assert (job.state, job.attempts) == (QUEUED, 1)
        assert job.error == (
            'ChatUnavailable: the LLM endpoint answered 503: {"error": {"message": "scripted failure"}}'
        )
        # The first trace's assessments are kept; the second's are not half-written.
        stored = session.scalars(
            select(FeedbackAssessment.trace_id).order_by(FeedbackAssessment.position)
        ).all()
        assert [str(trace_id) for trace_id in stored] == [first, first]
    assert _get(llm, model["id"])["status"] == "training"

    with llm.db.write() as session:
        session.execute(update(Job).values(run_after=utcnow()))
    scripted_llm.answer(Status(429))
    assert _work(llm) == 1
    with llm.db.write() as session:
        session.execute(update(Job).values(run_after=utcnow()))
    scripted_llm.answer(NONE, _worse(second_steps[5], "I asked for a refund", BETTER))
    assert _work(llm) == 1
    ready = _get(llm, model["id"])
    assert (ready["status"], ready["num_pairs"]) == ("ready", 2)
    with llm.db.read() as session:
        assert session.scalars(select(Job.state)).one() == DONE
        assert session.scalar(select(func.count()).select_from(FeedbackAssessment)) == 4
    # Asked: the first trace's two actions once; the second trace's call three times (answered, then
    # 429, then answered: its answer's 503 lost the whole trace, as a trace's assessments are written
    # together) and its answer twice.
    assert len(scripted_llm.requests) == 7
    assert [a["step_index"] for a in _learning(llm, model["id"])["assessments"]] == [2, 4, 2, 4]
    assert [p["source_ids"]["chosen"]["trace_id"] for p in _pairs(llm, model["id"])] == [first, second]


def test_sources_come_in_order_and_the_cap_holds(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    # Traces are assessed in the order they were stored: the feedback ones first here.
    fed, fed_steps = _store(llm, [*REFUND_FIRST, {"role": "user", "content": "Why refund without checking?"}])
    spare, _ = _store(llm, CORRECTED)
    good, _ = _store(llm, REFUND_STEPS)
    bad, _ = _store(llm, REFUND_FIRST)
    _rate(llm, good, 1)
    _rate(llm, bad, -1)
    corrected, _ = _store(llm, REFUND_STEPS)
    answer = {"runId": corrected, "answer": "wrong", "shouldSay": "Let me refund that."}
    _ok(llm.client.post("/v1/corrections", json=answer, headers=llm.admin), 201)
    comment = _comment(llm, fed, fed_steps[2], "Look the order up first")
    scripted_llm.answer(
        _worse(comment, "order up first", {"tool": "lookup_order", "args": {"order_id": "1182"}}),
        {"better": "B", "rationale": "Looking up comes first."},
        _worse(fed_steps[5], "Why refund without checking?", "I'll check the order first."),
    )
    model = _model(llm, [fed, spare, good, bad, corrected], max_pairs=3)
    assert model["num_pairs"] == 2
    _work(llm)
    ready = _get(llm, model["id"])
    assert (ready["status"], ready["num_pairs"]) == ("ready", 3)
    assert [pair["source"] for pair in _pairs(llm, model["id"])] == ["rating", "correction", "feedback"]
    listed = _learning(llm, model["id"])["assessments"]
    assert [(a["step_index"], a["became_pair"], a["pair_position"]) for a in listed] == [
        (2, True, 2),
        (4, False, None),
    ]
    assert listed[1]["skipped_reason"] == "over max_pairs: the model already has 3 pairs"
    # Once the pairs waiting fill the model, later traces are not asked about.
    assert len(scripted_llm.requests) == 3
    assert ready["metrics"]["feedback"]["stopped_at_max_pairs"] is True


def test_the_api_key_is_sent_and_never_shown(
    llm: Harness, scripted_llm: ScriptedLLM, database_url: str
) -> None:
    key = "sk-scripted-secret-0123456789"
    settings = _llm_settings(database_url, scripted_llm.url, llm_api_key=key)
    assert key not in repr(settings)
    runs = [_store(llm, CORRECTED) for _ in range(2)]
    for _, steps in runs:
        scripted_llm.answer(NONE, _worse(steps[5], "I asked for a refund", BETTER))
    model = _model(llm, [trace_id for trace_id, _ in runs])
    _work(llm, settings)
    assert {request.headers["Authorization"] for request in scripted_llm.requests} == {f"Bearer {key}"}
    shown = [
        llm.client.get(f"{RM}/reward-models/{model['id']}{part}", headers=llm.admin).text
        for part in ("", "/learning", "/pairs")
    ]
    assert json.loads(shown[0])["status"] == "ready"
    for text in shown:
        assert key not in text

    # A server that echoes the key in a refusal: the model fails with the reason, the key hidden.
    refused_run, _ = _store(llm, CORRECTED)
    scripted_llm.answer(Status(401, f'{{"error": "Incorrect API key provided: {key}"}}'))
    refused = _model(llm, [refused_run])
    _work(llm, settings)
    failed = _get(llm, refused["id"])
    assert failed["error"] == (
        "Feedback-derived alternatives failed: the LLM endpoint refused the request (401): "
        '{"error": "Incorrect API key provided: [the API key]"}'
    )
    with llm.db.read() as session:
        for error, result in session.execute(select(Job.error, Job.result)).all():
            assert key not in f"{error}{result}"


def test_the_client_reads_endpoint_failures_as_retry_or_refusal(scripted_llm: ScriptedLLM) -> None:
    chat = OpenAICompatibleChat(scripted_llm.url, MODEL, timeout=5)
    scripted_llm.answer({"ok": True})
    assert json.loads(chat.complete([{"role": "user", "content": "hi"}])) == {"ok": True}
    scripted_llm.answer(Status(200, '{"choices": []}'))
    with pytest.raises(
        ChatRefused, match=r"^the LLM endpoint's answer is not a chat completion: \{\"choices\": \[\]\}$"
    ):
        chat.complete([{"role": "user", "content": "hi"}])
    scripted_llm.answer(Status(200, '{"choices": [{"message": {"content": null}}]}'))
    with pytest.raises(ChatRefused, match="has no text"):
        chat.complete([{"role": "user", "content": "hi"}])
    scripted_llm.answer(Status(404, "x" * 300))
    with pytest.raises(ChatRefused, match=r"\(404\): x{200}…$"):
        chat.complete([{"role": "user", "content": "hi"}])
    # Nothing listens: a transport failure is worth trying again.
    with (
        socket_closed() as url,
        pytest.raises(ChatUnavailable, match=r"^the LLM endpoint could not be reached: "),
    ):
        OpenAICompatibleChat(url, MODEL, timeout=5).complete([{"role": "user", "content": "hi"}])
    assert scripted_llm.requests[0].body["messages"] == [{"role": "user", "content": "hi"}]


class socket_closed:  # noqa: N801 - used as a context manager, like a function
    """The URL of a loopback port nothing listens on, for the length of the block."""

    def __enter__(self) -> str:
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


def test_an_ai_judgment_cites_the_action_and_the_client_lists_the_learning(
    live_server: LiveServer, scripted_llm: ScriptedLLM, db: Database, database_url: str
) -> None:
    lines = [
        {
            "id": f"ticket-{i}",
            "steps": [
                {"role": "system", "content": "Be kind."},
                {"role": "user", "content": f"Refund order {i}?"},
                {"role": "assistant", "content": f"Sure! I've issued a full refund for order {i}."},
            ],
        }
        for i in range(3)
    ]
    with live_server.client() as client:
        trace_ids = client.traces.import_text("\n".join(json.dumps(line) for line in lines))["trace_ids"]
        for trace_id, rating in zip(trace_ids, (1, -1, -1), strict=True):
            client.annotations.create(trace_id, rating=rating)
        model = client.reward_models.create("judged", trace_ids)
        answer_step = client.traces.get(trace_ids[0])["steps"][2]["id"]
        judged = _worse(
            answer_step, "issued a full refund", "Let me check the refund policy first.", basis="ai_judgment"
        )

        def judge(request: Recorded) -> dict[str, Any]:
            # Traces imported together are assessed in the order of their ids: answer by what is asked.
            return judged if f"id {answer_step}" in request.prompt else NONE

        scripted_llm.answer(judge, judge, judge)
        worker = JobWorker(db, job_kinds(_llm_settings(database_url, scripted_llm.url)))
        assert worker.run_once()
        learned = list(client.reward_models.learning(model["id"], page_size=2))
        ready = client.reward_models.get(model["id"])
    assert (ready["status"], ready["num_pairs"]) == ("ready", 3)
    assert sorted((a["trace_id"], a["step_index"], a["verdict"]) for a in learned) == sorted(
        [
            (trace_ids[0], 2, "original_worse"),
            (trace_ids[1], 2, "no_preference"),
            (trace_ids[2], 2, "no_preference"),
        ]
    )
    [pair] = [a for a in learned if a["became_pair"]]
    assert (pair["basis"], pair["source_kind"], pair["source_id"], pair["pair_position"]) == (
        "ai_judgment",
        "action",
        answer_step,
        2,
    )


def test_the_endpoint_answer_may_be_fenced(llm: Harness, scripted_llm: ScriptedLLM) -> None:
    trace_id, steps = _store(llm, CORRECTED)
    fenced = "```json\n" + json.dumps(_worse(steps[5], "I asked for a refund", BETTER)) + "\n```"
    scripted_llm.answer(NONE, fenced)
    model = _model(llm, [trace_id])
    _work(llm)
    assert _learning(llm, model["id"])["assessments"][1]["became_pair"] is True


def test_the_endpoint_url_is_the_base_url_and_chat_completions() -> None:
    """A trailing slash on the base URL doesn't double: any OpenAI-compatible base URL works as given."""

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/base/chat/completions"
        return httpx.Response(200, json={"choices": [{"message": {"content": "fine"}}]})

    chat = OpenAICompatibleChat("http://llm.invalid/base/", MODEL, transport=httpx.MockTransport(handler))
    assert chat.complete([{"role": "user", "content": "hi"}]) == "fine"


def test_the_llm_settings_reach_server_processes_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """`redline serve --workers N` hands its settings to the processes it starts as REDLINE_* variables:
    the key goes as itself, not as its masked form."""
    settings = Settings(
        database_url="sqlite:///elsewhere.db",
        llm_base_url="http://127.0.0.1:9/v1",
        llm_model=MODEL,
        llm_api_key="sk-whole-key-0123456789",
        llm_timeout_seconds=7.5,
    )
    environment = serving.settings_environment(settings)
    assert environment["REDLINE_LLM_API_KEY"] == "sk-whole-key-0123456789"
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    again = Settings()
    assert again == settings
    assert again.llm_configured
    assert "sk-whole-key" not in repr(again)


def test_traces_are_assessed_several_at_once_and_kept_in_trace_order(
    llm: Harness, scripted_llm: ScriptedLLM, database_url: str
) -> None:
    """At REDLINE_LLM_CONCURRENCY 3 the endpoint has up to three requests open at once, and what is
    stored — assessments, their positions, the pairs — is what one at a time stores."""
    stored = [_store(llm, CORRECTED) for _ in range(6)]
    open_now = 0
    most_open = 0
    counting = threading.Lock()

    def judge(request: Recorded) -> dict[str, Any]:
        nonlocal open_now, most_open
        with counting:
            open_now += 1
            most_open = max(most_open, open_now)
        # Slower answers for the earlier traces, so the later ones finish first.
        position = next(
            i
            for i, (_, steps) in enumerate(stored)
            if f"id {steps[2]}" in request.prompt or f"id {steps[4]}" in request.prompt
        )
        time.sleep(0.05 * (6 - position))
        with counting:
            open_now -= 1
        steps = stored[position][1]
        if f"id {steps[4]}" in request.prompt and position % 2 == 0:
            return _worse(steps[5], "I asked for a refund", f"{BETTER} ({position})")
        return NONE

    def learned(concurrency: int) -> tuple[list[tuple[str, int, str]], list[tuple[str, str]]]:
        scripted_llm.answer(*[judge] * 12)
        model = _model(llm, [trace_id for trace_id, _ in stored])
        assert _work(llm, _llm_settings(database_url, scripted_llm.url, llm_concurrency=concurrency)) == 1
        assert _get(llm, model["id"])["status"] == "ready"
        listed = [
            (a["trace_id"], a["step_index"], a["verdict"]) for a in _learning(llm, model["id"])["assessments"]
        ]
        pairs = [(p["source_ids"]["chosen"]["trace_id"], p["chosen"]) for p in _pairs(llm, model["id"])]
        return listed, pairs

    at_once = learned(3)
    assert most_open == 3
    most_open = 0
    one_by_one = learned(1)
    assert most_open == 1
    assert at_once == one_by_one
    listed, pairs = at_once
    assert [trace_id for trace_id, _, _ in listed] == [trace_id for trace_id, _ in stored for _ in (2, 4)]
    assert [trace_id for trace_id, _ in pairs] == [stored[i][0] for i in (0, 2, 4)]


def test_a_trace_longer_than_a_request_may_be_is_assessed_within_the_budget(
    llm: Harness, scripted_llm: ScriptedLLM, database_url: str
) -> None:
    """A tool that returned a whole document: the requests stay near REDLINE_LLM_PROMPT_CHARACTERS, the
    document cut in the middle, and the correction after the answer still makes its pair."""
    steps = copy.deepcopy(CORRECTED)
    steps[3]["content"] = json.dumps({"status": "delivered", "log": "x" * 200_000})
    trace_id, step_ids = _store(llm, steps)
    scripted_llm.answer(NONE, _worse(step_ids[5], "I asked for a refund", BETTER))
    model = _model(llm, [trace_id])
    assert _work(llm, _llm_settings(database_url, scripted_llm.url, llm_prompt_characters=8_000)) == 1
    assert _get(llm, model["id"])["num_pairs"] == 1
    for request in scripted_llm.requests:
        assert len(request.prompt) < 9_000
    assert re.search(r"\[… \d+ characters left out …\]", scripted_llm.requests[1].prompt)
    # The training text is the whole stored step, not the cut one.
    [pair] = _pairs(llm, model["id"])
    assert "x" * 200_000 in pair["rejected"]
