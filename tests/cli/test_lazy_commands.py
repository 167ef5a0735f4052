"""The lazy command table says what the real commands say, and starting `redline` imports only what the
command run needs (what is imported, not how long it takes: bench/cli_startup.py measures that)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from redline.cli.main import COMMANDS, cli, load_command
from tests.cli.test_cli import ok

# Imported by serving the API, the console, training or calling out: never by listing or by help.
HEAVY = ["fastapi", "starlette", "uvicorn", "jinja2", "httpx", "numpy", "redline.console", "redline.app"]
# Not even the store's libraries are needed to print help or the version.
STORE = ["sqlalchemy", "pydantic", "pydantic_settings", "alembic", "psycopg", "redline.cli.context"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_names_and_sums_up_each_command_as_it_does_itself(name: str) -> None:
    command = load_command(name)
    assert command.name == name
    assert COMMANDS[name][1] == command.get_short_help_str(limit=10_000)
    assert not command.hidden


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_help_lists_the_commands_as_click_would_with_them_all_imported(width: int) -> None:
    eager = click.Group(
        "cli",
        commands={name: load_command(name) for name in COMMANDS},
        params=cli.params,
        help=cli.help,
        invoke_without_command=True,
    )
    lazy = CliRunner().invoke(cli, ["--help"], terminal_width=width)
    assert lazy.exit_code == 0
    assert lazy.output == CliRunner().invoke(eager, ["--help"], terminal_width=width).output


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["projectz", "list"])
    assert result.exit_code == 2
    assert "No such command 'projectz'." in result.output


def _imported(*args: str) -> list[str]:
    """The modules a real `redline ARGS` process had imported when it ended."""
    code = (
        "import json, sys\n"
        "from redline.cli.main import cli\n"
        f"try:\n    cli({list(args)!r}, prog_name='redline')\n"
        "except SystemExit as end:\n    assert end.code in (0, None), end.code\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


def _among(modules: list[str], packages: list[str]) -> list[str]:
    return [name for name in modules if any(name == p or name.startswith(p + ".") for p in packages)]


@pytest.mark.parametrize("args", [["--help"], ["--version"]], ids=" ".join)
def test_help_and_version_import_no_command_and_no_store(args: list[str]) -> None:
    modules = _imported(*args)
    assert _among(modules, HEAVY + STORE) == []
    assert [name for name in modules if name.startswith("redline.")] == ["redline.cli", "redline.cli.main"]


def test_a_list_imports_the_store_but_not_the_server(database_url: str) -> None:
    ok(database_url, "db", "upgrade")
    modules = _imported("--database-url", database_url, "projects", "list")
    assert "redline.identity.service" in modules
    assert _among(modules, HEAVY) == []
