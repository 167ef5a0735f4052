"""How a call that fails for no fault of its arguments is answered: a busy store says to try again, and
anything unexpected is logged on the server and answered with a sentence that leaks nothing."""

from __future__ import annotations

import logging
from typing import Any, cast

import pytest
from mcp import types
from sqlalchemy.exc import TimeoutError as PoolTimeout

from redline.db import Database
from redline.identity.service import Actor
from redline.mcp.server import SOMETHING_WENT_WRONG, STORE_BUSY, answer


def _failing(error: Exception) -> Any:
    def caller(db: Database, request: Any | None) -> Actor:
        raise error

    return caller


def _text(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


NO_STORE = cast(Database, None)


def test_a_busy_store_is_a_sentence_to_try_again(caplog: pytest.LogCaptureFixture) -> None:
    result = answer(NO_STORE, _failing(PoolTimeout("QueuePool limit reached")), None, "list_projects", {})
    assert (result.isError, _text(result)) == (True, STORE_BUSY)
    assert STORE_BUSY == (
        "The store is busy or unreachable, and nothing was changed: try the call again in a moment."
    )
    assert "store busy or unreachable for MCP tool list_projects" in caplog.text


def test_an_unexpected_failure_is_logged_and_leaks_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="redline.mcp"):
        result = answer(NO_STORE, _failing(RuntimeError("secret detail")), None, "search_runs", {})
    assert (result.isError, _text(result)) == (True, SOMETHING_WENT_WRONG)
    assert "secret detail" not in _text(result)
    [record] = caplog.records
    assert record.exc_info is not None
    assert "secret detail" in str(record.exc_info[1])
