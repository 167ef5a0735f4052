"""Part 7: two experiments of the dataset of refunds that went wrong, the support agent at v1 and at v2,
reviewed and compared as people do it in the console.

Each experiment has a result for every datapoint, its run sent inline as a harness sends it: the
version's system prompt, the customer's message (the datapoint's inputs), the agent's tool calls with
their results and its answer, and a model span per call with its token usage and list-price cost, so
the results' figures show. Two evaluators score each result: `follows_refund_policy` (boolean: the
order looked up, the policy checked, the order's amount refunded) and `tone` (a number from 1 to 5).
The facts of each case (what the order cost, whether it can be refunded) are those the datapoint's
conversation holds in its tool results.

v1 repeats most of the mistakes the dataset holds and once times out (an errored result); v2 follows
the policy on most datapoints but not all, slipping at least once where v1 did not. Then the reviewers
review most of v1's results with the demo's review keys (`review`), each as themselves, as the
console's review screen saves them; and the leads record a few preferences between the two
experiments' outputs, where they differ first. Both experiments are finished.

Each experiment is made, filled in and reviewed (v1) or compared (v2) in one transaction, skipped whole
when the project has an experiment of its name. Who does what is drawn from seeded generators, one for
the plan and one for each experiment, so the same dataset gets the same experiments.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy.orm import Session

from redline.datasets import service as datasets
from redline.datasets.models import Datapoint
from redline.db import Database
from redline.db.id_pages import MAX_LIMIT, every_item, with_items
from redline.demo.dataset import DATASET, demo_dataset
from redline.demo.people import People
from redline.demo.review import ensure_keys
from redline.demo.runs import DemoRun
from redline.experiments import preferences, results
from redline.experiments import service as experiments
from redline.experiments.models import Experiment
from redline.experiments.schemas import (
    ExperimentIn,
    InlineRunIn,
    PreferenceIn,
    ResultAnnotationsIn,
    ResultIn,
)
from redline.identity.service import Actor
from redline.ingest.experiment_results import record_results
from redline.reviews.schemas import EvaluationIn, ValueIn
from redline.sentences import counted
from redline.traces.demo import AGENT, MODEL, demo_runs
from redline.traces.prices import price_table
from redline.traces.schemas import RunStatus, SpanIn, StepIn

OLDER, NEWER = "v1", "v2"
NAMES = {OLDER: "Refund replay · v1", NEWER: "Refund replay · v2"}
SEED = 4
# How often each version gets a case right: v1 repeats most of the dataset's mistakes, v2 few.
RIGHT_SHARE = {OLDER: 0.3, NEWER: 0.9}
# The last few of v1's results (at most a quarter) are left for whoever opens its review screen.
LEFT = 3
PREFERENCES = 5
# When each experiment ran, before the demo's day starts: v1 first.
RAN_BEFORE = {OLDER: timedelta(hours=3), NEWER: timedelta(hours=2)}
BETWEEN_CASES = timedelta(seconds=40)
# Tool schemas and the system prompt the model reads on every call, in tokens (as `traces.demo`).
PROMPT_OVERHEAD = 240
TIMEOUT = "APITimeoutError: the model didn't answer within 30 s."
TIMEOUT_AFTER = timedelta(seconds=30)
WITHIN_WINDOW = "it is within the 30-day refund window"
FINAL_SALE = "the item is final sale"
# Tone as the evaluator scores it, by outcome: a careful answer reads better than a hasty one.
TONE = {"right": (3.9, 4.9), "wrong": (3.2, 4.4)}
_ASK_ORDER = "Happy to help! Could you share your order number? It starts with AC-."
_GIVE_ORDER = "It's {order}."
_REFUNDED = (
    "I've refunded {amount} for order {order}. It will be back on your original payment method within "
    "5-7 business days. Anything else I can help with?"
)
_DECLINED = (
    "I'm sorry, but I can't refund order {order}: {policy}. If something is wrong with the item, tell me "
    "and I'll see what else we can do."
)
_RIGHT_NOTES = ("Looked the order up and checked the policy before acting.", "Clear and short.", None)
_TIMED_OUT_NOTE = "The model timed out: the customer got no answer at all."

Outcome = Literal["right", "wrong", "errored"]
# How good an outcome is, to say which of two outputs a person prefers.
_RANK: dict[Outcome, int] = {"errored": 0, "wrong": 1, "right": 2}


@dataclass(frozen=True)
class _Case:
    """One datapoint as the experiments play it: the customer's message and the facts its conversation's
    tool results give, and what the run it was made from refunded (its mistake), if it refunded."""

    datapoint_id: uuid.UUID
    run: DemoRun
    message: str
    order: dict[str, Any]
    refundable: bool
    policy: str
    refunded: float | None
    reason: str

    @property
    def amount(self) -> float:
        return float(self.order["amount"])

    def mistake(self) -> str:
        """What a wrong answer to this case gets wrong, as the evaluator explains it."""
        if self.run.flaw == "no_lookup":
            return "Refunded without calling lookup_order: the amount was the customer's word."
        if not self.refundable:
            return f"Refunded although the policy says no: {self.policy}."
        return f"Refunded {_money(self.refunded or self.amount)} for an order of {_money(self.amount)}."


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def _tool_calls(messages: Sequence[Mapping[str, Any]] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The conversation's tool calls: each tool's arguments and its result, by tool name."""
    names: dict[str, str] = {}
    arguments: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for message in messages or ():
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
            arguments[call["function"]["name"]] = json.loads(call["function"]["arguments"])
        tool = names.get(message.get("tool_call_id") or "")
        if message["role"] == "tool" and tool is not None:
            answers[tool] = json.loads(message["content"])
    return arguments, answers


def _case(datapoint: Datapoint, run: DemoRun) -> _Case | None:
    """The datapoint as a case; None when it says neither what the customer asked nor what the order
    cost (not one the demo's dataset made)."""
    arguments, answers = _tool_calls(datapoint.messages)
    refund, lookup, policy = (
        arguments.get("issue_refund"),
        answers.get("lookup_order"),
        answers.get("check_refund_policy"),
    )
    amount = lookup["amount"] if lookup else refund["amount"] if refund else None
    message = (datapoint.inputs or {}).get("message")
    if amount is None or not isinstance(message, str):
        return None
    # Without a policy check, what the run did says it: it declined only what can't be refunded.
    refundable = bool(policy["refundable"]) if policy else run.flaw != "non_refundable" and refund is not None
    return _Case(
        datapoint_id=datapoint.id,
        run=run,
        message=message,
        order=lookup
        or {"order_id": run.order_id, "status": "delivered", "amount": amount, "currency": "USD"},
        refundable=refundable,
        policy=policy["reason"] if policy else WITHIN_WINDOW if refundable else FINAL_SALE,
        refunded=refund["amount"] if refund else None,
        reason=refund["reason"] if refund else "customer_request",
    )


def _cases(session: Session, operator: Actor, dataset_id: uuid.UUID, runs: Sequence[DemoRun]) -> list[_Case]:
    """The dataset's datapoints made from demo runs, as cases, in the order of those runs."""
    by_id = {run.id: run for run in runs}
    found = [
        case
        for datapoint in every_item(
            lambda after: with_items(
                datasets.list_datapoints(session, operator, dataset_id, limit=MAX_LIMIT, starting_after=after)
            )
        )
        if datapoint.trace_id in by_id and (case := _case(datapoint, by_id[datapoint.trace_id])) is not None
    ]
    return sorted(found, key=lambda case: case.run.external_id)


def _plan(count: int) -> dict[str, list[Outcome]]:
    """Each version's outcome on each case, drawn case by case (so a case's outcomes don't depend on how
    many follow it). v1 errs once; v2 does worse than v1 at least once, so the comparison has both sides
    to show."""
    rng = random.Random(SEED)
    planned: dict[str, list[Outcome]] = {OLDER: [], NEWER: []}
    for _ in range(count):
        for version in (OLDER, NEWER):
            planned[version].append("right" if rng.random() < RIGHT_SHARE[version] else "wrong")
    if count:
        planned[OLDER][rng.randrange(count)] = "errored"
    older_better = [i for i in range(count) if _RANK[planned[OLDER][i]] > _RANK[planned[NEWER][i]]]
    older_right = [i for i in range(count) if planned[OLDER][i] == "right"]
    if not older_better and older_right:
        planned[NEWER][rng.choice(older_right)] = "wrong"
    return planned


# ------------------------------------------------------------------------------------------------- runs


@dataclass
class _Conversation:
    """One run as the harness records it: its steps, and a model span per call with its usage and cost."""

    clock: datetime
    rng: random.Random
    steps: list[StepIn] = field(default_factory=list)
    spans: list[SpanIn] = field(default_factory=list)

    def _span(self, took: timedelta, attributes: dict[str, Any]) -> None:
        start, self.clock = self.clock, self.clock + took
        self.spans.append(
            SpanIn(
                span_id=f"llm-{len(self.spans) + 1}",
                kind="llm",
                name=f"chat {MODEL}",
                attributes={"model": MODEL, **attributes},
                started_at=start,
                ended_at=self.clock,
            )
        )

    def _model_call(self, wrote: str) -> None:
        """A model call that read the conversation so far and wrote `wrote` (about four characters a
        token), priced at the model's list price."""
        read = PROMPT_OVERHEAD + sum(
            (len(step.content) + len(json.dumps(step.tool_input or {}))) // 4 for step in self.steps
        )
        written = max(1, len(wrote) // 4)
        usage: dict[str, Any] = {"usage": {"prompt_tokens": read, "completion_tokens": written}}
        cost = price_table().cost(MODEL, read, written)
        if cost is not None:
            usage["cost"] = round(cost, 8)
        self._span(timedelta(seconds=self.rng.uniform(0.4, 0.9) + written * 0.015), usage)

    def hear(self, role: Literal["system", "user"], text: str) -> None:
        self.steps.append(StepIn(role=role, content=text))

    def say(self, text: str) -> None:
        self._model_call(text)
        self.steps.append(StepIn(role="assistant", content=text))

    def call(self, tool: str, arguments: dict[str, Any], answer: dict[str, Any]) -> None:
        call_id = f"call_{self.rng.getrandbits(64):016x}"
        self._model_call(json.dumps(arguments))
        self.steps.append(
            StepIn(role="assistant", tool_name=tool, tool_input=arguments, tool_call_id=call_id)
        )
        self.clock += timedelta(seconds=self.rng.uniform(0.05, 0.6))
        self.steps.append(
            StepIn(role="tool", content=json.dumps(answer), tool_name=tool, tool_call_id=call_id)
        )

    def time_out(self) -> None:
        self._span(TIMEOUT_AFTER, {"error": TIMEOUT})


def _answer(talk: _Conversation, case: _Case, version: str, outcome: Outcome) -> str:
    """Play the agent's part: right, it looks the order up, checks the policy, then refunds what the
    order cost or declines; wrong, it makes the case's mistake (v2 still checks the policy first)."""
    order = case.run.order_id
    if order not in case.message:
        talk.say(_ASK_ORDER)
        talk.hear("user", _GIVE_ORDER.format(order=order))
    right = outcome == "right"
    if right or case.run.flaw != "no_lookup":
        talk.call("lookup_order", {"order_id": order}, case.order)
    if right or version == NEWER:
        policy = {"order_id": order, "refundable": case.refundable, "window_days": 30, "reason": case.policy}
        talk.call("check_refund_policy", {"order_id": order}, policy)
    if right and not case.refundable:
        answer = _DECLINED.format(order=order, policy=case.policy)
    else:
        amount = case.amount if right else case.refunded or case.amount
        refund_id = f"rf_{talk.rng.getrandbits(40):010x}"
        talk.call(
            "issue_refund",
            {"order_id": order, "amount": amount, "reason": case.reason},
            {"refund_id": refund_id, "order_id": order, "amount": amount, "status": "issued"},
        )
        answer = _REFUNDED.format(amount=_money(amount), order=order)
    talk.say(answer)
    return answer


def _result(
    case: _Case, version: str, outcome: Outcome, prompt: str, started_at: datetime, rng: random.Random
) -> ResultIn:
    """The case's result as a harness sends it: its run inline and, unless it errored, the evaluators'."""
    talk = _Conversation(started_at, rng)
    talk.hear("system", prompt)
    talk.hear("user", case.message)
    status: RunStatus = "completed"
    output: dict[str, Any] | None = None
    evaluations: list[EvaluationIn] = []
    if outcome == "errored":
        talk.time_out()
        status = "failed"
    else:
        output = {"answer": _answer(talk, case, version, outcome)}
        right = outcome == "right"
        evaluations = [
            EvaluationIn(
                evaluator="follows_refund_policy",
                output_type="boolean",
                value=right,
                explanation=None if right else case.mistake(),
            ),
            EvaluationIn(evaluator="tone", output_type="number", value=round(rng.uniform(*TONE[outcome]), 1)),
        ]
    run = InlineRunIn(
        external_id=f"{case.run.external_id}-{version}-replay",
        title=case.run.title,
        status=status,
        output=output,
        metadata={"demo": True, "replay_of": case.run.external_id},
        started_at=started_at,
        ended_at=talk.clock + timedelta(seconds=rng.uniform(0.02, 0.2)),
        steps=talk.steps,
        spans=talk.spans,
    )
    return ResultIn(
        datapoint_id=str(case.datapoint_id),
        run=run,
        error=TIMEOUT if outcome == "errored" else None,
        evaluations=evaluations,
    )


# --------------------------------------------------------------------------------------- experiments


@dataclass(frozen=True)
class _Made:
    """What one experiment got: its results, how many errored and followed the policy, and what people
    said (reviews of it, preferences between it and the older one)."""

    version: str
    results: int
    errored: int
    followed: int
    reviewed: int = 0
    reviewers: int = 0
    preferred: int = 0


def _named(session: Session, operator: Actor, project_id: uuid.UUID) -> dict[str, Experiment]:
    """The project's experiments of the demo's names."""
    return {
        view.experiment.name: view.experiment
        for view in every_item(
            lambda after: experiments.list_experiments(
                session, operator, limit=MAX_LIMIT, starting_after=after, project_id=str(project_id)
            )
        )
        if view.experiment.name in NAMES.values()
    }


def _review_values(rng: random.Random, case: _Case, outcome: Outcome) -> list[ValueIn]:
    if outcome == "right":
        said: dict[str, Any] = {
            "resolution": "resolved",
            "helpfulness": rng.choice((4, 5, 5)),
            "review_note": rng.choice(_RIGHT_NOTES),
        }
    elif outcome == "wrong":
        said = {
            "resolution": rng.choice(("resolved", "partly resolved")),
            "helpfulness": rng.choice((2, 2, 3)),
            "review_note": case.mistake(),
        }
    else:
        said = {"resolution": "not resolved", "helpfulness": 1, "review_note": _TIMED_OUT_NOTE}
    return [ValueIn(key=key, value=value) for key, value in said.items() if value is not None]


def _preferences(
    session: Session,
    operator: Actor,
    crew: People,
    older: Experiment,
    newer: uuid.UUID,
    cases: Sequence[_Case],
    plan: Mapping[str, Sequence[Outcome]],
) -> int:
    """The leads' preferences between the older experiment's outputs (A) and the newer's (B), on the
    datapoints both have a result for, those where the two differ first. How many were recorded."""
    older_has = {
        view.result.datapoint_id
        for view in every_item(
            lambda after: results.list_results(
                session, operator, older.id, limit=MAX_LIMIT, starting_after=after
            )
        )
    }
    shared = [index for index, case in enumerate(cases) if case.datapoint_id in older_has]
    ordered = sorted(shared, key=lambda index: plan[OLDER][index] == plan[NEWER][index])[:PREFERENCES]
    for number, index in enumerate(sorted(ordered)):
        a, b = _RANK[plan[OLDER][index]], _RANK[plan[NEWER][index]]
        body = PreferenceIn(
            datapoint_id=str(cases[index].datapoint_id), choice="a" if a > b else "b" if b > a else "tie"
        )
        preferences.record_preference(session, crew.leads[number % len(crew.leads)], older.id, newer, body)
    return len(ordered)


def _make(
    db: Database,
    operator: Actor,
    project_id: uuid.UUID,
    dataset_id: uuid.UUID,
    version: str,
    cases: Sequence[_Case],
    plan: Mapping[str, Sequence[Outcome]],
    crew: People,
    start: datetime,
) -> _Made | None:
    """One experiment, its results, then v1's reviews or v2's preferences, in one transaction; None
    when the project has an experiment of its name."""
    rng = random.Random(SEED + (1 if version == OLDER else 2))
    prompts = {run.agent_version: run.steps[0].content for run in demo_runs(project_id, count=2)}
    outcomes = plan[version]
    began = start - RAN_BEFORE[version]
    sent = [
        _result(case, version, outcome, prompts[version], began + BETWEEN_CASES * index, rng)
        for index, (case, outcome) in enumerate(zip(cases, outcomes, strict=True))
    ]
    with db.write() as session:
        there = _named(session, operator, project_id)
        if NAMES[version] in there:
            return None
        body = ExperimentIn(
            display_name=NAMES[version],
            dataset_id=str(dataset_id),
            agent=AGENT,
            version=version,
            description=f"The support agent's {version} prompt replayed on every refund that went wrong.",
            metadata={"model": MODEL, "demo": True},
            human_review_ids=ensure_keys(session, operator, project_id),
        )
        experiment_id = experiments.create_experiment(session, operator, body).experiment.id
        recorded = record_results(session, operator, experiment_id, sent)
        experiments.finish_experiment(session, operator, experiment_id)
        made = _Made(
            version,
            results=len(recorded),
            errored=outcomes.count("errored"),
            followed=outcomes.count("right"),
        )
        if version == OLDER:
            reviewers: set[uuid.UUID | None] = set()
            reviewed = len(recorded) - min(LEFT, len(recorded) // 4)
            for view, case, outcome in zip(recorded[:reviewed], cases, outcomes, strict=False):
                reviewer = rng.choice(crew.reviewers)
                given = ResultAnnotationsIn(annotations=_review_values(rng, case, outcome))
                results.review_result(session, reviewer, experiment_id, view.result.id, given)
                reviewers.add(reviewer.principal_id)
            return replace(made, reviewed=reviewed, reviewers=len(reviewers))
        older = there.get(NAMES[OLDER])
        if older is None:
            return made
        preferred = _preferences(session, operator, crew, older, experiment_id, cases, plan)
        return replace(made, preferred=preferred)


def _said(name: str, made: _Made | None) -> str:
    if made is None:
        return f'"{name}" is already there, left as it is'
    errored = f" ({made.errored} errored)" if made.errored else ""
    clause = (
        f'"{name}" ({AGENT} {made.version}) follows the refund policy on {made.followed} of '
        f"{counted(made.results, 'datapoint')}{errored}"
    )
    if made.reviewed:
        left = made.results - made.reviewed
        clause += (
            f", {made.reviewed} reviewed by {counted(made.reviewers, 'reviewer')} and {left} left to review"
        )
    if made.preferred:
        clause += f", with {counted(made.preferred, 'preference')} between it and {OLDER}"
    return clause


def seed_experiments(
    db: Database,
    operator: Actor,
    project_id: uuid.UUID,
    runs: Sequence[DemoRun],
    crew: People,
    start: datetime,
) -> str:
    """The two experiments, each in its own transaction (v1 first: v2's preferences compare with it)."""
    with db.read() as session:
        dataset = demo_dataset(session, operator, project_id)
        if dataset is None:
            return f'Experiments: no dataset "{DATASET}" to run them on; none made.'
        dataset_id = dataset.id
        cases = _cases(session, operator, dataset_id, runs)
        there = _named(session, operator, project_id)
    if all(name in there for name in NAMES.values()):
        return f'Experiments: "{NAMES[OLDER]}" and "{NAMES[NEWER]}" are already there; left as they are.'
    if not cases:
        return f'Experiments: dataset "{DATASET}" has no datapoint to run; none made.'
    plan = _plan(len(cases))
    made = {
        version: _make(db, operator, project_id, dataset_id, version, cases, plan, crew, start)
        for version in (OLDER, NEWER)
    }
    said = "; ".join(_said(NAMES[version], made[version]) for version in (OLDER, NEWER))
    new = sum(made[version] is not None for version in (OLDER, NEWER))
    ran = "both ran" if new == 2 else "the new one ran"
    return f'Experiments: {said}; {ran} dataset "{DATASET}" and {"are" if new == 2 else "is"} finished.'
