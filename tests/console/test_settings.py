"""Settings pages: human reviews, members and tokens, in a browser where it matters and
over TestClient for refusals; what the pages change is read back through the API."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import expect

from redline.client import AuthError, Client
from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown

# ------------------------------------------------------------------------------------------ human reviews


def test_create_edit_and_delete_a_human_review(console: Console) -> None:
    project = console.server.project_id
    page = console.open("/ui/settings/human-reviews")
    new = page.get_by_role("form", name="New human review")
    new.get_by_label("Key").fill("tone")
    new.get_by_label("Title").fill("Tone")
    new.get_by_label("Options").fill("friendly | Warm and polite\ncurt")
    new.get_by_label("Several values at once").check()
    new.get_by_role("button", name="Add the human review").click()
    expect(page.get_by_role("status")).to_have_text('Added the human review "tone".')
    row = page.locator("#human-reviews tr[data-key=tone]")
    expect(row).to_contain_text("friendly, curt · several at once")
    [made] = list(console.api.human_reviews.list(project_id=project))
    assert (made["key"], made["type"], made["options"], made["multiple"]) == (
        "tone",
        "categorical",
        ["friendly", "curt"],
        True,
    )
    assert made["option_details"][0] == {"value": "friendly", "description": "Warm and polite"}

    row.get_by_text("Edit", exact=True).click()
    edit = page.get_by_role("form", name="Edit tone")
    expect(edit.get_by_label("Options")).to_have_value("friendly | Warm and polite\ncurt")
    edit.get_by_label("Title").fill("Tone score")
    edit.get_by_label("Type").select_option("range")
    edit.get_by_label("Min").fill("1")
    edit.get_by_label("Max").fill("5")
    console.shoot("human-reviews-edit")
    edit.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status")).to_have_text('Changed the human review "tone".')
    expect(row).to_contain_text("from 1 to 5")
    changed = console.api.human_reviews.get(made["_id"])
    assert (changed["display_name"], changed["type"], changed["min"], changed["max"]) == (
        "Tone score",
        "range",
        1,
        5,
    )

    row.get_by_text("Delete", exact=True).click()
    confirm = page.get_by_role("form", name="Delete tone")
    expect(confirm).to_contain_text("the values already recorded under its key stay on their traces")
    confirm.get_by_role("button", name="Delete it").click()
    expect(page.get_by_role("status")).to_have_text(
        'Deleted the human review "tone"; the values recorded under its key stay on their traces.'
    )
    page.get_by_role("button", name="Add the default reviews").click()
    expect(page.get_by_role("status")).to_have_text("Added the default reviews: rating, defects.")
    console.shoot("human-reviews")
    assert sorted(key["key"] for key in console.api.human_reviews.list(project_id=project)) == [
        "defects",
        "rating",
    ]


def test_a_taken_key_is_refused_with_the_services_sentence_and_the_form_kept(harness: Harness) -> None:
    console = console_client(harness)
    form = {
        "project": harness.project_id,
        "key": "rating",
        "title": "Stars",
        "type": "range",
        "min": "1",
        "max": "5",
    }
    assert console.submit("/ui/settings/human-reviews", form).status_code == 303
    again = console.submit("/ui/settings/human-reviews", {**form, "title": "Stars again"})
    assert again.status_code == 409
    sentence = (
        'A human review with key "rating" already exists in project "default"; '
        "change that one, or pick another key."
    )
    assert f'<p class="error" role="alert" id="create-error">{shown(sentence)}</p>' in again.text
    assert 'id="new-key" name="key" value="rating"' in again.text
    assert 'id="new-title" name="title" value="Stars again"' in again.text
    bad_range = console.submit("/ui/settings/human-reviews", {**form, "key": "stars", "min": "5", "max": "1"})
    assert bad_range.status_code == 400
    assert shown("min must be less than max; they are 5 and 1.") in bad_range.text


def test_a_reader_sees_human_reviews_but_is_not_offered_changes(harness: Harness) -> None:
    harness.client.post(
        "/v2/human-reviews",
        json={"key": "tone", "type": "text", "project_id": harness.project_id},
        headers=harness.admin,
    )
    reader = console_client(harness, role_token(harness, "reader", "read"))
    listed = reader.http.get("/ui/settings/human-reviews")
    assert listed.status_code == 200
    assert "<code>tone</code>" in listed.text
    assert "any text" in listed.text
    assert "New human review" not in listed.text
    assert "Add the default reviews" not in listed.text
    assert "Your role in this project is read: changing its human reviews takes write." in listed.text
    refused = reader.submit("/ui/settings/human-reviews/defaults", {"project": harness.project_id})
    assert refused.status_code == 403
    assert shown('This needs the write role in project "default"; you have read.') in refused.text


# ------------------------------------------------------------------------------------------------ tokens


def test_a_new_tokens_secret_is_shown_once_and_revoking_it_stops_it(console: Console) -> None:
    page = console.open("/ui/settings/tokens")
    page.get_by_label("Name").fill("ci-export")
    page.get_by_role("button", name="Make the token").click()
    expect(page.get_by_role("region", name="The new token")).to_contain_text(
        "Copy it now: it won't be shown again."
    )
    secret = page.locator("#new-secret").inner_text().strip()
    assert secret.startswith("rl_")
    console.shoot("tokens-new")
    with Client(console.server.url, token=secret) as made:
        assert made.me()["name"] == "admin"
    page.goto(console.server.url + "/ui/settings/tokens")
    assert secret not in page.content()
    row = page.locator(f"#tokens tr[data-prefix='{secret[:11]}']")
    expect(row).to_contain_text("ci-export")
    expect(row).to_contain_text("active")
    row.get_by_text("Revoke", exact=True).click()
    row.get_by_role("button", name="Revoke it").click()
    expect(page.get_by_role("status")).to_have_text("The token is revoked: nothing can use it any more.")
    expect(row).to_contain_text("revoked")
    console.shoot("tokens")
    with Client(console.server.url, token=secret) as revoked:
        try:
            revoked.me()
            raise AssertionError("a revoked token still works")
        except AuthError:
            pass


def _user(harness: Harness, name: str) -> dict[str, Any]:
    """A new user of the workspace, made over the API by its admin."""
    made: dict[str, Any] = harness.client.post(
        "/v1/users", json={"name": name, "kind": "user"}, headers=harness.admin
    ).json()
    return made


def test_revoking_the_token_you_signed_in_with_signs_you_out(harness: Harness) -> None:
    user = _user(harness, "ann")
    issued = harness.client.post(
        f"/v1/users/{user['id']}/tokens", json={"name": "laptop"}, headers=harness.admin
    ).json()
    console = console_client(harness, issued["token"])
    listed = console.http.get("/ui/settings/tokens").text
    assert "You are signed in with this token: revoking it signs you out." in listed
    # Someone else's tokens are a workspace admin's to see.
    others = console.http.get(f"/ui/settings/tokens?user={harness.admin_id}")
    assert others.status_code == 403
    assert shown("Only a workspace admin can see someone else's tokens.") in others.text
    answer = console.submit(f"/ui/settings/tokens/{issued['id']}/revoke", {})
    assert (answer.status_code, answer.headers["location"]) == (303, "/ui/sign-in")
    assert harness.client.get("/ui/settings/tokens", follow_redirects=False).status_code == 303


def test_a_workspace_admin_manages_another_users_tokens(harness: Harness) -> None:
    user = _user(harness, "bob")
    console = console_client(harness)
    made = console.submit("/ui/settings/tokens", {"user": user["id"], "name": "bob's bot"})
    assert made.status_code == 201
    assert "New token for bob" in made.text
    listed = harness.client.get(f"/v1/users/{user['id']}/tokens", headers=harness.admin).json()["data"]
    assert [token["name"] for token in listed] == ["bob's bot"]
    assert listed[0]["prefix"] in made.text
    empty = console.submit("/ui/settings/tokens", {"user": user["id"], "name": "  "})
    assert empty.status_code == 400
    assert "name: a token&#39;s name is 1 to 200 characters." in empty.text


# ----------------------------------------------------------------------------------------------- members


def test_a_project_admin_changes_a_role_adds_and_removes_members(console: Console) -> None:
    project = console.server.project_id
    ann = console.api.users.create("ann")
    console.api.members.set(project, ann["id"], "read")
    bob = console.api.users.create("bob")
    page = console.open(f"/ui/settings/members?project={project}")
    row = page.locator("#members tr[data-member=ann]")
    row.get_by_label("Role of ann", exact=True).select_option("publish")
    row.get_by_role("button", name="Change").click()
    expect(page.get_by_role("status")).to_have_text("ann now has the publish role.")
    page.get_by_label("User").select_option(label="bob (user)")
    page.get_by_label("Role", exact=True).select_option("write")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("bob is now a member, with the write role.")
    console.shoot("members")
    with console.server.client(console.api.users.create_token(ann["id"])["token"]) as as_ann:
        assert [p["role"] for p in as_ann.projects.list()] == ["publish"]
    with console.server.client(console.api.users.create_token(bob["id"])["token"]) as as_bob:
        assert [p["role"] for p in as_bob.projects.list()] == ["write"]
    page.locator("#members tr[data-member=bob]").get_by_text("Remove", exact=True).click()
    page.get_by_role("form", name="Remove bob").get_by_role("button", name="Remove them").click()
    expect(page.get_by_role("status")).to_have_text("bob is no longer a member of this project.")
    expect(page.locator("#members tr[data-member=bob]")).to_have_count(0)


def test_a_reader_sees_members_but_is_not_offered_changes(harness: Harness) -> None:
    reader = console_client(harness, role_token(harness, "reader", "read"))
    listed = reader.http.get("/ui/settings/members")
    assert listed.status_code == 200
    assert '<tr data-member="reader">' in listed.text
    assert "Role of reader" not in listed.text
    assert "Add a member" not in listed.text
    assert "Your role in this project is read: changing its members takes admin." in listed.text
    refused = reader.submit(
        f"/ui/settings/members/{harness.admin_id}", {"project": harness.project_id, "role": "read"}
    )
    assert refused.status_code == 403
    assert shown('This needs the admin role in project "default"; you have read.') in refused.text


# -------------------------------------------------------------------------------------- indexed metadata


def test_a_project_admin_indexes_a_metadata_key_and_stops_indexing_it(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    page = console.open(f"/ui/settings/indexed-metadata?project={project}")
    expect(page.locator("#indexed-keys")).to_contain_text("No key is indexed")
    form = page.get_by_role("form", name="Index a metadata key")
    form.get_by_label("Metadata key").fill("customer_id")
    form.get_by_role("button", name="Index it").click()
    expect(page.get_by_role("status")).to_have_text(
        "customer_id is indexed: searches filtering on it walk the index once it is ready."
    )
    row = page.locator("#indexed-keys tr[data-key=customer_id]")
    expect(row).to_contain_text("Ready")
    console.shoot("indexed-metadata")
    keys = http.get(f"/v1/projects/{project}/indexed-metadata-keys").json()["data"]
    assert [(key["key"], key["state"]) for key in keys] == [("customer_id", "ready")]
    row.get_by_text("Remove", exact=True).click()
    page.get_by_role("form", name="Stop indexing customer_id").get_by_role(
        "button", name="Stop indexing"
    ).click()
    expect(page.get_by_role("status")).to_have_text(
        "customer_id is no longer indexed: searches on it read every run's metadata again."
    )
    assert http.get(f"/v1/projects/{project}/indexed-metadata-keys").json()["data"] == []


def test_the_indexed_metadata_page_shows_a_backfill_and_refuses_with_the_services_sentence(
    harness: Harness,
) -> None:
    runs = [harness.run(externalId=f"r{n}", metadata={"tier": "gold"}) for n in range(3)]
    assert (
        harness.client.post("/v1/runs/batch", json={"runs": runs}, headers=harness.admin).status_code == 201
    )
    admin = console_client(harness)
    form = {"project": harness.project_id, "key": "tier"}
    assert admin.submit("/ui/settings/indexed-metadata", form).status_code == 303
    listed = admin.http.get(f"/ui/settings/indexed-metadata?project={harness.project_id}").text
    assert "Indexing the runs it had: 0%" in listed
    assert "0 of 3" in listed
    again = admin.submit("/ui/settings/indexed-metadata", form)
    assert again.status_code == 409
    assert shown('The metadata key "tier" is indexed already.') in again.text

    reader = console_client(harness, role_token(harness, "reader", "read"))
    seen = reader.http.get("/ui/settings/indexed-metadata")
    assert seen.status_code == 200
    assert "<code>tier</code>" in seen.text
    assert "Index a metadata key" not in seen.text
    assert "Your role in this project is read: choosing its indexed keys takes admin." in seen.text
    refused = reader.submit("/ui/settings/indexed-metadata/remove", form)
    assert refused.status_code == 403
    assert shown('This needs the admin role in project "default"; you have read.') in refused.text


# ------------------------------------------------------------------------------------------- retention


def test_a_project_admin_sets_a_retention_and_keeps_runs_for_good_again(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    page = console.open(f"/ui/settings/retention?project={project}")
    expect(page.locator("#retention-now")).to_contain_text("For good")
    form = page.get_by_role("form", name="Change retention")
    form.get_by_label("for a number of days").check()
    form.get_by_label("Days", exact=True).fill("30")
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text(
        "Runs keep their content for 30 days: a pass erases older runs' content within the hour."
    )
    expect(page.locator("#retention-now")).to_contain_text("30 days after each run started")
    console.shoot("retention")
    assert http.get(f"/v1/projects/{project}/retention").json()["retentionDays"] == 30
    form = page.get_by_role("form", name="Change retention")
    form.get_by_label("for good").check()
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("Runs keep their content for good.")
    assert http.get(f"/v1/projects/{project}/retention").json()["retentionDays"] is None


def test_the_retention_page_refuses_with_the_services_sentence(harness: Harness) -> None:
    admin = console_client(harness)
    refused = admin.submit("/ui/settings/retention", {"project": harness.project_id, "days": "soon"})
    assert refused.status_code == 400
    assert shown("retentionDays: give a whole number of days from 1 to 36,500, or none") in refused.text
    reader = console_client(harness, role_token(harness, "reader", "read"))
    seen = reader.http.get("/ui/settings/retention")
    assert seen.status_code == 200
    assert "Your role in this project is read: changing its retention takes admin." in seen.text
    denied = reader.submit("/ui/settings/retention", {"project": harness.project_id, "days": "3"})
    assert denied.status_code == 403
    assert shown('This needs the admin role in project "default"; you have read.') in denied.text
