"""The isolation matrix of the console: every console route (from the app's own routes) × every caller,
signed in with its session, on each store. Expected: the sign-in redirect for whoever is not signed in,
the not-found page for another workspace's or project's caller, the refusal page for a role too low,
and nothing of P1 in any answer to a caller outside it (requirements.PAGES says what each route needs).
The matrix prints its figures: under xdist, `pytest -rP` shows them.
"""

from __future__ import annotations

from collections.abc import Callable

from redline.app import create_app
from redline.config import Settings
from tests.isolation.console_matrix import ConsoleMatrix, console_routes, page_coverage_problems
from tests.isolation.requirements import PAGES
from tests.isolation.world import World


def _routes() -> set[tuple[str, str]]:
    return console_routes(create_app(Settings(database_url="sqlite://")))


def test_the_table_lists_every_console_route_and_nothing_else() -> None:
    problems = page_coverage_problems(_routes())
    assert not problems, "\n".join(problems)


def test_console_matrix(world: World, backend: str, record_property: Callable[[str, object], None]) -> None:
    routes = _routes()
    matrix = ConsoleMatrix(world)
    matrix.run(page for page in PAGES if page.key in routes)
    figures = matrix.figures.said("Console", backend, world.seeded_seconds)
    print(f"\n{figures}")
    record_property("figures", figures)
    assert matrix.figures.operations == routes, "every console route was tried"
    assert not matrix.problems, f"{len(matrix.problems)} problems:\n" + "\n".join(matrix.problems)
