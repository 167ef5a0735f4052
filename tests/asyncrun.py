"""Run a coroutine function to its end from a test, whatever the test's own thread is running.

Playwright's sync API (the console tests' browser, one per xdist worker for the whole session) keeps an
asyncio loop running in the worker's main thread, where `anyio.run` and `asyncio.run` refuse to start
another ("Already running asyncio in this thread"). A thread of its own has no loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import anyio

T = TypeVar("T")


def in_own_thread(work: Callable[[], T]) -> T:
    """`work()` in a thread of its own, its answer or its exception back here."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work).result()


def run_async(func: Callable[[], Awaitable[T]]) -> T:
    """`anyio.run(func)`, in a thread of its own."""
    return in_own_thread(lambda: anyio.run(func))
