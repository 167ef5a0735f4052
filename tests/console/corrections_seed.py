"""Data the Corrections pages' tests share, seeded over the corrections surface as its clients would
(plain HTTP with the admin's token), after the document's sample: the expert and bot corrector groups,
Dev-Echo Agent's runs queued by the Everything and Support sample rules, a bot's runs queued by Bot
review, and corrections sorted every way To fix shows.

Each helper takes an httpx-like client carrying the admin's token: `reviews_http(server.url)` on a live
server, `Authorized(harness.client, harness.admin)` in-process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.console.queue_seed import post_ok
from tests.samples import REFUND_STEPS, make_run

ECHO = "Dev-Echo Agent"
BOT_AGENT = "Bot-Check Agent"
FLOW = "Refund flow"


@dataclass
class QueueSeed:
    """Groups, rules (by name) and the queued runs, oldest queued first."""

    expert_group: str
    bot_group: str
    rules: dict[str, str]
    echo_runs: list[str]
    bot_runs: list[str]


def asking(question: str) -> dict[str, Any]:
    """A run's fields for one whose customer asked `question`: its input and its first user step."""
    steps = [dict(step) for step in REFUND_STEPS]
    steps[1]["content"] = question
    return {"input": {"message": question}, "steps": steps}


def question(number: int) -> str:
    """The customer's question in the `number`th queued run: each run asks its own, the first at length."""
    if number == 0:
        return (
            "Hello, my order 1180 was due on Monday and the tracking page has not moved since Friday: "
            "where is it, and can I get a refund?"
        )
    return f"Can I change the delivery address on order {1180 + number}?"


def run(http: Any, project_id: str, **fields: Any) -> dict[str, Any]:
    """A run of the project (Dev-Echo Agent 1.0.0, completed unless `fields` say otherwise)."""
    made: dict[str, Any] = post_ok(
        http, "/v1/runs", make_run(project_id, **{"agent": ECHO, "agentVersion": "1.0.0", **fields})
    )
    return made


def agent_id(http: Any, project_id: str, name: str) -> str:
    """The agent `name`, made by a run still running (one no rule takes)."""
    made: str = run(http, project_id, agent=name, status="running")["agentId"]
    return made


def group(http: Any, project_id: str, name: str, kinds: list[str], weight: float) -> str:
    body = {
        "scope": {"kind": "project", "projectId": project_id},
        "name": name,
        "weight": weight,
        "assertableBy": {"principalKinds": kinds},
    }
    made: str = post_ok(http, "/v1/corrector-groups", body)["id"]
    return made


def rule(http: Any, project_id: str, name: str, agent: str, wanted: str | None = None) -> str:
    body: dict[str, Any] = {"name": name, "when": {"agentIds": [agent]}}
    if wanted is not None:
        body["correctorGroupId"] = wanted
    made: str = post_ok(http, f"/v1/projects/{project_id}/queue-rules", body)["ruleId"]
    return made


def correct(http: Any, run_id: str, **fields: Any) -> dict[str, Any]:
    made: dict[str, Any] = post_ok(http, "/v1/corrections", {"runId": run_id, **fields})
    return made


def seed_queue(http: Any, project_id: str, *, echo: int = 3, bots: int = 2) -> QueueSeed:
    """`echo` runs of Dev-Echo Agent queued by Everything (any correction) and Support sample (an expert
    correction), the first with one ungrouped correction; `bots` runs of Bot-Check Agent queued by Bot
    review, which wants a bot's correction (a person can't give one: they wait for other correctors)."""
    expert = group(http, project_id, "expert", ["user"], 3)
    bot = group(http, project_id, "bot", ["service"], 1)
    echo_agent, bot_agent = agent_id(http, project_id, ECHO), agent_id(http, project_id, BOT_AGENT)
    rules = {
        "Everything": rule(http, project_id, "Everything", echo_agent),
        "Support sample": rule(http, project_id, "Support sample", echo_agent, expert),
        "Bot review": rule(http, project_id, "Bot review", bot_agent, bot),
    }
    # Each ended a minute after the one before, from 3 Nov 2026, 17:00 UTC.
    echo_runs = [
        run(http, project_id, endedAt=f"2026-11-03T17:{number:02d}:00Z", **asking(question(number)))["id"]
        for number in range(echo)
    ]
    ended = "2026-11-03T17:00:00Z"
    bot_runs = [run(http, project_id, agent=BOT_AGENT, endedAt=ended)["id"] for _ in range(bots)]
    if echo_runs:
        correct(http, echo_runs[0], answer="right")
    return QueueSeed(expert, bot, rules, echo_runs, bot_runs)


def dismiss(http: Any, project_id: str, run_id: str, reason: str) -> dict[str, Any]:
    done: dict[str, Any] = post_ok(
        http, f"/v1/projects/{project_id}/expert-queue/{run_id}/dismiss", {"reason": reason}
    )
    return done


@dataclass
class FixSeed:
    """A correction in each part, by where its sorting put it."""

    improve: str
    owner: str
    end_user: str
    flow_improve: str
    fixed: str


def seed_fixes(http: Any, project_id: str) -> FixSeed:
    """Corrections sorted on save: a wrong answer (Improve), wrong decisions (Owner), an end user's (no
    one), a flow's wrong answer (no one: Improve takes only an agent's) and a right one (fixed)."""
    improve = correct(
        http,
        run(http, project_id)["id"],
        answer="wrong",
        shouldSay="Your order 1182 was delivered on 3 May; a refund takes 5 days.",
        why="It never said how long a refund takes.",
    )
    owner = correct(
        http,
        run(http, project_id)["id"],
        decisions="wrong",
        shouldCall=[{"tool": "issue_refund", "args": {"order_id": "1182"}}],
        mustNotCall=["lookup_order"],
    )
    end_user = correct(
        http, run(http, project_id)["id"], answer="wrong", why="Not what I asked", participantId="customer-17"
    )
    flow_run = run(http, project_id, agent=None, flow=FLOW)["id"]
    flow_improve = correct(http, flow_run, answer="wrong", shouldSay="A refund is on its way.")
    fixed = correct(http, run(http, project_id)["id"], answer="right")
    return FixSeed(improve["id"], owner["id"], end_user["id"], flow_improve["id"], fixed["id"])
