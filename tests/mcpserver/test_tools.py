"""Every tool through the `mcp` client, over stdio and over streamable HTTP, on both stores: what each
answers with real data, and that writes are made as the token's principal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from mcp import types
from sqlalchemy import select

from redline.cli.main import cli
from redline.db import Database
from redline.jobs.models import QUEUED, Job
from redline.mcp.table import TOOLS
from redline.stats.group_agreement_job import GROUP_AGREEMENT_JOB
from tests.asyncrun import run_async
from tests.conftest import run_waiting_jobs
from tests.mcpserver.conftest import Connector, World, call


def test_initialize_names_the_server_and_lists_every_tool(assistant: Connector) -> None:
    async def scenario() -> None:
        async with assistant.session() as session:
            listed = (await session.list_tools()).tools
        assert [tool.name for tool in listed] == [tool.name for tool in TOOLS]
        for tool in listed:
            assert len(tool.description or "") > 80, tool.name
            assert tool.inputSchema["type"] == "object"
            assert tool.inputSchema.get("additionalProperties") is False, tool.name
            for name, schema in tool.inputSchema.get("properties", {}).items():
                assert schema.get("description"), (tool.name, name)
            writes = next(t.writes for t in TOOLS if t.name == tool.name)
            assert tool.annotations == types.ToolAnnotations(
                title=tool.title, readOnlyHint=not writes, destructiveHint=False, openWorldHint=False
            )

    run_async(scenario)


def test_the_reading_tools_answer_with_the_projects_data(assistant: Connector, world: World) -> None:
    gold, silver = world.runs["gold"], world.runs["silver"]

    async def scenario() -> None:
        async with assistant.session("reader") as session:
            projects = await call(session, "list_projects")
            assert projects == {
                "items": [{"id": world.project_id, "name": "default", "role": "read"}],
                "nextCursor": None,
            }

            found = await call(session, "search_runs", project="default")
            assert [run["externalId"] for run in found["items"]] == ["running-1", "silver-1", "gold-1"]
            assert found["items"][2]["said"] == {"ratings": 1, "comments": 1, "corrections": 0}
            assert "steps" not in found["items"][0]
            narrowed = {
                "has_ratings": True,
                "metadata": {"tier": "gold"},
                "status": ["completed"],
                "agent": "support-agent",
                "version": "v1",
                "session_id": "conversation-7",
                "since": "2026-11-02T00:00:00Z",
                "until": "2026-11-03T00:00:00",
            }
            assert [r["id"] for r in (await call(session, "search_runs", **narrowed))["items"]] == [
                gold["id"]
            ]
            others = await call(session, "search_runs", has_ratings=False, metadata={"tier": "silver"})
            assert [run["id"] for run in others["items"]] == [silver["id"]]

            run = await call(session, "get_run", run_id=gold["id"])
            assert run["id"] == gold["id"]
            assert [step["role"] for step in run["steps"]] == [
                "system",
                "user",
                "assistant",
                "tool",
                "assistant",
            ]
            assert run["steps"][2]["toolInput"] == {"order_id": "1182"}
            assert (run["nextStepOffset"], run["nextSpanOffset"], run["spanCount"]) == (None, None, 0)
            [rating] = run["annotations"]
            assert (rating["rating"], rating["comment"], rating["authorName"]) == (
                1,
                "Looked the order up first.",
                "admin",
            )
            assert (run["reviewValues"], run["corrections"]) == ([], [])

            queues = await call(session, "list_queues")
            [queue] = queues["items"]
            assert (queue["id"], queue["name"], queue["progress"]) == (
                world.queue_id,
                "Support review",
                {"items": 2, "reviewed": 0},
            )
            items = await call(session, "queue_items", queue_id=world.queue_id)
            assert [item["runId"] for item in items["items"]] == [gold["id"], silver["id"]]
            assert items["queue"]["progress"] == {"items": 2, "reviewed": 0}
            assert [item["reviewed"] for item in items["items"]] == [False, False]
            assert [key["key"] for key in items["queue"]["reviewKeys"]] == ["quality"]

            expert = await call(
                session, "expert_queue_items", project=world.project_id, rule_id=world.rule_id
            )
            assert [item["runId"] for item in expert["items"]] == [gold["id"], silver["id"]]
            assert expert["total"] == 2
            assert expert["progress"] == {"open": 2, "corrected": 0, "dismissed": 0, "erased": 0}
            assert expert["items"][0]["rules"][0]["ruleId"] == world.rule_id

            keys = await call(session, "review_keys", project="default")
            [key] = keys["items"]
            assert (key["key"], key["type"], [o["value"] for o in key["options"]]) == (
                "quality",
                "categorical",
                ["good", "bad"],
            )

            results = await call(session, "rule_results", project="default", rule_id=world.rule_id)
            assert results["rule"]["name"] == "Every completed run"
            assert results["ruleId"] == world.rule_id
            assert {
                (group["agentVersion"], group["added"], group["open"]) for group in results["groups"]
            } == {
                ("v1", 1, 1),
                ("v2", 1, 1),
            }
            trends = await call(session, "trends", project="default", period="30d")
            assert [rule["ruleId"] for rule in trends["rules"]] == [world.rule_id]
            assert trends["period"] == "30d"

    run_async(scenario)


def test_writes_are_made_as_the_tokens_principal(assistant: Connector, world: World) -> None:
    gold, silver = world.runs["gold"], world.runs["silver"]
    step_id = gold["steps"][4]["id"]

    async def writing() -> str:
        async with assistant.session("writer") as session:
            said = await call(
                session,
                "add_annotation",
                run_id=gold["id"],
                step_id=step_id,
                rating=-1,
                comment="The date is made up",
                quote={"text": "May 3"},
            )
            assert (said["authorId"], said["authorName"], said["stepId"]) == (
                world.user_ids["writer"],
                "writer",
                step_id,
            )
            assert said["quote"]["start"] == "Your order was delivered on ".__len__()

            valued = await call(
                session,
                "add_review_values",
                run_id=silver["id"],
                values=[{"key": "quality", "value": "bad", "explanation": "No lookup"}],
            )
            [value] = valued["values"]
            assert (value["key"], value["value"], value["authorId"]) == (
                "quality",
                "bad",
                world.user_ids["writer"],
            )

            items = await call(session, "queue_items", queue_id=world.queue_id)
            first = items["items"][0]["id"]
            reviewed = await call(
                session,
                "review_queue_item",
                queue_id=world.queue_id,
                item_id=first,
                values=[{"key": "quality", "value": "good"}],
            )
            assert (reviewed["reviewed"], reviewed["reviewedBy"]) == (True, world.user_ids["writer"])
            assert (await call(session, "list_queues"))["items"][0]["progress"] == {"items": 2, "reviewed": 1}

            corrected = await call(
                session,
                "make_correction",
                run_id=gold["id"],
                answer="wrong",
                should_say="Check the carrier before naming a date.",
                why="The date came from nowhere.",
            )
            assert corrected["madeBy"] == {"kind": "user", "id": world.user_ids["writer"]}
            assert (corrected["status"], corrected["sortedTo"]) == ("open", "improve")
            expert = await call(session, "expert_queue_items", project="default", state=["corrected"])
            assert [item["runId"] for item in expert["items"]] == [gold["id"]]
            assert expert["items"][0]["progress"]["total"] == 1
            assert expert["progress"] == {"open": 1, "corrected": 1, "dismissed": 0, "erased": 0}

            run = await call(session, "get_run", run_id=gold["id"])
            assert [c["id"] for c in run["corrections"]] == [corrected["id"]]
            assert [a["rating"] for a in run["annotations"]] == [1, -1]
            assert [(v["key"], v["value"]) for v in run["reviewValues"]] == [("quality", "good")]
            results = await call(session, "rule_results", project="default", rule_id=world.rule_id)
            v1 = next(group for group in results["groups"] if group["agentVersion"] == "v1")
            assert (v1["corrected"], v1["corrections"], v1["yesShare"]) == (1, 1, 0.0)
            correction_id: str = corrected["id"]
            return correction_id

    correction_id = run_async(writing)

    async def publishing() -> None:
        async with assistant.session("publisher") as session:
            changed = await call(
                session,
                "change_correction",
                correction_id=correction_id,
                status="being-fixed",
                link="https://example.com/acme/agent/pull/7",
            )
            assert changed["status"] == "being-fixed"

    run_async(publishing)
    # The API sees what the tools wrote, made by their principals; the status change is audited as such.
    [event] = list(world.admin.audit_events.list(kind="correction-status-changed"))
    assert (event["actor"], event["data"]["to"]) == (
        {"kind": "user", "id": world.user_ids["publisher"]},
        "being-fixed",
    )
    ratings = [said for said in world.admin.annotations.list(gold["id"]) if said["rating"] is not None]
    assert [(a["rating"], a["author_name"]) for a in ratings] == [(1, "admin"), (-1, "writer")]
    assert ratings[1]["author_id"] == world.user_ids["writer"]


def test_an_export_carries_runs_whole_with_what_was_said_and_imports_again(
    assistant: Connector, world: World, tmp_path: Path
) -> None:
    gold = world.runs["gold"]
    world.admin.corrections.create(run_id=gold["id"], answer="right")

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with assistant.session("reader") as session:
            pages, cursor = [], None
            while True:
                page = await call(session, "export_runs", project="default", limit=2, cursor=cursor)
                pages.append(page["items"])
                cursor = page["nextCursor"]
                if cursor is None:
                    break
            named = await call(session, "export_runs", run_ids=[gold["id"], gold["id"]])
            return [record for page in pages for record in page], named["items"]

    records, named = run_async(scenario)
    assert [record["run"]["externalId"] for record in records] == ["running-1", "silver-1", "gold-1"]
    [exported] = named
    assert exported == records[2]
    assert exported["id"] == gold["id"]
    assert [step["content"] for step in exported["run"]["steps"]] == [
        step["content"] for step in gold["steps"]
    ]
    assert [a["rating"] for a in exported["annotations"]] == [1]
    assert [c["answer"] for c in exported["corrections"]] == ["right"]

    # Each record's `run` is a line `redline import` reads back, into any project.
    lines = tmp_path / "runs.jsonl"
    copies = [{**record["run"], "externalId": "copy-" + record["run"]["externalId"]} for record in records]
    lines.write_text("".join(json.dumps(copy) + "\n" for copy in copies))
    done = CliRunner().invoke(
        cli, ["--database-url", world.database_url, "import", str(lines), "--project", "default"]
    )
    assert done.exit_code == 0, done.output
    copied = world.admin.runs.list(project_id=world.project_id)
    assert sorted(run["externalId"] for run in copied if run["externalId"].startswith("copy-")) == [
        "copy-gold-1",
        "copy-running-1",
        "copy-silver-1",
    ]


def test_trends_and_results_ask_the_job_worker_for_the_groups_agreement(
    assistant: Connector, world: World, db: Database
) -> None:
    """A read tool answers that the agreement between corrector groups is being computed and, after its
    read, asks the job worker for it once, however often it is called; then it answers the stored figures."""
    subject = f"trends:{world.project_id}:all"

    async def reading() -> list[dict[str, Any]]:
        async with assistant.session("reader") as session:
            answers = [await call(session, "trends", project="default") for _ in range(2)]
            results = await call(session, "rule_results", project="default", rule_id=world.rule_id)
            return [*(answer["rules"][0]["agreement"] for answer in answers), results["agreement"]]

    for agreement in run_async(reading):
        assert (agreement["state"], agreement["computedAt"], agreement["sentences"]) == (
            "computing",
            None,
            [],
        )
    with db.read() as session:
        waiting = session.scalars(
            select(Job.subject).where(Job.kind == GROUP_AGREEMENT_JOB, Job.state == QUEUED)
        )
        assert sorted(map(str, waiting)) == sorted([f"rule:{world.rule_id}:since:all", subject])
    assert run_waiting_jobs(db) == 2

    async def again() -> dict[str, Any]:
        async with assistant.session("reader") as session:
            agreement: dict[str, Any] = (await call(session, "trends", project="default"))["rules"][0][
                "agreement"
            ]
            return agreement

    stored = run_async(again)
    assert (stored["state"], stored["stale"]) == ("stored", False)
    assert stored["sentences"] == [
        "Agreement between corrector groups: too few runs corrected by two groups to say (0 so far)"
    ]
