"""A light HTTP/1.1 load client: keep-alive connections on one asyncio loop, requests serialised first.

The creates' target (800 requests/s on a 2-core machine) leaves little CPU for the client: httpx in a
thread per connection spent ~0.9 ms of the bench's own CPU per request, most of a core at that rate,
on the same 2 cores as the server (bench/README.md). This client writes bytes made before the clock
starts and reads each answer by its Content-Length, as `wrk` does: it measures the server and costs a
small fraction of that. It checks every status and reads every body whole; it is not a general client
(no chunked answers, no redirects, no TLS).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

HEADER_END = b"\r\n\r\n"
CONNECT_PAUSE_SECONDS = 0.01


@dataclass(frozen=True)
class Target:
    """Where the server listens and the bearer token every request carries."""

    host: str
    port: int
    token: str


def raw_request(target: Target, method: str, path: str, body: bytes | None) -> bytes:
    """One request's bytes, ready to write on a kept-alive connection."""
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: {target.host}:{target.port}",
        f"Authorization: Bearer {target.token}",
    ]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """Status and body of the next answer on the connection."""
    head = await reader.readuntil(HEADER_END)
    status = int(head[9:12])
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
        elif name.strip().lower() == b"transfer-encoding":
            raise RuntimeError("the light client reads only answers with a Content-Length")
    if length is None:
        raise RuntimeError(f"an answer without Content-Length: {head[:200]!r}")
    return status, await reader.readexactly(length)


async def _open(target: Target) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection, warm: its first answer is in before it counts as open."""
    reader, writer = await asyncio.open_connection(target.host, target.port)
    writer.write(raw_request(target, "GET", "/healthz", None))
    await _answer(reader)
    return reader, writer


async def _connection(
    connection: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    requests: Sequence[bytes],
    latencies: list[float],
    start: asyncio.Event,
) -> None:
    reader, writer = connection
    try:
        await start.wait()
        for request in requests:
            sent = time.perf_counter()
            writer.write(request)
            status, body = await _answer(reader)
            latencies.append(time.perf_counter() - sent)
            if not 200 <= status < 300:
                raise RuntimeError(f"answered {status}: {body[:500]!r}")
    finally:
        writer.close()


async def _all(target: Target, shares: list[list[bytes]]) -> tuple[list[list[float]], float]:
    latencies: list[list[float]] = [[] for _ in shares]
    start = asyncio.Event()
    # One connection after another, each warm before the next opens, as clients arriving on their own
    # would. Opened in one burst, they all went to whichever `redline serve --workers` process woke
    # first (uvicorn's workers share one listening socket and each accepts all it finds): 6 of 8 to
    # one of two workers, which then capped the creates at one process's rate (bench/README.md).
    connections = []
    for _ in shares:
        connections.append(await _open(target))
        await asyncio.sleep(CONNECT_PAUSE_SECONDS)
    tasks = [
        asyncio.create_task(_connection(connection, share, spent, start))
        for connection, share, spent in zip(connections, shares, latencies, strict=True)
    ]
    started = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    return latencies, time.perf_counter() - started


def send_all(target: Target, requests: Sequence[bytes], connections: int) -> tuple[list[float], float]:
    """The requests over `connections` connections at once, each sending its share one after another;
    every round trip's seconds, in the order of `requests` (so a mix can be told apart by kind), and
    the wall time from the release to the last answer."""
    shares = [list(requests[number::connections]) for number in range(connections)]
    latencies, seconds = asyncio.run(_all(target, shares))
    ordered = [0.0] * len(requests)
    for number, share in enumerate(latencies):
        ordered[number::connections] = share
    return ordered, seconds
