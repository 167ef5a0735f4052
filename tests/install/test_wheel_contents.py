"""The wheel carries the whole package: every module, template, static file, migration and `py.typed`.

A package-data glob that misses a subfolder leaves an installed console with no templates (every page a
500) while an editable install, which reads the source tree, works; this compares the two file lists.
"""

from __future__ import annotations

import zipfile
from email.parser import Parser
from pathlib import Path

from tests.install.conftest import REPO

PACKAGE = REPO / "src" / "redline"


def source_files() -> set[str]:
    """What the checkout holds under src/redline, as paths inside the wheel (caches and bytecode aside)."""
    return {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_wheel_holds_every_file_of_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        packaged = {name for name in archive.namelist() if name.startswith("redline/")}
    sources = source_files()
    assert sources - packaged == set(), "files in the source tree that the wheel leaves out"
    assert packaged - sources == set(), "files in the wheel that the source tree does not have"
    # The kinds of file a glob is most likely to miss, named so that a shrunken tree can't pass unseen.
    for kind in (
        "redline/py.typed",
        "redline/migrations/script.py.mako",
        "redline/console/templates/base.html",
        "redline/console/templates/traces/list.html",
        "redline/console/static/console.js",
        "redline/traces/prices.json",
    ):
        assert kind in packaged
    assert any(name.startswith("redline/migrations/versions/0001_") for name in packaged)


def test_the_wheel_requires_what_a_plain_install_runs_on(wheel: Path) -> None:
    """The console's forms need python-multipart, reward models need numpy, /docs its packaged assets,
    quotes found again after an edit rapidfuzz: each must come with `pip install .`, not only with an
    extra."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = (name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        headers = Parser().parsestr(archive.read(metadata).decode())
    core = {
        requirement.split(">")[0].split("=")[0].split(";")[0].strip().lower()
        for requirement in headers.get_all("Requires-Dist") or []
        if "extra ==" not in requirement
    }
    assert {"python-multipart", "numpy", "fastapi-offline", "jinja2", "rapidfuzz"} <= core
    assert "learn" in (headers.get_all("Provides-Extra") or []), "the old `.[learn]` command still works"
