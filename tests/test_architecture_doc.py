"""docs/architecture.md shows the layers exactly as the import-linter contract checks them, so the page a
newcomer reads cannot drift from the rule CI enforces."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.doccommands import fenced_blocks

ROOT = Path(__file__).resolve().parent.parent
LAYERS_CONTRACT = "Layers, top to bottom"


def _contract_layers() -> list[str]:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [layers] = [contract for contract in contracts if contract["name"].startswith(LAYERS_CONTRACT)]
    assert "containers" not in layers
    return list(layers["layers"])


def _page_layers() -> list[str]:
    page = (ROOT / "docs" / "architecture.md").read_text()
    [block] = [block for block in fenced_blocks(page) if block.language == "text"]
    return [line.strip() for line in block.text.splitlines() if line.strip()]


def test_the_architecture_page_lists_the_layers_the_contract_checks() -> None:
    assert _page_layers() == _contract_layers()


def test_every_top_level_package_and_module_has_a_layer() -> None:
    """A new package outside the layers would be checked by nothing: each is in one, except the client,
    which imports nothing from the server (a contract of its own). Names in parentheses are to come."""
    names = [name.strip() for line in _contract_layers() for name in line.replace(":", "|").split("|")]
    placed = {name for name in names if not name.startswith("(")}
    package = ROOT / "src" / "redline"
    found = {
        f"redline.{path.stem if path.is_file() else path.name}"
        for path in package.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").exists()
    }
    assert found - placed == {"redline.client"}
    assert placed <= found
