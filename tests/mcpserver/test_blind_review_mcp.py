"""Blind review through the `mcp` client, over stdio and over streamable HTTP, on both stores: get_run and
export_runs leave out another reviewer's values on an item of a blind queue for a reviewer who has not
saved their own, and show them once they have; an admin and a reader see them throughout."""

from __future__ import annotations

from typing import Any

import httpx

from tests.asyncrun import run_async
from tests.mcpserver.conftest import Connector, World, call
from tests.queues.blind_seed import Blind, review, seed_blind


def _values(answer: dict[str, Any]) -> list[tuple[str, Any]]:
    return sorted((said["authorName"], said["value"]) for said in answer["reviewValues"])


async def _seen(assistant: Connector, who: str, seeded: Blind) -> tuple[list[Any], list[Any]]:
    """What `who` reads of the item's run: through get_run, and through export_runs."""
    async with assistant.session(who) as session:
        run = await call(session, "get_run", run_id=seeded.trace_id)
        exported = await call(session, "export_runs", run_ids=[seeded.trace_id])
    [record] = exported["items"]
    return _values(run), _values(record)


def test_a_reviewer_reads_the_others_values_once_they_have_saved_theirs(
    assistant: Connector, world: World
) -> None:
    with httpx.Client(base_url=world.server.url, timeout=30) as http:
        seeded = seed_blind(http, world.project_id)
        review(http, seeded, "anouk", rating="bad")
        for name in ("bram", "rita"):
            world.tokens[name] = seeded.people[name]["Authorization"].removeprefix("Bearer ")

        def seen(who: str) -> tuple[list[Any], list[Any]]:
            return run_async(lambda: _seen(assistant, who, seeded))

        anouks = [("anouk", "bad")]
        assert seen("bram") == ([], [])
        assert seen("admin") == (anouks, anouks)
        assert seen("rita") == (anouks, anouks)
        review(http, seeded, "bram", rating="good")
        both = [("anouk", "bad"), ("bram", "good")]
        assert seen("bram") == (both, both)
