"""@kindgi/client 0.1.10 (laid in from the kindgi-cli wheel, tests/clients_ts/nodeclients.py) against a
live server, on both stores: every judgments-era call the Python kindgi client makes, under the TypeScript
client's own names, through kindgi_client.mjs; and the snippet of docs/clients.md as written.

The client hands each answer's JSON over unchecked (its zod schemas are types only), so each answer is
checked here against what its type declarations require (tests/clients_ts/kindgi_shapes.py). A refusal
must reach the caller as the client's `KindgiApiError`, its typed `error` carrying the client's kind
(`code`), Redline's code (`serverCode`) and Redline's sentence (`message`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline.client import Client
from tests.clients_ts import kindgi_shapes as shapes
from tests.clients_ts import nodeclients
from tests.conftest import ADMIN_TOKEN
from tests.doccommands import fenced_blocks
from tests.kindgisnippet import assert_judged
from tests.liveserver import LiveServer
from tests.samples import make_run

pytestmark = pytest.mark.usefixtures("ts_clients")

SCRIPT = "kindgi_client.mjs"
CLIENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
DOC_SECTION = "## `@kindgi/client`"
DOCUMENTED_HOST = "http://127.0.0.1:8000"
OUTPUT = {"answer": "Try these articles.", "matches": [{"id": "kb-101"}, {"id": "kb-102"}]}
NO_ROUTE = (
    "No such endpoint: GET /v1/agents. Redline is not an agent runtime: of kindgi's API it serves "
    "projects, runs (to read), judgments, judge classes, judging rules and the judging queue "
    '(docs/api-corrections.md, "The kindgi client").'
)


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[Client]:
    """Redline's own client, for what the old one has no call for (runs) and to read back what it made."""
    with live_server.client() as client:
        yield client


def _kindgi(live_server: LiveServer, scenario: str, token: str = ADMIN_TOKEN, **ids: Any) -> dict[str, Any]:
    """What each call of one scenario gave: the default project and an id nothing has are always given."""
    environment = {"REDLINE_URL": live_server.url, "KINDGI_API_TOKEN": token}
    given = {"projectId": live_server.project_id, "missingId": str(uuid.uuid4()), **ids}
    return nodeclients.run_script(SCRIPT, scenario, given, environment)


def _run(admin: Client, live_server: LiveServer, **fields: Any) -> dict[str, Any]:
    return admin.runs.create(make_run(live_server.project_id, output=OUTPUT, **fields))


def _returned(results: dict[str, Any], name: str) -> Any:
    """What call `name` returned; a failure showing what it raised when it raised."""
    assert "ok" in results[name], f"{name}: {results[name]}"
    return results[name]["ok"]


def _ok(results: dict[str, Any], name: str, declared: shapes.Shape) -> Any:
    """What call `name` returned, which its declared type must fit."""
    value = _returned(results, name)
    assert shapes.problems(value, declared) == [], (name, value)
    return value


def _listed(results: dict[str, Any], name: str, item: shapes.Shape, *, total: bool = False) -> list[Any]:
    """Every item of a list read page by page, each page fitting the page type: `nextCursor` on each
    page but the last, and not on the last."""
    read: list[dict[str, Any]] = _returned(results, name)
    for number, page in enumerate(read, start=1):
        assert shapes.problems(page, shapes.page(item, total=total)) == [], (name, page)
        last = number == len(read)
        assert (page["hasMore"], "nextCursor" in page) == (not last, not last), (name, number, page)
    return [each for page in read for each in page["data"]]


def _one_page(results: dict[str, Any], name: str, item: shapes.Shape, *, total: bool = False) -> list[Any]:
    """The items of a list answer that was all there is."""
    page = _ok(results, name, shapes.page(item, total=total))
    assert (page["hasMore"], "nextCursor" in page) == (False, False), (name, page)
    data: list[Any] = page["data"]
    return data


def _ids(
    results: dict[str, Any], name: str, item: shapes.Shape, *, key: str = "id", total: bool = False
) -> list[Any]:
    """What `key` holds in each item a list call answered, in order: read page by page when the scenario
    did, else one page."""
    pages = isinstance(_returned(results, name), list)
    listed = (_listed if pages else _one_page)(results, name, item, total=total)
    return [each[key] for each in listed]


def _unregistered(results: dict[str, Any], read: shapes.Shape, listed: shapes.Shape) -> list[str]:
    """After `unregister`, which resolves to nothing (the client discards the answer: Promise<void>):
    the thing read back says when it went, and the ids `listAfter` still lists."""
    assert results["unregister"] == {"ok": None}
    assert "unregisteredAt" in _ok(results, "unregistered", read)
    return _ids(results, "listAfter", listed)


def _refused(results: dict[str, Any], name: str, code: str, server_code: str, message: str) -> dict[str, Any]:
    """The client's typed error of call `name`: its KindgiApiError with Redline's code and sentence."""
    assert "error" in results[name], f"{name} did not raise: {results[name]}"
    raised = results[name]["error"]
    assert (raised["class"], raised["kindgiApiError"], raised["message"]) == ("KindgiApiError", True, message)
    error: dict[str, Any] = raised["error"]
    assert (error["code"], error["serverCode"], error["message"]) == (code, server_code, message), error
    return error


# ---------------------------------------------------------------------------------------- projects, runs


def test_projects(admin: Client, live_server: LiveServer) -> None:
    billing = admin.projects.create("Billing")
    results = _kindgi(live_server, "projects", billingId=billing["id"])

    listed = _listed(results, "list", shapes.PROJECT)
    assert [(p["id"], p["name"], p["isDefault"]) for p in listed] == [
        (live_server.project_id, "default", True),
        (billing["id"], "Billing", False),
    ]
    assert _ok(results, "getDefault", shapes.PROJECT) == listed[0]
    assert _ok(results, "get", shapes.PROJECT) == listed[1]
    not_an_id = _refused(results, "notAnId", "invalid-request", "bad-input", '"nope" isn\'t a project id')
    assert (not_an_id["issues"], not_an_id["fields"]) == (
        [{"path": "projectId", "message": '"nope" isn\'t a project id'}],
        {"field": "projectId"},
    )
    missing = results["missing"]["error"]["error"]["resource"]["id"]
    gone = _refused(results, "missing", "not-found", "project-not-found", f'No project "{missing}".')
    assert gone["resource"] == {"kind": "project", "id": missing}


def test_runs(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server, endedAt="2026-11-03T12:00:00+00:00")
    running = _run(admin, live_server, status="running")
    flow = _run(admin, live_server, agent=None, flow="triage", agentVersion="2.0.0")
    results = _kindgi(live_server, "runs", runId=run["id"], flowRunId=flow["id"], agentId=run["agentId"])

    got = _ok(results, "get", shapes.RUN)
    assert (got["id"], got["projectId"], got["status"], got["flowId"], got["flowVersion"]) == (
        run["id"],
        live_server.project_id,
        "completed",
        "",
        "",
    )
    assert (got["output"], got["completedAt"], got["agentId"]) == (
        OUTPUT,
        "2026-11-03T12:00:00+00:00",
        run["agentId"],
    )
    by_flow = _ok(results, "getFlow", shapes.RUN)
    assert (by_flow["flowId"], by_flow["flowVersion"], by_flow["flowName"]) == (
        flow["flowId"],
        "2.0.0",
        "triage",
    )
    newest_first = [flow["id"], running["id"], run["id"]]
    assert _ids(results, "list", shapes.RUN) == newest_first
    assert _ids(results, "inProject", shapes.RUN) == newest_first
    assert _ids(results, "completed", shapes.RUN) == [flow["id"], run["id"]]
    assert _ids(results, "byAgent", shapes.RUN) == [running["id"], run["id"]]
    missing = results["missing"]["error"]["error"]["resource"]["id"]
    gone = _refused(results, "missing", "not-found", "run-not-found", f'No run "{missing}".')
    assert gone["resource"] == {"kind": "run", "id": missing}


# ------------------------------------------------------------------------------------------- judgments


def test_judgments(admin: Client, live_server: LiveServer) -> None:
    run, other = _run(admin, live_server), _run(admin, live_server)
    flow = _run(admin, live_server, agent=None, flow="triage", agentVersion="2.0.0")
    results = _kindgi(
        live_server,
        "judgments",
        runId=run["id"],
        otherRunId=other["id"],
        agentId=run["agentId"],
        flowRunId=flow["id"],
        flowId=flow["flowId"],
    )

    made = _ok(results, "create", shapes.JUDGMENT)
    assert (made["runId"], made["projectId"], made["verdict"], made["reason"]) == (
        run["id"],
        live_server.project_id,
        "no",
        "Outdated article.",
    )
    assert (made["subject"], made["item"], made["assertedBy"]) == (
        {"kind": "agent", "id": run["agentId"], "version": "v1"},
        {"key": "kb-101", "pointer": "/matches/0", "rank": 0},
        {"kind": "user", "id": live_server.admin_id},
    )
    assert _ok(results, "replay", shapes.JUDGMENT) == made
    _refused(
        results,
        "keyMismatch",
        "conflict",
        "idempotency-key-body-mismatch",
        "This Idempotency-Key was used for another request; use a new key for a new request.",
    )
    yes = _ok(results, "yes", shapes.JUDGMENT)
    assert (yes["verdict"], yes["item"], yes["participantId"]) == ("yes", {"key": "kb-102"}, "end-user-7")
    # The one store: Redline's client reads the judgment as a correction with one item.
    correction = admin.corrections.get(made["id"])
    assert (correction["items"], correction["why"]) == (
        [{"key": "kb-101", "pointer": "/matches/0", "rank": 0, "verdict": "wrong"}],
        "Outdated article.",
    )

    got = _ok(results, "get", shapes.JUDGMENT_WITH_COPIES)
    assert (got["itemValue"], got["run"]["runId"], got["run"]["output"]) == (
        {"id": "kb-101"},
        run["id"],
        OUTPUT,
    )
    assert {key: got[key] for key in made} == made
    of_flow = _ok(results, "ofFlow", shapes.JUDGMENT)
    assert of_flow["subject"] == {"kind": "flow", "id": flow["flowId"], "version": "2.0.0"}
    listed = {
        name: _ids(results, name, shapes.JUDGMENT)
        for name in ("list", "byVerdict", "byRun", "inProject", "byParticipant", "byAgent", "byFlow")
    }
    assert listed == {
        "list": [of_flow["id"], yes["id"], made["id"]],
        "byVerdict": [yes["id"]],
        "byRun": [made["id"]],
        "inProject": [of_flow["id"], yes["id"], made["id"]],
        "byParticipant": [yes["id"]],
        "byAgent": [yes["id"], made["id"]],
        "byFlow": [of_flow["id"]],
    }

    assert _unregistered(results, shapes.JUDGMENT_WITH_COPIES, shapes.JUDGMENT) == [of_flow["id"], made["id"]]
    assert admin.corrections.get(yes["id"])["status"] == "removed"
    again = _refused(
        results,
        "unregisterAgain",
        "conflict",
        "judgment-status-change-not-allowed",
        "A judgment that's removed can't become removed.",
    )
    assert (again["reason"], again["fields"]) == (
        "judgment-status-change-not-allowed",
        {"from": "removed", "to": "removed"},
    )


def test_judgment_refusals(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    running = _run(admin, live_server, status="running")
    missing = str(uuid.uuid4())
    results = _kindgi(
        live_server, "judgmentRefusals", runId=run["id"], runningRunId=running["id"], missingId=missing
    )

    no_run = _refused(results, "runNotFound", "not-found", "run-not-found", f'No run "{missing}".')
    assert no_run["resource"] == {"kind": "run", "id": missing}
    unfinished = _refused(
        results,
        "runNotFinished",
        "conflict",
        "run-not-finished",
        f'Run "{running["id"]}" has no output to judge yet (status running).',
    )
    assert (unfinished["reason"], unfinished["fields"]) == (
        "run-not-finished",
        {"runId": running["id"], "status": "running"},
    )
    nothing_there = _refused(
        results,
        "itemNotFound",
        "invalid-request",
        "item-not-found",
        f'Nothing at "/matches/9" in run "{run["id"]}"\'s output.',
    )
    assert nothing_there["fields"]["field"] == "item"
    no_class = _refused(
        results, "classNotFound", "not-found", "judge-class-not-found", f'No judge-class "{missing}".'
    )
    assert no_class["resource"] == {"kind": "judge-class", "id": missing}
    for name in ("getMissing", "unregisterMissing"):
        no_judgment = _refused(results, name, "not-found", "judgment-not-found", f'No judgment "{missing}".')
        assert no_judgment["resource"]["kind"] == "judgment"
    orgs = _refused(
        results,
        "orgScope",
        "invalid-request",
        "bad-input",
        'scopeKind: "org" is not one of tenant, project; Redline has no orgs.',
    )
    assert orgs["fields"] == {"field": "scopeKind"}


def test_who_may_not_is_told_so(admin: Client, live_server: LiveServer) -> None:
    user = admin.users.create("reader")
    admin.members.set(live_server.project_id, user["id"], "read")
    reader = admin.users.create_token(user["id"], name="t")["token"]

    read_only = _kindgi(live_server, "auth", token=reader)
    assert _one_page(read_only, "list", shapes.JUDGMENT) == []
    denied = read_only["createRule"]["error"]["error"]
    assert (denied["code"], denied["serverCode"], denied["reason"]) == (
        "auth",
        "permission-denied",
        "forbidden",
    )

    stranger = _kindgi(live_server, "auth", token="rl_not_a_token")
    for name in ("list", "createRule"):
        unknown = stranger[name]["error"]["error"]
        assert (unknown["code"], unknown["reason"]) == ("auth", "unauthenticated"), unknown


# --------------------------------------------------------------------------------------- judge classes


def test_judge_classes(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    results = _kindgi(live_server, "judgeClasses")

    leads = _ok(results, "create", shapes.JUDGE_CLASS)
    assert (leads["scope"], leads["name"], leads["weight"], leads["description"]) == (
        {"kind": "project", "projectId": project},
        "Support leads",
        2,
        "Leads",
    )
    everyone = _ok(results, "tenant", shapes.JUDGE_CLASS)
    assert everyone["scope"] == {"kind": "tenant"}
    assert admin.corrector_groups.get(leads["id"])["name"] == "Support leads"
    assert _ids(results, "list", shapes.JUDGE_CLASS) == [leads["id"], everyone["id"]]
    assert _ids(results, "inProject", shapes.JUDGE_CLASS) == [leads["id"]]
    assert _ok(results, "get", shapes.JUDGE_CLASS) == leads

    changed = _ok(results, "update", shapes.JUDGE_CLASS)
    assert (changed["weight"], changed["assertableBy"]) == (3, {"minReviewerRole": "senior"})
    lifted = _ok(results, "lift", shapes.JUDGE_CLASS)
    assert "assertableBy" not in lifted
    assert _unregistered(results, shapes.JUDGE_CLASS, shapes.JUDGE_CLASS) == [leads["id"]]

    taken = _refused(
        results,
        "nameTaken",
        "conflict",
        "judge-class-name-taken",
        'A corrector group named "Support leads" already applies to the runs of project "default".',
    )
    assert taken["fields"] == {"name": "Support leads", "judgeClassId": leads["id"]}
    gone = _refused(results, "missing", "not-found", "judge-class-not-found", 'No judge-class "nope".')
    assert gone["resource"] == {"kind": "judge-class", "id": "nope"}


# ------------------------------------------------------------------------------ judging rules, the queue


def test_judging_rules(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    named = _run(admin, live_server)  # its version named: "v1"
    admin.agents.pin(named["agentId"], "v2")
    _run(admin, live_server, agentVersion=None)  # the pinned version
    results = _kindgi(live_server, "judgingRules", agentId=named["agentId"])

    experts = _ok(results, "experts", shapes.JUDGE_CLASS)
    rule = _ok(results, "create", shapes.JUDGING_RULE)
    assert (rule["projectId"], rule["version"], rule["name"], rule["sample"], rule["maxOpen"]) == (
        project,
        1,
        "Support sample",
        0.5,
        5,
    )
    assert (rule["when"], rule["judgeClassId"], rule["enabled"], rule["createdBy"]) == (
        {"agentIds": [named["agentId"]], "versions": ["live"]},
        experts["id"],
        True,
        live_server.admin_id,
    )
    everything = _ok(results, "everything", shapes.JUDGING_RULE)
    assert (everything["when"], everything["enabled"], "judgeClassId" in everything) == ({}, False, False)
    assert _ok(results, "replay", shapes.JUDGING_RULE) == everything
    assert _ids(results, "list", shapes.JUDGING_RULE, key="ruleId") == [rule["ruleId"], everything["ruleId"]]
    assert _ok(results, "get", shapes.JUDGING_RULE) == rule

    changed = _ok(results, "update", shapes.JUDGING_RULE)
    assert (changed["version"], changed["when"]) == (2, {"agentIds": [named["agentId"]]})
    assert not {"maxOpen", "judgeClassId"} & changed.keys()
    assert _ids(results, "versions", shapes.JUDGING_RULE, key="version") == [2, 1]
    preview = _ok(results, "preview", shapes.JUDGING_RULE_PREVIEW)
    assert (preview["considered"], preview["matched"]) == (2, 2)
    live = _ok(results, "previewLive", shapes.JUDGING_RULE_PREVIEW)
    assert (live["considered"], live["matched"]) == (2, 1)
    assert _ok(results, "results", shapes.JUDGING_RULE_RESULTS) == {"ruleId": rule["ruleId"], "groups": []}
    since = _ok(results, "resultsSince", shapes.JUDGING_RULE_RESULTS)
    assert (since["since"], since["groups"]) == ("2999-01-01T00:00:00+00:00", [])

    assert _ok(results, "unregister", shapes.JUDGING_RULE_UNREGISTERED) == {
        "ruleId": rule["ruleId"],
        "unregistered": True,
    }
    assert _ids(results, "listAfter", shapes.JUDGING_RULE, key="ruleId") == [everything["ruleId"]]
    _refused(
        results,
        "updateAfter",
        "conflict",
        "judging-rule-unregistered",
        f'Judging rule "{rule["ruleId"]}" is unregistered: it queues nothing more and can\'t be changed.',
    )
    missing = results["missing"]["error"]["error"]["resource"]["id"]
    gone = _refused(
        results,
        "missing",
        "not-found",
        "judging-rule-not-found",
        f'No judging rule "{missing}" in this project.',
    )
    assert gone["resource"] == {"kind": "judging-rule", "id": missing}
    _refused(results, "unknownField", "invalid-request", "bad-input", "Unknown field(s): colour.")
    _refused(results, "notAProject", "invalid-request", "bad-input", '"nope" isn\'t a project id')


def test_the_judging_queue_and_a_rules_results(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    experts = admin.corrector_groups.create(
        scope={"kind": "project", "projectId": project}, name="Experts", weight=2
    )
    rule = admin.queue_rules.create(project, name="Experts", when={}, corrector_group_id=experts["id"])
    run, other = _run(admin, live_server), _run(admin, live_server)
    missing = str(uuid.uuid4())
    results = _kindgi(
        live_server,
        "judgingQueue",
        runId=run["id"],
        otherRunId=other["id"],
        classId=experts["id"],
        ruleId=rule["ruleId"],
        missingId=missing,
    )

    first, second = _listed(results, "list", shapes.JUDGING_QUEUE_ITEM, total=True)
    assert [page["total"] for page in results["list"]["ok"]] == [2, 2]
    assert (first["runId"], second["runId"]) == (run["id"], other["id"])
    assert (first["projectId"], first["agentId"], first["agentVersion"], first["flowId"]) == (
        project,
        run["agentId"],
        "v1",
        "",
    )
    assert (first["runStatus"], first["state"], first["completedAt"]) == (
        "completed",
        "open",
        first["addedAt"],
    )
    assert ([(r["ruleId"], r["version"]) for r in first["rules"]], first["wantedClassIds"]) == (
        [(rule["ruleId"], 1)],
        [experts["id"]],
    )
    assert (first["anyJudgment"], first["progress"], first["can"]) == (
        False,
        {"total": 0, "byClass": []},
        {"dismiss": True, "reopen": False},
    )

    assert _ok(results, "judge", shapes.JUDGMENT)["judgeClassId"] == experts["id"]
    [judged] = _one_page(results, "judged", shapes.JUDGING_QUEUE_ITEM, total=True)
    assert (judged["runId"], judged["state"], judged["closedBy"]) == (
        run["id"],
        "judged",
        live_server.admin_id,
    )
    assert judged["progress"] == {"total": 1, "byClass": [{"judgeClassId": experts["id"], "count": 1}]}
    assert _ids(results, "judgedByClass", shapes.JUDGMENT) == [results["judge"]["ok"]["id"]]
    item = shapes.JUDGING_QUEUE_ITEM
    assert _ids(results, "open", item, key="runId", total=True) == [other["id"]]
    assert _ids(results, "byClass", item, key="runId", total=True) == [run["id"], other["id"]]
    assert _ok(results, "counted", shapes.page(shapes.JUDGING_QUEUE_ITEM, total=True)) == {
        "data": [],
        "hasMore": False,
        "total": 2,
    }

    _refused(
        results,
        "dismissJudged",
        "conflict",
        "judging-item-not-open",
        f'Run "{run["id"]}" is judged in the judging queue: only open items can be dismissed.',
    )
    dismissed = _ok(results, "dismiss", shapes.JUDGING_QUEUE_ITEM)
    assert (dismissed["state"], dismissed["reason"], dismissed["closedBy"], dismissed["can"]) == (
        "dismissed",
        "Test traffic",
        live_server.admin_id,
        {"dismiss": False, "reopen": True},
    )
    reopened = _ok(results, "reopen", shapes.JUDGING_QUEUE_ITEM)
    assert (reopened["state"], "reason" in reopened) == ("open", False)
    _refused(
        results,
        "reopenAgain",
        "conflict",
        "judging-item-not-open",
        f'Run "{other["id"]}" is open in the judging queue: only dismissed items can be reopened.',
    )
    assert _ok(results, "dismissAgain", shapes.JUDGING_QUEUE_ITEM)["state"] == "dismissed"
    gone = _refused(
        results,
        "missing",
        "not-found",
        "judging-item-not-found",
        f'Run "{missing}" is not in the judging queue of this project.',
    )
    assert gone["resource"] == {"kind": "judging-item", "id": missing}

    found = _ok(results, "results", shapes.JUDGING_RULE_RESULTS)
    assert found == {
        "ruleId": rule["ruleId"],
        "groups": [
            {
                "ruleVersion": 1,
                "agentVersion": "v1",
                "added": 2,
                "open": 0,
                "judged": 1,
                "dismissed": 1,
                "erased": 0,
                "skippedByCap": 0,
                "judgments": 1,
                "runsWithJudgments": 1,
                "yesShare": 0,
                "byClass": [{"judgeClassId": experts["id"], "judgments": 1, "yes": 0}],
            }
        ],
    }


# ---------------------------------------------------------------------------------- the clients page


def _documented_snippet() -> str:
    """The JavaScript block of docs/clients.md's @kindgi/client section."""
    section = CLIENTS_DOC.read_text().split(DOC_SECTION, 1)[1].split("\n## ", 1)[0]
    [block] = [block for block in fenced_blocks(section) if block.language == "js"]
    return block.text


def test_the_snippet_of_the_clients_page_runs_as_written(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    source = _documented_snippet()
    assert source.count(DOCUMENTED_HOST) == 1
    ran = nodeclients.run_module(
        source.replace(DOCUMENTED_HOST, live_server.url), {"KINDGI_API_TOKEN": ADMIN_TOKEN}
    )
    assert ran.returncode == 0, ran.stderr

    correction = assert_judged(admin, live_server, run)
    assert ran.stdout.splitlines() == [
        "{ id: 'kb-101' }",
        f"{correction['id']} no That article is out of date.",
        f"not-found {NO_ROUTE}",
    ]


def test_the_bundle_imports_nothing_so_nothing_is_nested_under_it() -> None:
    """Why nodeclients lays in @kindgi/client alone: neither build of its bundle imports a package (its
    zod is for the type declarations), so the zod 3 at the top of node_modules can't reach it."""
    dist = nodeclients.NODE_MODULES / nodeclients.KINDGI_CLIENT / "dist"
    imports = re.compile(r"""^\s*import\s.*\sfrom\s|\bimport\(\s*["']|\brequire\(\s*["']""", re.MULTILINE)
    for build in ("index.js", "index.cjs"):
        assert imports.findall((dist / build).read_text()) == [], build
    assert re.search(r"""^import .* from ['"]zod['"]""", (dist / "index.d.ts").read_text(), re.MULTILINE)
