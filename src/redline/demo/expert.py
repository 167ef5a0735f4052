"""Part 3: a queue rule fills the expert queue with the support agent's completed runs, and the demo's
people correct many of them, so the rule's results and trend have something to say.

The rule takes anyone's correction, so an item closes at its run's first correction, and the runs
nobody corrected yet wait for whoever opens the queue (the admin too). Reviewers correct about half the
runs, the leads one in five; reviewers sometimes miss a mistake or find fault in a good answer, so the
two groups don't always agree. A few runs nobody corrected are dismissed as test conversations. With
about 50 reviewer and 20 lead corrections per agent version, each version's 95% range is narrow enough
that the better prompt (v2) is told apart from v1 (docs/results-trends.md); fewer corrections would
make the ranges overlap, more would cost the demo time (each is saved through the corrections service,
~17 ms).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence

from redline.corrections.schemas import CorrectionIn, ShouldCall
from redline.db import Database
from redline.demo.people import People
from redline.demo.runs import DemoRun, completed
from redline.identity.service import Actor
from redline.queues.expert import correcting
from redline.queues.expert import engine as expert_queue
from redline.queues.expert import rules as expert_rules

RULE = "Support runs"
SEED = 17
REVIEWED_SHARE = 0.55
LEAD_SHARE = 0.2
# How often a reviewer gets a run wrong: misses a mistake, or faults a good answer.
REVIEWER_SLIPS = 0.08
DISMISSED = 3
DISMISS_REASON = "A test conversation from QA, not a customer."

# What a person says is wrong with each kind of bad run (`traces.demo` flaws), beyond its order id.
_WHY = {
    "non_refundable": "The item is final sale: the policy check says no refund, and it refunded anyway.",
    "wrong_amount": "It refunded a different amount from what the order cost.",
    "hallucinated_date": "It gave a delivery date that no tool returned.",
    "repeated_question": "It asked for the order number again after the customer had given it.",
    "rude": "Rude or off-topic: it never answered what the customer asked.",
    None: "The tool failed and the customer was left without an answer.",
}
_NITPICK = "Too long for a simple question; the customer had to read three paragraphs."


def _wrong(run: DemoRun, why: str | None = None) -> CorrectionIn:
    """A correction saying what went wrong with a bad run, as a support person would write it."""
    if run.flaw == "no_lookup":
        return CorrectionIn(
            run_id=run.id,
            decisions="wrong",
            should_call=[ShouldCall(tool="lookup_order", args={"order_id": run.order_id})],
            why=why or "It refunded without looking the order up: the amount was the customer's word.",
        )
    if run.flaw == "non_refundable":
        return CorrectionIn(
            run_id=run.id, decisions="wrong", must_not_call=["issue_refund"], why=why or _WHY[run.flaw]
        )
    return CorrectionIn(run_id=run.id, answer="wrong", why=why or _WHY.get(run.flaw, _WHY[None]))


def _right(run: DemoRun) -> CorrectionIn:
    return CorrectionIn(run_id=run.id, decisions="right", answer="right")


def _reviewers_word(rng: random.Random, run: DemoRun) -> CorrectionIn:
    if rng.random() < REVIEWER_SLIPS:
        return _right(run) if not run.good else _wrong(run, _NITPICK)
    return _right(run) if run.good else _wrong(run)


def _correct(actor: Actor, group_id: uuid.UUID, body: CorrectionIn) -> tuple[Actor, CorrectionIn]:
    return actor, body.model_copy(update={"corrector_group_id": group_id})


def plan(runs: Sequence[DemoRun], crew: People) -> list[tuple[Actor, CorrectionIn]]:
    """Who corrects which run and what they say, drawn from one seeded generator."""
    rng = random.Random(SEED)
    planned = []
    for run in completed(runs):
        reviewer, lead = rng.choice(crew.reviewers), rng.choice(crew.leads)
        if rng.random() < REVIEWED_SHARE:
            planned.append(_correct(reviewer, crew.reviewers_group, _reviewers_word(rng, run)))
        if rng.random() < LEAD_SHARE:
            planned.append(_correct(lead, crew.leads_group, _right(run) if run.good else _wrong(run)))
    return planned


def seed_expert_queue(
    db: Database, operator: Actor, project_id: uuid.UUID, runs: Sequence[DemoRun], crew: People
) -> str:
    """The rule, its queue and the corrections, in one transaction; skipped when the rule exists."""
    with db.write() as session:
        there = expert_rules.list_rules(session, operator, project_id, limit=100, search=RULE).items
        if any(view.rule.name == RULE for view in there):
            return f'Expert queue: rule "{RULE}" is already there; left as it is.'
        agents = sorted({run.agent_id for run in runs if run.agent_id is not None}, key=str)
        rule = expert_rules.create_rule(
            session,
            operator,
            project_id,
            {
                "name": RULE,
                "when": {"agentIds": [str(agent) for agent in agents]},
            },
        ).rule
        # Every demo run, however long ago the demo's `now` put them.
        since = min((run.started_at for run in runs), default=None)
        queued = expert_rules.queue_recent(
            session, operator, project_id, rule.rule_id, last=None, since=since
        ).queued
        planned = plan(runs, crew)
        for actor, body in planned:
            correcting.create(session, actor, body)
        corrected = {body.run_id for _, body in planned}
        untouched = [run for run in completed(runs) if run.id not in corrected]
        for run in untouched[:DISMISSED]:
            expert_queue.dismiss(session, crew.leads[0], project_id, run.id, DISMISS_REASON)
        dismissed = min(DISMISSED, len(untouched))
    people = len({actor.principal_id for actor, _ in planned})
    waiting = queued - len(corrected) - dismissed
    return (
        f'Expert queue: rule "{RULE}" queued {queued} runs; {len(planned)} corrections by {people} people '
        f"in 2 groups closed {len(corrected)} of them, {dismissed} were dismissed and {waiting} wait for "
        "a correction."
    )
