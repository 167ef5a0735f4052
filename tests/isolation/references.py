"""The references matrix: P2's admin, acting on P2's own objects, names one of P1's (requirements.
REFERENCES). The check on the container passes, so only the check on the object named keeps P1's out:
the refusal (or the object passed over) must come, in the surface's shape and with nothing of P1 in
it, and the same request naming P2's own object instead must succeed, or the refusal would prove
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.isolation import throwaways
from tests.isolation.cases import Figures, Sent, answer_text, leaks, secrets_hidden_from, shown
from tests.isolation.matrix import fill_path, refusal_problems
from tests.isolation.requirements import PATH_KEYS, Caller, Reference
from tests.isolation.world import World

CALLER = Caller.OTHER_PROJECT


@dataclass
class References:
    world: World
    problems: list[str] = field(default_factory=list)
    figures: Figures = field(default_factory=Figures)

    def run(self, rows: Iterable[Reference]) -> None:
        started = time.perf_counter()
        for row in rows:
            self.figures.operations.add(row.key)
            self.figures.rows += 1
            self.problems.extend(f"{row.name}: {problem}" for problem in self.cases(row))
        self.figures.seconds = time.perf_counter() - started

    def cases(self, row: Reference) -> Iterator[str]:
        ids = self.world.ids
        mine = {key: ids[theirs] for key, theirs in row.mine.items()}
        for extra, status, what in ((dict[str, Any](), row.status, "P1's"), (mine, row.ok, "its own")):
            self.figures.count(CALLER)
            sent = self.build(row, extra)
            answer = self.world.client.request(
                sent.method,
                sent.path,
                params=dict(sent.query),
                headers=dict(sent.headers),
                **({} if sent.body is None else {"json": sent.body}),
            )
            if answer.status_code != status:
                yield f"naming {what}: {answer.status_code}, expected {status}: {shown(answer)}"
                continue
            if status >= 400:
                surface = row.surface
                yield from refusal_problems(
                    surface, 422 if surface == "rm" and status == 400 else status, CALLER, answer
                )
            found = leaks(answer_text(answer), secrets_hidden_from(self.world, CALLER), sent.text)
            if found:
                yield f"naming {what}: the answer ({answer.status_code}) holds what it must not: {found}"
        if row.kept:
            broken = throwaways.intact(self.world, row.kept)
            if broken:
                yield broken

    def build(self, row: Reference, extra: Mapping[str, Any]) -> Sent:
        world = self.world
        return Sent(
            row.method,
            fill_path(world, row.path, row.params, PATH_KEYS, extra),
            world.fill(dict(row.query), extra),
            world.fill(row.body, extra),
            world.callers[CALLER],
        )
