"""The kindgi 0.1.10 client's judgments and judge classes, unchanged, against a real server on both stores.

A judgment is a correction with one item: what the old client makes is a correction to Redline's own
client, and a correction that says more is no judgment to the old one.
"""

from __future__ import annotations

import uuid
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
from kindgi.client._base import Operation

from redline.client import Client
from tests.liveserver import LiveServer
from tests.samples import make_run

# The client's own transport, for a body its models would refuse to send (wire-clients.md §3.7).
CREATE = Operation("judgments.create", "POST", "/v1/judgments", "json", True)
LIST = Operation("judgments.list", "GET", "/v1/judgments", "json", False)
OUTPUT = {"answer": "Try these articles.", "matches": [{"id": "kb-101"}, {"id": "kb-102"}]}


def _run(admin: Client, live_server: LiveServer, **fields: Any) -> dict[str, Any]:
    return admin.runs.create(make_run(live_server.project_id, output=OUTPUT, **fields))


def _judge(kindgi: Kindgi, run_id: str, key: str = "kb-101", **fields: Any) -> models.Judgment:
    index = int(key.removeprefix("kb-")) - 101
    item = {"key": key, "pointer": f"/matches/{index}", "rank": index}
    return kindgi.judgments.create(run_id=run_id, item=item, **{"verdict": "no", **fields})


def _kindgi_for(admin: Client, live_server: LiveServer, name: str, role: str | None) -> Kindgi:
    """The old client holding a new user's token, with `role` in the default project."""
    user = admin.users.create(name)
    if role is not None:
        admin.members.set(live_server.project_id, user["id"], role)
    token = admin.users.create_token(user["id"], name="t")["token"]
    return Kindgi(live_server.url, token=token, max_retries=0)


# ------------------------------------------------------------------------------------------- judgments


def test_a_judgment_is_a_correction_with_one_item(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    run = _run(admin, live_server)
    made = _judge(kindgi, run["id"], reason="Outdated article.")

    assert isinstance(made, models.Judgment)
    assert (made.run_id, made.project_id, made.tenant_id) == (
        run["id"],
        live_server.project_id,
        admin.me()["workspaceId"],
    )
    assert made.subject == models.JudgedSubject(kind="agent", id=run["agentId"], version="v1")
    assert made.item == models.JudgedItem(key="kb-101", pointer="/matches/0", rank=0)
    assert (made.verdict, made.reason) == ("no", "Outdated article.")
    assert made.asserted_by == models.JudgmentAssertedBy(kind="user", id=live_server.admin_id)
    assert (made.judge_class_id, made.restricted, made.participant_id) == (None, None, None)
    assert (made.unregistered_at, made.superseded_by) == (None, None)

    # The one store: Redline's client reads it as a correction, sorted and counted as any.
    correction = admin.corrections.get(made.id)
    assert correction["items"] == [{"key": "kb-101", "pointer": "/matches/0", "rank": 0, "verdict": "wrong"}]
    assert (correction["why"], correction["status"], correction["sortedTo"]) == (
        "Outdated article.",
        "open",
        "improve",
    )
    counts = admin.corrections.counts(scope_kind="project", scope_id=live_server.project_id)
    assert counts["open"] == 1

    got = kindgi.judgments.get(made.id)
    assert isinstance(got, models.JudgmentWithCopies)
    assert got.item_value == {"id": "kb-101"}
    assert (got.run.run_id, got.run.input, got.run.output) == (run["id"], run["input"], OUTPUT)
    assert got.run.subject == made.subject
    assert [judgment.id for judgment in kindgi.judgments.list().data] == [made.id]


def test_yes_is_right_and_a_correction_of_one_item_is_a_judgment(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    run = _run(admin, live_server)
    yes = _judge(kindgi, run["id"], verdict="yes")
    assert admin.corrections.get(yes.id)["items"][0]["verdict"] == "right"
    assert admin.corrections.get(yes.id)["status"] == "fixed"  # nothing wrong: recorded right

    other = _run(admin, live_server)
    made = admin.corrections.create(
        run_id=other["id"], items=[{"key": "kb-102", "verdict": "wrong"}], why="Not this one."
    )
    judged = kindgi.judgments.get(made["id"])
    assert (judged.verdict, judged.reason, judged.item) == (
        "no",
        "Not this one.",
        models.JudgedItem(key="kb-102"),
    )
    assert judged.item_value is None


def test_a_correction_that_says_more_is_no_judgment(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    answer = admin.corrections.create(
        run_id=_run(admin, live_server)["id"], answer="wrong", should_say="Refund it."
    )
    two_items = admin.corrections.create(
        run_id=_run(admin, live_server)["id"],
        items=[{"key": "kb-101", "verdict": "wrong"}, {"key": "kb-102", "verdict": "right"}],
    )
    item_and_answer = admin.corrections.create(
        run_id=_run(admin, live_server)["id"], items=[{"key": "kb-101", "verdict": "right"}], answer="right"
    )
    judgment = _judge(kindgi, _run(admin, live_server)["id"])

    assert [listed.id for listed in kindgi.judgments.list().data] == [judgment.id]
    for correction in (answer, two_items, item_and_answer):
        with pytest.raises(NotFoundError) as missing:
            kindgi.judgments.get(correction["id"])
        assert (missing.value.status, missing.value.server_code, missing.value.kind) == (
            404,
            "judgment-not-found",
            "judgment",
        )
        assert missing.value.message == f'No judgment "{correction["id"]}".'
        assert missing.value.id == correction["id"]
        with pytest.raises(NotFoundError):
            kindgi.judgments.unregister(correction["id"])
        assert admin.corrections.get(correction["id"])["status"] != "removed"


def test_the_list_filters_and_pages(kindgi: Kindgi, admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    first, second, third = (_run(admin, live_server) for _ in range(3))
    no = _judge(kindgi, first["id"])
    yes = _judge(kindgi, second["id"], verdict="yes", participant_id="end-user-7")
    flow_run = _run(admin, live_server, agent=None, flow="triage", agentVersion="2.0.0")
    by_flow = _judge(kindgi, flow_run["id"], key="kb-102")
    newest_first = [by_flow.id, yes.id, no.id]

    def ids(**filters: Any) -> list[str]:
        return [judgment.id for judgment in paginate(kindgi.judgments.list, limit=1, **filters)]

    assert ids() == newest_first
    assert ids(verdict="no") == [by_flow.id, no.id]
    assert ids(verdict="yes") == [yes.id]
    assert ids(run_id=first["id"]) == [no.id]
    assert ids(agent_id=first["agentId"], agent_version="v1") == [yes.id, no.id]
    assert ids(flow_id=flow_run["flowId"]) == [by_flow.id]
    assert ids(participant_id="end-user-7") == [yes.id]
    assert ids(scope_kind="project", scope_id=project) == newest_first
    assert ids(scope_kind="tenant") == newest_first
    assert ids(run_id=third["id"]) == []
    assert by_flow.subject == models.JudgedSubject(kind="flow", id=flow_run["flowId"], version="2.0.0")

    page = kindgi.judgments.list(limit=2)
    assert (len(page.data), page.has_more, page.next_cursor is not None) == (2, True, True)
    with pytest.raises(InvalidRequestError) as bad:
        kindgi.judgments.list(scope_kind="org", scope_id=project)
    assert bad.value.message == 'scopeKind: "org" is not one of tenant, project; Redline has no orgs.'
    assert bad.value.details == {"field": "scopeKind"}
    with pytest.raises(InvalidRequestError) as bad:
        kindgi.judgments.list(run_id="abc")
    assert bad.value.message == 'runId: "abc" is not an id.'


def test_a_run_without_agent_or_flow_has_an_empty_subject(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    run = _run(admin, live_server, agent=None, agentVersion=None)
    made = _judge(kindgi, run["id"])
    assert made.subject == models.JudgedSubject(kind="none", id="", version="")
    assert kindgi.judgments.get(made.id).run.subject == made.subject


def test_judging_again_replaces_the_earlier_judgment_and_removing_is_final(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    run = _run(admin, live_server)
    first = _judge(kindgi, run["id"])
    second = _judge(kindgi, run["id"], key="kb-102", verdict="yes")

    assert kindgi.judgments.get(first.id).superseded_by == second.id
    assert [judgment.id for judgment in kindgi.judgments.list().data] == [second.id]

    removed = kindgi.judgments.unregister(second.id)
    assert removed == models.UnregisterJudgmentResult(judgment_id=second.id, unregistered=True)
    assert kindgi.judgments.list().data == []
    assert kindgi.judgments.get(second.id).unregistered_at is not None
    assert admin.corrections.get(second.id)["status"] == "removed"
    with pytest.raises(ConflictError) as again:
        kindgi.judgments.unregister(second.id)
    assert (again.value.status, again.value.server_code) == (409, "judgment-status-change-not-allowed")
    assert again.value.message == "A judgment that's removed can't become removed."
    assert again.value.details == {"from": "removed", "to": "removed"}


def test_refusals_come_back_in_the_judgments_era_words(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    running = _run(admin, live_server, status="running")
    with pytest.raises(ConflictError) as unfinished:
        _judge(kindgi, running["id"])
    assert (unfinished.value.status, unfinished.value.server_code) == (409, "run-not-finished")
    assert unfinished.value.message == f'Run "{running["id"]}" has no output to judge yet (status running).'
    assert unfinished.value.details == {"runId": running["id"], "status": "running"}

    run = _run(admin, live_server)
    with pytest.raises(InvalidRequestError) as nothing_there:
        kindgi.judgments.create(run_id=run["id"], item={"key": "kb-9", "pointer": "/matches/9"}, verdict="no")
    assert (nothing_there.value.status, nothing_there.value.server_code) == (400, "item-not-found")
    assert nothing_there.value.message == f'Nothing at "/matches/9" in run "{run["id"]}"\'s output.'
    assert nothing_there.value.details["field"] == "item"

    unknown = str(uuid.uuid4())
    for call in (kindgi.judgments.get, kindgi.judgments.unregister):
        with pytest.raises(NotFoundError) as no_judgment:
            call(unknown)
        assert (no_judgment.value.server_code, no_judgment.value.message) == (
            "judgment-not-found",
            f'No judgment "{unknown}".',
        )
    with pytest.raises(NotFoundError) as no_run:
        _judge(kindgi, unknown)
    assert (no_run.value.kind, no_run.value.id, no_run.value.message) == (
        "run",
        unknown,
        f'No run "{unknown}".',
    )
    with pytest.raises(NotFoundError) as no_class:
        _judge(kindgi, run["id"], judge_class_id=unknown)
    assert (no_class.value.server_code, no_class.value.kind) == ("judge-class-not-found", "judge-class")
    assert no_class.value.message == f'No judge-class "{unknown}".'

    # The client itself refuses a reason over 4,000 characters; sent through its transport, the server
    # refuses it too, as its own bad input.
    with pytest.raises(InvalidRequestError) as too_long:
        kindgi._request(
            CREATE, path={}, query={}, headers={}, body={**_body(run["id"]), "reason": "x" * 4001}
        )
    assert (too_long.value.server_code, too_long.value.details) == ("bad-input", {"field": "reason"})
    assert too_long.value.message == "reason: String should have at most 4000 characters"
    assert too_long.value.issues == [{"path": "reason", "message": too_long.value.message}]
    with pytest.raises(InvalidRequestError) as maybe:
        kindgi._request(LIST, path={}, query={"verdict": "maybe"}, headers={})
    assert (maybe.value.message, maybe.value.details) == (
        'verdict: "maybe" is not one of yes, no.',
        {"field": "verdict"},
    )

    admin.runs.erase(run["id"])
    with pytest.raises(ConflictError) as erased:
        _judge(kindgi, run["id"])
    assert erased.value.message == f'Run "{run["id"]}" was erased: there is no output left to judge.'

    reader = _kindgi_for(admin, live_server, "reader", "read")
    with reader, pytest.raises(AuthError) as denied:
        _judge(reader, _run(admin, live_server)["id"])
    assert (denied.value.status, denied.value.server_code, denied.value.reason) == (
        403,
        "permission-denied",
        "forbidden",
    )
    with (
        Kindgi(live_server.url, token="rl_not_a_token", max_retries=0) as stranger,
        pytest.raises(AuthError) as unknown_token,
    ):
        stranger.judgments.list()
    assert (unknown_token.value.status, unknown_token.value.reason) == (401, "unauthenticated")


def _body(run_id: str) -> dict[str, Any]:
    return {"runId": run_id, "item": {"key": "kb-101"}, "verdict": "no"}


def test_an_idempotency_key_makes_a_retry_safe(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    run = _run(admin, live_server)
    first = _judge(kindgi, run["id"], idempotency_key="judge-1182")
    again = _judge(kindgi, run["id"], idempotency_key="judge-1182")
    assert again == first
    assert [correction["id"] for correction in admin.corrections.list()] == [first.id]

    with pytest.raises(ConflictError) as mismatch:
        _judge(kindgi, run["id"], verdict="yes", idempotency_key="judge-1182")
    assert (mismatch.value.status, mismatch.value.server_code) == (409, "idempotency-key-body-mismatch")
    assert mismatch.value.message == (
        "This Idempotency-Key was used for another request; use a new key for a new request."
    )
    removed = kindgi.judgments.unregister(first.id, idempotency_key="remove-1182")
    assert kindgi.judgments.unregister(first.id, idempotency_key="remove-1182") == removed


# ---------------------------------------------------------------------------------------- judge classes


def test_judge_classes_are_corrector_groups(kindgi: Kindgi, admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    made = kindgi.judge_classes.create(
        scope={"kind": "project", "projectId": project}, name="Support leads", weight=2, description="Leads"
    )
    assert isinstance(made, models.JudgeClass)
    assert (made.name, made.weight, made.description, made.tenant_id) == (
        "Support leads",
        2.0,
        "Leads",
        admin.me()["workspaceId"],
    )
    assert made.scope == models.JudgeClassScopeProject(kind="project", project_id=project)
    assert admin.corrector_groups.get(made.id)["name"] == "Support leads"

    tenant = kindgi.judge_classes.create(
        scope={"kind": "tenant"}, name="Everyone", weight=1, idempotency_key="class-1"
    )
    replayed = kindgi.judge_classes.create(
        scope={"kind": "tenant"}, name="Everyone", weight=1, idempotency_key="class-1"
    )
    assert replayed == tenant
    with pytest.raises(ConflictError) as mismatch:
        kindgi.judge_classes.create(scope={"kind": "tenant"}, name="All", weight=1, idempotency_key="class-1")
    assert mismatch.value.server_code == "idempotency-key-body-mismatch"
    assert tenant.scope == models.JudgeClassScopeTenant(kind="tenant")
    assert [c.id for c in paginate(kindgi.judge_classes.list, limit=1)] == [made.id, tenant.id]
    assert [c.id for c in kindgi.judge_classes.list(scope_kind="project", project_id=project).data] == [
        made.id
    ]

    changed = kindgi.judge_classes.update(
        made.id, weight=3, assertable_by={"minReviewerRole": "senior"}, idempotency_key="k-1"
    )
    assert (changed.weight, changed.assertable_by) == (
        3.0,
        models.JudgeClassAssertableByView(min_reviewer_role="senior"),
    )
    assert kindgi.judge_classes.get(made.id) == changed
    lifted = kindgi.judge_classes.update(made.id, assertable_by=None)
    assert lifted.assertable_by is None

    removed = kindgi.judge_classes.unregister(tenant.id)
    assert (removed.judge_class_id, removed.unregistered) == (tenant.id, True)
    assert kindgi.judge_classes.get(tenant.id).unregistered_at is not None
    assert [c.id for c in kindgi.judge_classes.list().data] == [made.id]


def test_judge_class_refusals_in_the_old_words(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    project = live_server.project_id
    made = kindgi.judge_classes.create(
        scope={"kind": "project", "projectId": project}, name="Leads", weight=1
    )
    with pytest.raises(ConflictError) as taken:
        kindgi.judge_classes.create(scope={"kind": "project", "projectId": project}, name="Leads", weight=1)
    assert (taken.value.status, taken.value.server_code) == (409, "judge-class-name-taken")
    assert taken.value.details == {"name": "Leads", "judgeClassId": made.id}

    with pytest.raises(InvalidRequestError) as unknown_field:
        kindgi.judge_classes.create(scope={"kind": "tenant"}, name="x", weight=1, colour="red")
    assert unknown_field.value.message == "Unknown field(s): colour."
    with pytest.raises(NotFoundError) as missing:
        kindgi.judge_classes.get("nope")
    assert (missing.value.server_code, missing.value.message) == (
        "judge-class-not-found",
        'No judge-class "nope".',
    )

    other = admin.projects.create("Billing")
    elsewhere = kindgi.judge_classes.create(
        scope={"kind": "project", "projectId": other["id"]}, name="Billing leads", weight=1
    )
    run = _run(admin, live_server)
    with pytest.raises(InvalidRequestError) as not_here:
        _judge(kindgi, run["id"], judge_class_id=elsewhere.id)
    assert (not_here.value.status, not_here.value.server_code) == (400, "judge-class-not-applicable")
    assert not_here.value.details == {"judgeClassId": elsewhere.id, "runId": run["id"]}

    seniors = kindgi.judge_classes.create(
        scope={"kind": "project", "projectId": project},
        name="Seniors",
        weight=2,
        assertable_by={"minReviewerRole": "senior"},
    )
    with (
        _kindgi_for(admin, live_server, "junior", "write") as junior,
        pytest.raises(AuthError) as not_allowed,
    ):
        _judge(junior, run["id"], judge_class_id=seniors.id)
    assert (not_allowed.value.status, not_allowed.value.server_code) == (403, "judge-class-not-allowed")

    expert = _judge(kindgi, run["id"], judge_class_id=seniors.id)  # the admin meets every restriction
    assert (expert.judge_class_id, expert.restricted) == (seniors.id, True)
    assert admin.corrections.get(expert.id)["expert"] is True
    assert [j.id for j in kindgi.judgments.list(judge_class_id=seniors.id).data] == [expert.id]


def test_what_the_old_client_cant_read_is_said_so_it_can(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    """A correction's item may have an empty key, which no judgment has; a group may name up to 1,000
    principals, where the old client reads 100: the one is no judgment, the other says how many."""
    keyless = admin.corrections.create(
        run_id=_run(admin, live_server)["id"], items=[{"key": "", "verdict": "wrong"}]
    )
    assert kindgi.judgments.list().data == []
    with pytest.raises(NotFoundError):
        kindgi.judgments.get(keyless["id"])

    named = [admin.users.create(f"reviewer-{n}")["id"] for n in range(101)]
    many = admin.corrector_groups.create(
        scope={"kind": "tenant"}, name="Named reviewers", assertable_by={"principalIds": named}
    )
    assert len(many["assertableBy"]["principalIds"]) == 101  # Redline's own client sees every one
    view = models.JudgeClassAssertableByView(principal_count=101)
    assert kindgi.judge_classes.get(many["id"]).assertable_by == view
    assert [c.assertable_by for c in kindgi.judge_classes.list().data] == [view]
    few = kindgi.judge_classes.update(many["id"], assertable_by={"principalIds": named[:2]})
    assert few.assertable_by == models.JudgeClassAssertableByView(principal_ids=named[:2])
