"""Pairs from corrections (issue 7's second source), over HTTP on both stores: a wrong answer with what
it should have said pairs at the final answer; wrong decisions pair at the first rejected tool call
with the listed call in its place; nothing is invented where the correction doesn't say what to do;
replaced and removed corrections never feed training; ratings come first and the cap holds."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Harness

RM = "/api/v1/rm"
QUESTION = "user: I want a refund for order 1182"
LOOKUP = 'assistant → lookup_order({"order_id": "1182"})'
RESULT = 'tool: {"status": "delivered"}'
ANSWER = "assistant: Your order was delivered on May 3."


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _run(harness: Harness) -> str:
    run = _ok(harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin), 201)
    return str(run["id"])


def _correct(harness: Harness, run_id: str, **verdict: Any) -> str:
    made = _ok(
        harness.client.post("/v1/corrections", json={"runId": run_id, **verdict}, headers=harness.admin), 201
    )
    return str(made["id"])


def _pairs(harness: Harness, run_ids: list[str], **config: Any) -> list[dict[str, Any]]:
    body = {"name": "m", "trace_ids": run_ids, "training_config": config}
    model = _ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    pairs: list[dict[str, Any]] = _ok(
        harness.client.get(f"{RM}/reward-models/{model['id']}/pairs", headers=harness.admin)
    )["pairs"]
    return pairs


def _joined(*lines: str) -> str:
    return "\n\n".join(lines)


def test_a_wrong_answer_with_what_it_should_say_pairs_at_the_final_answer(harness: Harness) -> None:
    first, second = _run(harness), _run(harness)
    said = "Your order 1182 is refunded: $40 back to your card in 3 days."
    one = _correct(harness, first, answer="wrong", shouldSay=said)
    two = _correct(harness, second, answer="wrong", shouldSay="Sorry, that order can't be refunded.")
    pairs = _pairs(harness, [first, second])
    assert [pair["source_ids"]["correction_id"] for pair in pairs] == [one, two]
    pair = pairs[0]
    assert (pair["granularity"], pair["source"]) == ("step", "correction")
    assert pair["chosen"] == _joined(QUESTION, LOOKUP, RESULT, f"assistant: {said}")
    assert pair["rejected"] == _joined(QUESTION, LOOKUP, RESULT, ANSWER)
    assert pair["source_ids"]["chosen"]["trace_id"] == first


@pytest.mark.parametrize(
    ("verdict", "chosen_call"),
    [
        # A tool it must not call, with the call it should have made instead.
        (
            {
                "mustNotCall": ["lookup_order"],
                "shouldCall": [{"tool": "check_policy", "args": {"order_id": "1182"}}],
            },
            'assistant → check_policy({"order_id": "1182"})',
        ),
        # The right tool with the wrong arguments departs from the listed call of that tool.
        (
            {"shouldCall": [{"tool": "lookup_order", "args": {"order_id": "9999"}}]},
            'assistant → lookup_order({"order_id": "9999"})',
        ),
    ],
)
def test_wrong_decisions_pair_at_the_first_rejected_call(
    harness: Harness, verdict: dict[str, Any], chosen_call: str
) -> None:
    run = _run(harness)
    # A second correction of the same run (the answer) is another pair, after this one.
    _correct(harness, run, decisions="wrong", **verdict)
    another = _run(harness)
    _correct(harness, another, answer="wrong", shouldSay="Let me check.")
    pair = _pairs(harness, [run, another])[0]
    assert pair["source"] == "correction"
    assert pair["chosen"] == _joined(QUESTION, chosen_call)
    assert pair["rejected"] == _joined(QUESTION, LOOKUP)


def test_nothing_is_invented_where_a_correction_doesnt_say_what_to_do(harness: Harness) -> None:
    runs = [_run(harness) for _ in range(4)]
    # A wrong answer with only why; a banned call with nothing listed in its place; a call missing
    # while every call made matches; and a correction that marks the run right.
    _correct(harness, runs[0], answer="wrong", why="Not what was asked.")
    _correct(harness, runs[1], decisions="wrong", mustNotCall=["lookup_order"])
    _correct(
        harness,
        runs[2],
        decisions="wrong",
        shouldCall=[{"tool": "lookup_order", "args": {}}, {"tool": "issue_refund"}],
    )
    _correct(harness, runs[3], answer="right")
    answer = harness.client.post(
        f"{RM}/reward-models", json={"name": "m", "trace_ids": runs}, headers=harness.admin
    )
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(
        "training needs at least 2 usable pairs; the selected traces give 0"
    )


def test_replaced_and_removed_corrections_never_feed_training(harness: Harness) -> None:
    kept, removed = _run(harness), _run(harness)
    _correct(harness, kept, answer="wrong", shouldSay="first word")
    live = _correct(harness, kept, answer="wrong", shouldSay="second word")
    gone = _correct(harness, removed, answer="wrong", shouldSay="removed word")
    _ok(harness.client.post(f"/v1/corrections/{gone}/unregister", headers=harness.admin))
    other = _run(harness)
    another = _correct(harness, other, answer="wrong", shouldSay="third word")
    pairs = _pairs(harness, [kept, removed, other])
    assert [pair["source_ids"]["correction_id"] for pair in pairs] == [live, another]
    assert pairs[0]["chosen"].endswith("assistant: second word")


def test_rating_pairs_come_first_and_the_cap_holds_for_both(harness: Harness) -> None:
    rated = [_run(harness) for _ in range(3)]
    for run, rating in zip(rated, (1, -1, -1), strict=True):
        _ok(
            harness.client.post(
                f"{RM}/traces/{run}/annotations", json={"rating": rating}, headers=harness.admin
            )
        )
    corrected = _run(harness)
    _correct(harness, corrected, answer="wrong", shouldSay="Better.")
    pairs = _pairs(harness, [*rated, corrected])
    assert [pair["source"] for pair in pairs] == ["rating", "rating", "correction"]
    capped = _pairs(harness, [*rated, corrected], max_pairs=2)
    assert [pair["source"] for pair in capped] == ["rating", "rating"]


def _model(harness: Harness, run_ids: list[str], **config: Any) -> dict[str, Any]:
    body = {"name": "m", "trace_ids": run_ids, "training_config": config}
    made: dict[str, Any] = _ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    return made


def test_a_pair_names_its_corrector_and_the_rules_judge_how_far_the_runs_correctors_agree(
    harness: Harness,
) -> None:
    """Three runs: one corrected wrong by one person alone, one wrong by two, one wrong by two of three
    (the third says right). Each wrong answer gives a pair naming who said it."""
    alone, agreed, split = _run(harness), _run(harness), _run(harness)
    people = [harness.caller(name, role="write") for name in ("ana", "ben", "cy")]
    fix = {"answer": "wrong", "shouldSay": "Sorry, that order can't be refunded."}

    def correct(run_id: str, who: dict[str, str], verdict: dict[str, Any]) -> dict[str, Any]:
        body = {"runId": run_id, **verdict}
        made: dict[str, Any] = _ok(harness.client.post("/v1/corrections", json=body, headers=who), 201)
        return made

    first = correct(alone, people[0], fix)
    for who in people[:2]:
        correct(agreed, who, fix)
        correct(split, who, fix)
    correct(split, people[2], {"answer": "right"})
    runs = [alone, agreed, split]
    pairs = _pairs(harness, runs)
    assert len(pairs) == 5
    assert pairs[0]["source_ids"] == {
        "correction_id": first["id"],
        "made_by": first["madeBy"],
        "participant_id": None,
        "corrector_group_id": None,
        "chosen": pairs[0]["source_ids"]["chosen"],
        "rejected": pairs[0]["source_ids"]["chosen"],
    }
    assert first["madeBy"]["kind"] == "user"
    # A correction pair is two answers to the run's own context: same-context, by making.
    assert {(pair["kind"], pair["context_id"][:7]) for pair in pairs} == {("same_context", "prefix:")}

    def built(pairs: int) -> dict[str, int]:
        return {"same_context": pairs, "cross": 0, "preference": 0}

    settled = _model(harness, runs, adjudicated_only=True)
    assert (settled["num_pairs"], settled["metrics"]) == (
        2,
        {"pairs_by_kind": built(2), "pairs_removed": {"adjudicated_only": 3}},
    )
    agreeing = _model(harness, runs, min_agreement=0.75)
    assert (agreeing["num_pairs"], agreeing["metrics"]) == (
        3,
        {"pairs_by_kind": built(3), "pairs_removed": {"min_agreement": 2}},
    )
    both = _model(harness, runs, adjudicated_only=True, min_agreement=0.75)
    assert both["metrics"]["pairs_removed"] == {"adjudicated_only": 3, "min_agreement": 0}
