"""JSON responses rendered with orjson: a batch answer or a page of runs serialises several times faster."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from redline.jsonio import dumps


class JSONBody(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)
