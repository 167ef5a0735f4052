"""What both matrices share: a case is one row of the table (an operation, or a console route) tried by
one caller against the seeded world, and checked three ways.

1. The exact status: `expected_status` for a caller refused, the row's own success status otherwise.
2. On a refusal, the body in the surface's own shape (each matrix says what that is).
3. For every caller outside P1 (no token, a revoked one, another workspace's admin, another project's
   admin), a scan of the whole answer, headers included, for every id and unique name seeded in P1
   (and, outside workspace A, its users, tokens and workspace objects) that the caller did not send;
   and for every caller of workspace A, the same scan for workspace B's.

A row whose success would use up the standing object gives each caller allowed a throwaway one; after
the refused callers, the standing object must be as it was. A row that lists things must show P1's to
the workspace admin, or the outsiders' empty answers would prove nothing.
"""

from __future__ import annotations

import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2

from tests.isolation import throwaways
from tests.isolation.requirements import Caller, Need, callers_for, expected_status
from tests.isolation.world import World

# Whose answers are scanned, and for what: outsiders of the workspace must see nothing of it, another
# project's admin nothing of P1 (users are visible to the whole workspace: access.md).
WORKSPACE_OUTSIDERS = (Caller.ANONYMOUS, Caller.REVOKED, Caller.OTHER_WORKSPACE)
PROJECT_OUTSIDERS = (Caller.OTHER_PROJECT,)
# How much of an unexpected answer a problem quotes.
QUOTED = 300


class Row(Protocol):
    """A row of the table, API operation or console route."""

    @property
    def key(self) -> tuple[str, str]: ...
    @property
    def name(self) -> str: ...
    @property
    def surface(self) -> str: ...
    @property
    def need(self) -> Need: ...
    @property
    def ok(self) -> int: ...
    @property
    def fresh(self) -> str | None: ...
    @property
    def lists(self) -> bool: ...
    @property
    def echoes(self) -> bool: ...


@dataclass(frozen=True)
class Sent:
    """A request as sent, and the text of everything in it (a value the caller sent is no leak)."""

    method: str
    path: str
    query: Mapping[str, Any]
    body: Any
    headers: Mapping[str, str]

    @property
    def text(self) -> str:
        parts = (self.path, dict(self.query), self.body, dict(self.headers))
        return " ".join(part if isinstance(part, str) else json.dumps(part, sort_keys=True) for part in parts)


@dataclass
class Figures:
    """What a matrix tried: operations (or console routes), the rows of the table that tried them (a
    variant is a row of its own), the cases (a row with one caller), and how long it took."""

    operations: set[tuple[str, str]] = field(default_factory=set)
    rows: int = 0
    cases: int = 0
    by_caller: dict[Caller, int] = field(default_factory=dict)
    seconds: float = 0.0

    def count(self, caller: Caller) -> None:
        self.cases += 1
        self.by_caller[caller] = self.by_caller.get(caller, 0) + 1

    def said(self, what: str, backend: str, seeded: float) -> str:
        """The figures in a sentence, for the matrix test to print."""
        callers = ", ".join(f"{caller} {count}" for caller, count in self.by_caller.items())
        return (
            f"{what} matrix on {backend}: {len(self.operations)} operations in {self.rows} rows x callers = "
            f"{self.cases} cases ({callers}) in {self.seconds:.1f} s, after {seeded:.1f} s seeding its world"
        )


def answer_text(answer: httpx2.Response) -> str:
    """The body and headers of an answer, but its request id, as one text to scan."""
    shown = {key: value for key, value in answer.headers.items() if key.lower() != "x-request-id"}
    return answer.text + " " + json.dumps(shown, sort_keys=True)


def leaks(text: str, secrets: Iterable[str], carried: str) -> list[str]:
    """The secrets in `text` that the caller did not send itself (`carried`). A secret counts where it
    ends: `name-1` is not found in `name-12`."""
    return sorted(
        secret
        for secret in secrets
        if secret not in carried and re.search(re.escape(secret) + r"(?![0-9A-Za-z_])", text)
    )


def secrets_hidden_from(world: World, caller: Caller) -> set[str]:
    """What `caller` may not read: P1's and workspace A's secrets outside them, and workspace B's to
    everyone but B's admin and the installation admin (who lists every workspace)."""
    hidden = set() if caller in (Caller.OTHER_WORKSPACE, Caller.INSTALLATION_ADMIN) else set(world.b_secrets)
    if caller in WORKSPACE_OUTSIDERS:
        return hidden | world.p1_secrets | world.workspace_secrets
    if caller in PROJECT_OUTSIDERS:
        return hidden | world.p1_secrets
    return hidden


@dataclass
class Runner(ABC):
    """Runs rows with their callers; `problems` gathers what went wrong, `figures` what was tried."""

    world: World
    problems: list[str] = field(default_factory=list)
    figures: Figures = field(default_factory=Figures)
    # What each caller has sent so far: an answer that repeats it (`echoes`) tells it nothing new.
    history: dict[Caller, list[str]] = field(default_factory=dict)

    @abstractmethod
    def build(self, row: Any, caller: Caller, extra: Mapping[str, Any]) -> Sent:
        """The request of `row` by `caller`, the world's ids filled in (`extra`'s first)."""

    @abstractmethod
    def send(self, row: Any, sent: Sent) -> httpx2.Response: ...

    @abstractmethod
    def refusal_problems(self, row: Any, status: int, caller: Caller, answer: httpx2.Response) -> list[str]:
        """What is wrong with a refusal's body, for the row's surface."""

    def run(self, rows: Iterable[Row]) -> None:
        started = time.perf_counter()
        for row in rows:
            self.figures.operations.add(row.key)
            self.figures.rows += 1
            self.problems.extend(f"{row.name}: {problem}" for problem in self.cases(row))
        self.figures.seconds = time.perf_counter() - started

    def cases(self, row: Row) -> Iterator[str]:
        controls: list[bool] = []
        for caller in callers_for(row.need):
            self.figures.count(caller)
            wanted = expected_status(row.need, caller, row.surface)
            try:
                extra = throwaways.fresh(self.world, row.fresh) if wanted is None and row.fresh else {}
            except AssertionError as broken:
                yield f"[{caller}] no throwaway {row.fresh}: an earlier case broke the world: {broken}"
                continue
            sent = self.build(row, caller, extra)
            answer = self.send(row, sent)
            history = self.history.setdefault(caller, [])
            history.append(sent.text)
            status = row.ok if wanted is None else wanted
            if answer.status_code != status:
                yield f"[{caller}] {answer.status_code}, expected {status}: {shown(answer)}"
            elif wanted is not None:
                problems = self.refusal_problems(row, status, caller, answer)
                yield from (f"[{caller}] {problem}" for problem in problems)
            carried = " ".join(history) if row.echoes else sent.text
            found = leaks(answer_text(answer), secrets_hidden_from(self.world, caller), carried)
            if found:
                yield f"[{caller}] the answer ({answer.status_code}) holds what it must not: {found}"
            if row.lists and caller is Caller.WORKSPACE_ADMIN:
                controls.append(bool(leaks(answer_text(answer), self.world.p1_secrets, sent.text)))
        if row.fresh:
            yield from self._intact(row.fresh)
        if row.lists and not any(controls):
            yield "the workspace admin's answer names nothing of P1, so the outsiders' scan proves nothing"

    def _intact(self, kind: str) -> Iterator[str]:
        try:
            broken = throwaways.intact(self.world, kind)
        except AssertionError as error:
            broken = f"the standing {kind} could not be read: {error}"
        if broken:
            yield broken


def shown(answer: httpx2.Response) -> str:
    """What an unexpected answer was, briefly: a redirect's target, a page's error or title, or its start."""
    if answer.is_redirect:
        return f"-> {answer.headers.get('location')}"
    if answer.headers.get("content-type", "").startswith("text/html"):
        said = re.search(r'role="alert"[^>]*>([^<]+)<', answer.text) or re.search(
            r"<title>([^<]*)", answer.text
        )
        if said:
            return said.group(1).strip()
    return answer.text[:QUOTED]
