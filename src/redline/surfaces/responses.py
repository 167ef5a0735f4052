"""JSON responses rendered with orjson: a batch answer or a page of runs serialises several times faster;
and the streamed exports' newline-delimited JSON."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from redline.jsonio import dumps

# A stream is sent in chunks of at least this size: one thread hop per chunk instead of per line, and
# still a bounded amount in memory however many lines there are.
STREAM_CHUNK_BYTES = 64 * 1024


class JSONBody(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


class NDJSONStream(StreamingResponse):
    """Newline-delimited JSON, named so the OpenAPI document gives an export its real media type."""

    media_type = "application/x-ndjson"


def in_chunks_of_bytes(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The pieces joined into chunks of at least STREAM_CHUNK_BYTES (the last may be smaller)."""
    at_least = STREAM_CHUNK_BYTES
    buffer = b""
    for piece in pieces:
        buffer = buffer + piece if buffer else piece
        if len(buffer) >= at_least:
            yield buffer
            buffer = b""
    if buffer:
        yield buffer
