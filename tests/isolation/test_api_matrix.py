"""The isolation matrix of the API, generated from the OpenAPI document: every operation × every caller
(no token, a revoked one, another workspace's admin, another project's admin, P1's reader, writer and
owner, a workspace admin; the installation admin where it is the need), on each store.

The expected outcome comes from the one table of required roles (requirements.py); an operation the
table does not list, or a row that matches no operation, fails the first test. The matrix prints its
figures (operations × callers, seconds): under xdist, `pytest -rP` shows them.
"""

from __future__ import annotations

from collections.abc import Callable

from redline.app import create_app
from redline.config import Settings
from tests.isolation.matrix import Matrix, coverage_problems, document_operations
from tests.isolation.references import References
from tests.isolation.requirements import OPERATIONS, REFERENCES
from tests.isolation.world import World


def _document() -> set[tuple[str, str]]:
    return document_operations(create_app(Settings(database_url="sqlite://")))


def test_the_table_lists_every_operation_and_nothing_else() -> None:
    problems = coverage_problems(_document())
    assert not problems, "\n".join(problems)


def test_api_matrix(world: World, backend: str, record_property: Callable[[str, object], None]) -> None:
    document = _document()
    matrix = Matrix(world)
    matrix.run(op for op in OPERATIONS if op.key in document)
    figures = matrix.figures.said("API", backend, world.seeded_seconds)
    print(f"\n{figures}")
    record_property("figures", figures)
    assert matrix.figures.operations == document, "every operation of the document was tried"
    assert not matrix.problems, f"{len(matrix.problems)} problems:\n" + "\n".join(matrix.problems)


def test_references_across_projects(
    world: World, backend: str, record_property: Callable[[str, object], None]
) -> None:
    """P2's admin names P1's objects from P2's own: refused (or passed over), and nothing of P1 shown."""
    document = _document()
    missing = [row.name for row in REFERENCES if row.key not in document]
    assert not missing, f"references to operations the document does not have: {missing}"
    references = References(world)
    references.run(REFERENCES)
    figures = references.figures.said("References", backend, world.seeded_seconds)
    print(f"\n{figures}")
    record_property("figures", figures)
    assert not references.problems, f"{len(references.problems)} problems:\n" + "\n".join(references.problems)
