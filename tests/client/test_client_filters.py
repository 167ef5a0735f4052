"""The client's list methods take their filters as keywords declared once per resource; a misspelt
filter is refused as a spelt-out signature would refuse it, before anything is sent, instead of being
dropped and the list matching everything."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from redline.client import Client

CALLS: dict[str, Callable[[Client], Any]] = {
    "runs.list": lambda client: client.runs.list("p", stauts="open"),  # type: ignore[call-arg]
    "runs.page": lambda client: client.runs.page(project_id="p", stauts="open"),  # type: ignore[call-arg]
    "corrections.list": lambda client: client.corrections.list(stauts="open"),  # type: ignore[call-arg]
    "corrections.page": lambda client: client.corrections.page(stauts="open"),  # type: ignore[call-arg]
    "corrections.export": lambda client: client.corrections.export(agent_id="a", stauts="open"),  # type: ignore[call-arg]
    "expert_queue.list": lambda client: client.expert_queue.list("p", stauts="open"),  # type: ignore[call-arg]
    "expert_queue.page": lambda client: client.expert_queue.page("p", stauts="open"),  # type: ignore[call-arg]
    "expert_queue.count": lambda client: client.expert_queue.count("p", stauts="open"),  # type: ignore[call-arg]
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_misspelt_filter_is_refused_before_any_request(call: Callable[[Client], Any]) -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    client = Client("http://redline.test", token="t", transport=httpx.MockTransport(answer))
    with client, pytest.raises(TypeError, match="unexpected keyword argument 'stauts'"):
        call(client)
    assert sent == []
