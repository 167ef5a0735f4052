"""Every `redline …` command line in README.md and docs/*.md parses against the real command tree, and
every Python block compiles: the docs show only commands that exist, with options that exist."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from redline.cli.main import COMMANDS, cli, load_command
from redline.config import Settings
from tests.doccommands import Command, fenced_blocks, parse_problem, python_blocks, shell_commands

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.fixture(scope="module", autouse=True)
def every_command_imported() -> None:
    """The lazy group imports a command when asked for it; asking for all once keeps the cases even."""
    for name in COMMANDS:
        load_command(name)


@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_every_redline_command_in_the_docs_parses(doc: Path) -> None:
    broken = [
        f"{_name(doc)}:{command.line}: {command}: {problem}"
        for command in shell_commands(doc.read_text())
        if (problem := parse_problem(cli, command)) is not None
    ]
    assert broken == []


def test_the_docs_show_commands_to_check() -> None:
    """A checker that finds nothing passes everything: the docs hold hundreds of commands."""
    found = [command for doc in DOCS for command in shell_commands(doc.read_text())]
    assert len(found) > 200
    assert {command.args[0] for command in found if command.args} >= set(COMMANDS) - {"worker"}


@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_every_python_block_in_the_docs_compiles(doc: Path) -> None:
    for block in python_blocks(doc.read_text()):
        compile(block.text, f"{_name(doc)}:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


# ----------------------------------------------------------------------------------- the checker itself


def _commands(markdown: str) -> list[tuple[int, list[str]]]:
    return [(command.line, command.args) for command in shell_commands(markdown)]


def test_commands_are_found_in_every_shape_a_shell_line_takes() -> None:
    markdown = "\n".join(
        [
            "Intro with `redline projects list` inline.",  # 1
            "```bash",  # 2
            "redline users list   # who is there",  # 3
            "REDLINE_WORKERS=2 REDLINE_PORT=9000 redline serve",  # 4
            "cd /srv && redline db upgrade || echo failed",  # 5
            "redline export runs --project default > runs.jsonl",  # 6
            "redline corrections export --agent a \\",  # 7
            "  --format csv | head",  # 8
            "python -m redline demo",  # 9
            "# redline not-a-command, in a comment",  # 10
            "echo redline is not run here",  # 11
            'redline queues create --project default "Support',  # 12
            'quality"',  # 13
            "```",  # 14
            "```console",  # 15
            "$ redline tokens list --user admin",  # 16
            "redline output-line not a command",  # 17
            "```",  # 18
            "```text",  # 19
            "redline not-checked in a text block",  # 20
            "```",  # 21
        ]
    )
    assert _commands(markdown) == [
        (3, ["users", "list"]),
        (4, ["serve"]),
        (5, ["db", "upgrade"]),
        (6, ["export", "runs", "--project", "default"]),
        (7, ["corrections", "export", "--agent", "a", "--format", "csv"]),
        (9, ["demo"]),
        (12, ["queues", "create", "--project", "default", "Support\nquality"]),
        (16, ["tokens", "list", "--user", "admin"]),
        (1, ["projects", "list"]),
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("redline users token admin", "No such command 'token'."),
        ("redline projects lists", "No such command 'lists'."),
        ("redline members add --project default --user ann --role owner", "'owner' is not one of"),
        ("redline members add --project default --user ann", "Missing option '--role'."),
        ("redline users list --colour", "No such option '--colour'."),
        ("redline --database-url", "Option '--database-url' requires an argument."),
        ("redline demo --count many", "'many' is not a valid integer"),
        ("redline projects list billing", "Got unexpected extra argument (billing)"),
    ],
)
def test_a_made_up_command_or_option_is_found(line: str, problem: str) -> None:
    markdown = f"```bash\n{line}\n```\n"
    [command] = shell_commands(markdown)
    found = parse_problem(cli, command)
    assert found is not None
    assert problem in found


@pytest.mark.parametrize(
    "line",
    [
        "redline",
        "redline --help",
        "redline db --help",
        "redline tokens create --user NAME",
        "redline tokens revoke <token-id>",
        "redline demo --count N",
        "redline import runs-you-have.jsonl --project default",
        "redline corrector-groups get 2da17046-…",
        "redline --database-url postgresql+psycopg://redline@db/redline serve --workers 4",
    ],
)
def test_placeholders_and_files_of_the_readers_are_taken(line: str) -> None:
    [command] = shell_commands(f"```sh\n{line}\n```\n")
    assert parse_problem(cli, command) is None


def test_fences_are_found_indented_and_with_longer_fences() -> None:
    markdown = "- a step:\n\n  ````python\n  x = 1\n  ````\n\n```py\nif True:\n    pass\n```\n"
    assert [(b.language, b.line, b.text) for b in fenced_blocks(markdown)] == [
        ("python", 4, "x = 1"),
        ("py", 8, "if True:\n    pass"),
    ]
    assert [b.text for b in python_blocks(markdown)] == ["x = 1", "if True:\n    pass"]


def test_a_command_prints_as_it_reads() -> None:
    assert (
        str(Command(1, ["queues", "create", "Support quality"])) == "redline queues create 'Support quality'"
    )


def test_every_setting_is_in_the_configuration_page() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    missing = [name for name in Settings.model_fields if f"`REDLINE_{name.upper()}`" not in page]
    assert missing == []
