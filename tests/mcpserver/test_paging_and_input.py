"""Lists answer a page and a cursor, never everything; bad input is a tool error whose sentence says
what is wrong and where."""

from __future__ import annotations

from tests.asyncrun import run_async
from tests.mcpserver.conftest import Connector, World, call, refused
from tests.samples import make_run

EXTRA_RUNS = 5


def test_every_list_pages_with_a_cursor(assistant: Connector, world: World) -> None:
    for number in range(EXTRA_RUNS):
        world.admin.runs.create(
            make_run(
                world.project_id, externalId=f"more-{number}", startedAt=f"2026-11-0{5 + number}T10:00:00Z"
            )
        )
    world.admin.queues.create("Second queue", project_id=world.project_id)

    async def every(session: object, tool: str, **arguments: object) -> list[list[dict[str, object]]]:
        pages: list[list[dict[str, object]]] = []
        cursor = None
        while True:
            page = await call(session, tool, cursor=cursor, **arguments)  # type: ignore[arg-type]
            pages.append(page["items"])
            cursor = page["nextCursor"]
            if cursor is None:
                return pages

    async def scenario() -> None:
        async with assistant.session("reader") as session:
            pages = await every(session, "search_runs", limit=2)
            assert [len(page) for page in pages] == [2, 2, 2, 2]
            names = [run["externalId"] for page in pages for run in page]
            assert names == [
                *(f"more-{n}" for n in reversed(range(EXTRA_RUNS))),
                "running-1",
                "silver-1",
                "gold-1",
            ]

            queues = await every(session, "list_queues", limit=1)
            assert [[queue["name"] for queue in page] for page in queues] == [
                ["Second queue"],
                ["Support review"],
            ]
            items = await every(session, "queue_items", queue_id=world.queue_id, limit=1)
            assert [[item["runId"] for item in page] for page in items] == [
                [world.runs["gold"]["id"]],
                [world.runs["silver"]["id"]],
            ]

            first = await call(session, "expert_queue_items", project="default", limit=3)
            assert (len(first["items"]), first["total"], first["progress"]["open"]) == (3, 7, 7)
            rest = await call(
                session, "expert_queue_items", project="default", limit=3, cursor=first["nextCursor"]
            )
            assert len(rest["items"]) == 3
            assert "progress" not in rest
            assert {item["runId"] for item in first["items"]}.isdisjoint(
                item["runId"] for item in rest["items"]
            )

            projects = await call(session, "list_projects", limit=1)
            assert projects["nextCursor"] is None

    run_async(scenario)


def test_a_long_run_comes_in_parts(assistant: Connector, world: World) -> None:
    steps = [{"role": "user" if n % 2 else "assistant", "content": f"turn {n}"} for n in range(150)]
    long = world.admin.runs.create(make_run(world.project_id, steps=steps))

    async def scenario() -> None:
        async with assistant.session("reader") as session:
            first = await call(session, "get_run", run_id=long["id"])
            assert [step["index"] for step in first["steps"]] == list(range(100))
            assert (first["stepCount"], first["nextStepOffset"], first["nextSpanOffset"]) == (150, 100, None)
            rest = await call(session, "get_run", run_id=long["id"], step_offset=first["nextStepOffset"])
            assert [step["content"] for step in rest["steps"]] == [f"turn {n}" for n in range(100, 150)]
            assert rest["nextStepOffset"] is None

    run_async(scenario)


def test_bad_input_is_a_tool_error_with_a_clear_sentence(assistant: Connector, world: World) -> None:
    gold = world.runs["gold"]

    async def scenario() -> None:
        async with assistant.session("writer") as session:
            assert await refused(session, "search_runs", limit=500) == (
                "Bad arguments for search_runs: limit: Input should be less than or equal to 50."
            )
            assert await refused(session, "get_run") == "Bad arguments for get_run: run_id: Field required."
            assert (await refused(session, "get_run", run_id="order-1182")).startswith(
                "Bad arguments for get_run: run_id: Input should be a valid UUID"
            )
            assert await refused(session, "search_runs", projects="default") == (
                "Bad arguments for search_runs: projects: Extra inputs are not permitted."
            )
            assert await refused(session, "search_runs", status=["finished"]) == (
                "Bad arguments for search_runs: status[0]: Input should be 'running', 'completed', "
                "'failed', 'cancelled' or 'suspended'."
            )
            assert await refused(session, "search_runs", cursor="page-2") == (
                '"page-2" is not a cursor this list gave out.'
            )
            assert await refused(session, "export_runs", run_ids=[gold["id"]], project="default") == (
                "Bad arguments for export_runs: give run_ids, or filters (with a cursor), not both."
            )
            assert await refused(session, "delete_everything") == (
                'There is no tool "delete_everything"; tools/list names every tool.'
            )
            # The services' own sentences, as the API gives them.
            nowhere = "0190f3c1-0000-7000-8000-000000000000"
            assert await refused(session, "get_run", run_id=nowhere) == f'No run "{nowhere}".'
            assert await refused(session, "add_annotation", run_id=gold["id"]) == (
                "an annotation needs a rating, a comment, or both"
            )
            assert await refused(session, "make_correction", run_id=gold["id"], answer="wrong") == (
                'answer: "wrong" needs shouldSay or why.'
            )
            assert await refused(
                session, "make_correction", run_id=world.runs["running"]["id"], answer="right"
            ) == (f'Run "{world.runs["running"]["id"]}" has no output to correct yet (status running).')
            said = await refused(
                session, "add_review_values", run_id=gold["id"], values=[{"key": "quality", "value": "meh"}]
            )
            assert "meh" in said
            assert await refused(session, "trends", project="default", period="7d") == (
                "Bad arguments for trends: period: Input should be 'all', '90d' or '30d'."
            )

    run_async(scenario)
