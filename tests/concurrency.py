"""Running one piece of work on several threads at once, for tests of what happens when callers race."""

from __future__ import annotations

import threading
from collections.abc import Callable


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
