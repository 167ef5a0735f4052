"""Running one piece of work on several threads at once, for tests of what happens when callers race."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def run_at_once(work: Callable[[int], None], threads: int) -> list[BaseException]:
    """Run `work(number)` on `threads` threads together; the exceptions they raised, none if all went well."""
    errors: list[BaseException] = []

    def guarded(number: int) -> None:
        try:
            work(number)
        except BaseException as error:  # collected for the caller's assertion
            errors.append(error)

    started = [threading.Thread(target=guarded, args=(number,)) for number in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return errors


@contextmanager
def watching(look: Callable[[], list[Any]]) -> Iterator[list[Any]]:
    """Call `look` over and over on a thread of its own while the block runs: everything it found wrong,
    gathered in the list yielded (read it after the block)."""
    seen: list[Any] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.extend(look())
            stop.wait(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        stop.set()
        watcher.join(timeout=5)
