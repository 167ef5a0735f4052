"""`client.corrector_groups`: the real client against a real server over HTTP on both stores: making,
reading, listing, changing (a restriction replaced and lifted) and removing groups, the refusals as
exceptions, and a lost answer retried under the same Idempotency-Key."""

from __future__ import annotations

import pytest

from redline.client import AuthError, Client, ConflictError, InvalidRequestError, NotFoundError
from tests.client.test_client_corrections import LosesFirstAnswer
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer
from tests.samples import make_run


def _senior(admin: Client, live_server: LiveServer) -> Client:
    user = admin.users.create("sena", reviewer_role="senior")
    admin.members.set(live_server.project_id, user["id"], "write")
    return live_server.client(admin.users.create_token(user["id"], name="t")["token"])


def test_make_read_list_change_and_remove(admin: Client, live_server: LiveServer) -> None:
    project = {"kind": "project", "projectId": live_server.project_id}
    expert = admin.corrector_groups.create(
        scope=project, name="expert", weight=3, assertable_by={"minReviewerRole": "senior"}
    )
    assert expert["scope"] == project
    assert expert["weight"] == 3
    assert expert["assertableBy"] == {"minReviewerRole": "senior"}
    peer = admin.corrector_groups.create(scope={"kind": "tenant"}, name="peer", description="anyone")
    assert peer["weight"] == 1
    assert admin.corrector_groups.get(expert["id"]) == expert
    assert [group["name"] for group in admin.corrector_groups.list(limit=1)] == ["expert", "peer"]
    assert [group["name"] for group in admin.corrector_groups.list(scope_kind="tenant")] == ["peer"]
    page = admin.corrector_groups.page(project_id=live_server.project_id, limit=1)
    assert [group["name"] for group in page.data] == ["expert"]
    assert page.has_more
    rest = admin.corrector_groups.page(project_id=live_server.project_id, limit=1, cursor=page.next_cursor)
    assert [group["name"] for group in rest.data] == ["peer"]
    assert rest.next_cursor is None

    # A restriction replaces the whole one before it; None lifts it; fields not passed stay.
    replaced = admin.corrector_groups.update(expert["id"], assertable_by={"principalKinds": ["user"]})
    assert replaced["assertableBy"] == {"principalKinds": ["user"]}
    assert replaced["weight"] == 3
    run = admin.runs.create(make_run(live_server.project_id))
    made = admin.corrections.create(run_id=run["id"], answer="right", corrector_group_id=expert["id"])
    assert made["expert"] is True
    lifted = admin.corrector_groups.update(expert["id"], assertable_by=None, weight=2)
    assert "assertableBy" not in lifted
    assert lifted["weight"] == 2
    assert admin.corrections.get(made["id"])["expert"] is True
    assert "description" not in admin.corrector_groups.update(peer["id"], description=None)

    removed = admin.corrector_groups.unregister(expert["id"])
    assert removed == {"correctorGroupId": expert["id"], "unregistered": True, "wantedBy": []}
    assert "unregisteredAt" in admin.corrector_groups.get(expert["id"])
    assert [group["name"] for group in admin.corrector_groups.list()] == ["peer"]


def test_refusals_are_exceptions_with_the_servers_sentence(admin: Client, live_server: LiveServer) -> None:
    project = {"kind": "project", "projectId": live_server.project_id}
    group = admin.corrector_groups.create(
        scope=project, name="expert", assertable_by={"minReviewerRole": "admin"}
    )
    with pytest.raises(ConflictError) as taken:
        admin.corrector_groups.create(scope=project, name="expert")
    assert taken.value.code == "corrector-group-name-taken"
    with pytest.raises(InvalidRequestError) as unknown:
        admin.corrector_groups.create(scope=project, name="x", assertable_by={"minRole": "senior"})
    assert unknown.value.message == "assertableBy: Unknown field(s): minRole."
    with pytest.raises(NotFoundError) as missing:
        admin.corrector_groups.get("00000000-0000-0000-0000-000000000000")
    assert missing.value.kind == "corrector-group"
    run = admin.runs.create(make_run(live_server.project_id))
    with _senior(admin, live_server) as senior:
        with pytest.raises(AuthError) as forbidden:
            senior.corrector_groups.update(group["id"], weight=9)
        assert forbidden.value.code == "permission-denied"
        with pytest.raises(AuthError) as not_allowed:
            senior.corrections.create(run_id=run["id"], answer="right", corrector_group_id=group["id"])
    assert not_allowed.value.code == "corrector-group-not-allowed"
    assert not_allowed.value.message == (
        f'You may not correct run "{run["id"]}" as corrector group "expert": '
        "it takes only admin reviewers or above."
    )


def test_a_lost_answer_is_retried_under_the_same_key(admin: Client, live_server: LiveServer) -> None:
    transport = LosesFirstAnswer()
    with Client(live_server.url, token=ADMIN_TOKEN, transport=transport) as flaky:
        made = flaky.corrector_groups.create(scope={"kind": "tenant"}, name="peer")
    first_key, retried_key = transport.keys
    assert first_key == retried_key
    # The retry was answered with the group the lost request made: no second one, and no name clash.
    assert made == transport.lost[0]
    assert [group["id"] for group in admin.corrector_groups.list()] == [made["id"]]
    assert admin.corrector_groups.update(made["id"], weight=2, idempotency_key="k") == (
        admin.corrector_groups.update(made["id"], weight=2, idempotency_key="k")
    )
