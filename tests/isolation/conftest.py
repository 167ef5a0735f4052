"""One seeded world per store and module (seed.py): the matrices' cases share it rather than pay for a
fresh database each."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.isolation.seed import seeded_world
from tests.isolation.world import World


@pytest.fixture(scope="module")
def world(backend: str, template: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with seeded_world(backend, template, tmp_path_factory.mktemp("isolation")) as seeded:
        yield seeded
