"""The kindgi 0.1.10 client's judging rules, judging queue and rule results, unchanged, against a real
server on both stores: Redline's queue rules and expert queue, in the judgments era's words."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from kindgi.client import (
    AuthError,
    ConflictError,
    InvalidRequestError,
    Kindgi,
    NotFoundError,
    models,
    paginate,
)

from redline.client import Client
from tests.liveserver import LiveServer
from tests.samples import make_run


def _run(admin: Client, live_server: LiveServer, **fields: Any) -> dict[str, Any]:
    return admin.runs.create(make_run(live_server.project_id, **fields))


def _judge(kindgi: Kindgi, run_id: str, verdict: str = "no", **fields: Any) -> models.Judgment:
    return kindgi.judgments.create(run_id=run_id, item={"key": "answer"}, verdict=verdict, **fields)


def _experts(kindgi: Kindgi, project: str) -> models.JudgeClass:
    return kindgi.judge_classes.create(
        scope={"kind": "project", "projectId": project}, name="Experts", weight=2
    )


# --------------------------------------------------------------------------------------------- rules


def test_judging_rules_are_queue_rules(kindgi: Kindgi, admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    agent_id = _run(admin, live_server, status="running")["agentId"]
    experts = _experts(kindgi, project)

    rule = kindgi.projects.judging_rules.create(
        project,
        name="Support sample",
        when={"agentIds": [agent_id], "versions": ["live"]},
        sample=0.5,
        max_open=5,
        judge_class_id=experts.id,
    )
    assert isinstance(rule, models.JudgingRule)
    assert (rule.project_id, rule.version, rule.name, rule.sample, rule.max_open, rule.enabled) == (
        project,
        1,
        "Support sample",
        0.5,
        5,
        True,
    )
    assert rule.when == models.JudgingRuleWhen(agent_ids=[agent_id], versions=["live"])
    assert (rule.judge_class_id, rule.created_by) == (experts.id, live_server.admin_id)
    # The one store: Redline's client reads the same rule in today's words.
    same = admin.queue_rules.get(project, rule.rule_id)
    assert (same["when"], same["correctorGroupId"]) == (
        {"agentIds": [agent_id], "versions": ["pinned"]},
        experts.id,
    )

    everything = kindgi.projects.judging_rules.create(
        project, name="Everything", when={}, enabled=False, idempotency_key="rule-1"
    )
    again = kindgi.projects.judging_rules.create(
        project, name="Everything", when={}, enabled=False, idempotency_key="rule-1"
    )
    assert again == everything
    with pytest.raises(ConflictError) as mismatch:
        kindgi.projects.judging_rules.create(project, name="Other", when={}, idempotency_key="rule-1")
    assert (mismatch.value.status, mismatch.value.server_code) == (409, "idempotency-key-body-mismatch")
    assert (everything.when, everything.judge_class_id, everything.enabled) == (
        models.JudgingRuleWhen(),
        None,
        False,
    )
    assert kindgi.projects.judging_rules.get(project, rule.rule_id) == rule
    listed = paginate(kindgi.projects.judging_rules.list, project, limit=1)
    assert [r.rule_id for r in listed] == [rule.rule_id, everything.rule_id]

    changed = kindgi.projects.judging_rules.update(
        project, rule.rule_id, when={"agentIds": [agent_id]}, max_open=None, judge_class_id=None
    )
    assert (changed.version, changed.when, changed.max_open, changed.judge_class_id) == (
        2,
        models.JudgingRuleWhen(agent_ids=[agent_id]),
        None,
        None,
    )
    versions = kindgi.projects.judging_rules.versions(project, rule.rule_id, limit=1)
    assert ([v.version for v in versions.data], versions.has_more) == ([2], True)
    assert versions.data[0].model_extra == {
        "changes": [
            {
                "field": "when",
                "from": {"agentIds": [agent_id], "versions": ["live"]},
                "to": {"agentIds": [agent_id]},
            },
            {"field": "maxOpen", "from": 5, "to": None},
            {"field": "judgeClassId", "from": experts.id, "to": None},
        ]
    }
    older = kindgi.projects.judging_rules.versions(project, rule.rule_id, cursor=versions.next_cursor)
    assert [v.version for v in older.data] == [1]

    stopped = kindgi.projects.judging_rules.unregister(project, rule.rule_id)
    assert stopped == models.JudgingRuleUnregisterResult(rule_id=rule.rule_id, unregistered=True)
    assert [r.rule_id for r in kindgi.projects.judging_rules.list(project).data] == [everything.rule_id]
    with pytest.raises(ConflictError) as stopped_already:
        kindgi.projects.judging_rules.update(project, rule.rule_id, name="again")
    assert (stopped_already.value.server_code, stopped_already.value.message) == (
        "judging-rule-unregistered",
        f'Judging rule "{rule.rule_id}" is unregistered: it queues nothing more and can\'t be changed.',
    )


def test_a_preview_reads_live_as_the_pinned_version(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    project = live_server.project_id
    named = _run(admin, live_server)  # its version named: "v1"
    admin.agents.pin(named["agentId"], "v2")
    pinned = _run(admin, live_server, agentVersion=None)
    assert pinned["versionSource"] == "pinned"

    everything = kindgi.projects.judging_rules.preview(project, agent_ids=named["agentId"])
    assert isinstance(everything, models.JudgingRulePreview)
    assert (everything.considered, everything.matched) == (2, 2)
    live = kindgi.projects.judging_rules.preview(project, versions="live", include_dry_runs=False, last=10)
    assert (live.considered, live.matched) == (2, 1)


def test_judging_rule_refusals_in_the_old_words(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    project = live_server.project_id
    with pytest.raises(InvalidRequestError) as unknown_field:
        kindgi.projects.judging_rules.create(project, name="x", when={}, colour="red")
    assert (unknown_field.value.status, unknown_field.value.message) == (400, "Unknown field(s): colour.")
    with pytest.raises(InvalidRequestError) as not_a_project:
        kindgi.projects.judging_rules.list("nope")
    assert not_a_project.value.message == '"nope" isn\'t a project id'
    missing_id = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as missing:
        kindgi.projects.judging_rules.get(project, missing_id)
    assert (missing.value.server_code, missing.value.kind, missing.value.message) == (
        "judging-rule-not-found",
        "judging-rule",
        f'No judging rule "{missing_id}" in this project.',
    )
    with pytest.raises(NotFoundError) as missing:
        kindgi.projects.judging_rules.results(project, "not-an-id")
    assert missing.value.message == 'No judging rule "not-an-id" in this project.'
    with pytest.raises(InvalidRequestError) as no_class:
        kindgi.projects.judging_rules.create(project, name="x", when={}, judge_class_id="nope")
    assert no_class.value.details == {"field": "judgeClassId"}

    user = admin.users.create("reader")
    admin.members.set(project, user["id"], "read")
    token = admin.users.create_token(user["id"], name="t")["token"]
    with Kindgi(live_server.url, token=token, max_retries=0) as reader, pytest.raises(AuthError) as denied:
        reader.projects.judging_rules.create(project, name="x", when={})
    assert (denied.value.status, denied.value.reason) == (403, "forbidden")


# --------------------------------------------------------------------------------------------- queue


def test_the_judging_queue_is_the_expert_queue(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    project = live_server.project_id
    experts = _experts(kindgi, project)
    wants_experts = kindgi.projects.judging_rules.create(
        project, name="Experts", when={}, judge_class_id=experts.id
    )
    wants_any = kindgi.projects.judging_rules.create(project, name="Anyone", when={})
    run = _run(admin, live_server)  # completed, with no end time given
    other = _run(admin, live_server)

    page = kindgi.projects.judging_queue.list(project, limit=1)
    assert isinstance(page, models.JudgingQueuePage)
    assert (page.total, page.has_more) == (2, True)
    [item] = page.data
    assert (item.run_id, item.project_id, item.agent_id, item.agent_version, item.flow_id) == (
        run["id"],
        project,
        run["agentId"],
        "v1",
        "",
    )
    assert (item.run_status, item.completed_at, item.state) == ("completed", item.added_at, "open")
    assert sorted((r.rule_id, r.version) for r in item.rules) == sorted(
        [(wants_experts.rule_id, 1), (wants_any.rule_id, 1)]
    )
    assert (item.wanted_class_ids, item.any_judgment) == ([experts.id], True)
    assert item.progress == models.JudgingProgress(total=0, by_class=[])
    assert item.can == models.JudgingItemCan(dismiss=True, reopen=False)
    assert [i.run_id for i in paginate(kindgi.projects.judging_queue.list, project, limit=1)] == [
        run["id"],
        other["id"],
    ]

    # A judgment of the wanted class closes it for both rules: it is judged, as Redline says corrected.
    _judge(kindgi, run["id"], judge_class_id=experts.id)
    [judged] = kindgi.projects.judging_queue.list(project, state="judged").data
    assert (judged.run_id, judged.state, judged.closed_by) == (run["id"], "judged", live_server.admin_id)
    assert judged.progress == models.JudgingProgress(
        total=1, by_class=[models.JudgingClassCount(judge_class_id=experts.id, count=1)]
    )
    assert [i["state"] for i in admin.expert_queue.list(project) if i["runId"] == run["id"]] == ["corrected"]
    assert [i.run_id for i in kindgi.projects.judging_queue.list(project, state="open").data] == [other["id"]]
    assert [
        i.run_id for i in kindgi.projects.judging_queue.list(project, judge_class_id=experts.id).data
    ] == [
        run["id"],
        other["id"],
    ]
    counted = kindgi.projects.judging_queue.list(project, limit=0)
    assert (counted.total, counted.data) == (2, [])

    with pytest.raises(ConflictError) as closed:
        kindgi.projects.judging_queue.dismiss(project, run["id"])
    assert (closed.value.status, closed.value.server_code, closed.value.message) == (
        409,
        "judging-item-not-open",
        f'Run "{run["id"]}" is judged in the judging queue: only open items can be dismissed.',
    )
    dismissed = kindgi.projects.judging_queue.dismiss(project, other["id"], reason="Test traffic")
    assert (dismissed.state, dismissed.reason, dismissed.closed_by) == (
        "dismissed",
        "Test traffic",
        live_server.admin_id,
    )
    assert dismissed.can == models.JudgingItemCan(dismiss=False, reopen=True)
    reopened = kindgi.projects.judging_queue.reopen(project, other["id"])
    assert (reopened.state, reopened.reason) == ("open", None)
    with pytest.raises(ConflictError) as not_dismissed:
        kindgi.projects.judging_queue.reopen(project, other["id"])
    assert not_dismissed.value.message == (
        f'Run "{other["id"]}" is open in the judging queue: only dismissed items can be reopened.'
    )
    stranger = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as missing:
        kindgi.projects.judging_queue.dismiss(project, stranger)
    assert (missing.value.server_code, missing.value.message) == (
        "judging-item-not-found",
        f'Run "{stranger}" is not in the judging queue of this project.',
    )


def test_a_flow_run_in_the_queue_names_its_flow(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    project = live_server.project_id
    kindgi.projects.judging_rules.create(project, name="Anyone", when={})
    run = _run(admin, live_server, agent=None, flow="triage", endedAt="2026-11-03T12:00:00Z")
    [item] = kindgi.projects.judging_queue.list(project).data
    assert (item.flow_id, item.agent_id, item.completed_at) == (
        run["flowId"],
        None,
        datetime(2026, 11, 3, 12, tzinfo=UTC),
    )


# ------------------------------------------------------------------------------------------- results


def test_a_rules_results_in_the_old_words(kindgi: Kindgi, admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    rule = kindgi.projects.judging_rules.create(project, name="Anyone", when={})
    yes_run, no_run, waiting = (_run(admin, live_server) for _ in range(3))
    experts = _experts(kindgi, project)
    _judge(kindgi, yes_run["id"], verdict="yes", judge_class_id=experts.id)
    _judge(kindgi, no_run["id"], verdict="no")
    kindgi.projects.judging_queue.dismiss(project, waiting["id"])

    found = kindgi.projects.judging_rules.results(project, rule.rule_id)
    assert isinstance(found, models.JudgingRuleResults)
    assert (found.rule_id, found.since) == (rule.rule_id, None)
    assert found.groups == [
        models.JudgingResultGroup(
            rule_version=1,
            agent_version="v1",
            added=3,
            open=0,
            judged=2,
            dismissed=1,
            erased=0,
            skipped_by_cap=0,
            judgments=2,
            runs_with_judgments=2,
            yes_share=2 / 3,  # the expert's yes weighs 2, the unclassified no 1
            by_class=[
                models.JudgingClassResult(judge_class_id=None, judgments=1, yes=0),
                models.JudgingClassResult(judge_class_id=experts.id, judgments=1, yes=1),
            ],
        )
    ]
    since = kindgi.projects.judging_rules.results(project, rule.rule_id, since="2020-01-01")
    assert (since.since, since.groups) == (datetime(2020, 1, 1, tzinfo=UTC), found.groups)
    later = kindgi.projects.judging_rules.results(project, rule.rule_id, since="2999-01-01T10:00:00Z")
    assert (later.since, later.groups) == (datetime(2999, 1, 1, tzinfo=UTC), [])
