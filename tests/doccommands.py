"""Find the `redline …` command lines and the Python code in Markdown, and check each command against the
real click tree without running it: every group and command on the way parses its own arguments, as
`redline` would before invoking anything.

Shell blocks are fenced ```bash, ```sh, ```shell or ```console (there only `$ ` lines are commands);
inline code that starts with `redline ` counts too. A line may hold several commands (`&&`, `||`, `|`,
`;`), start with variable assignments (`REDLINE_X=1 redline serve`), continue over `\\` line ends, and
end in a comment or a redirection. Documentation writes placeholders where a real value goes (`NAME`,
`<id>`, `rl_…`, a file that exists only on the reader's machine): a value the parameter's type or
callback refuses is still accepted when it is a placeholder, or names a file.
"""

from __future__ import annotations

import contextlib
import copy
import io
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import click

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console"})
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<language>[\w+-]*)")
INLINE_COMMAND = re.compile(r"(?<!`)`(redline [^`]+)`(?!`)")
SEPARATORS = frozenset({"&&", "||", "|", ";", "&"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# NAME, TOKEN_ID, <id>, {id}, $VAR, and anything written with an ellipsis (`rl_…`, `3a0993af-…`).
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*|<[^>]+>|\{[^}]+\}|\$\{?\w+\}?)$|…|\.\.\.")


@dataclass(frozen=True)
class Block:
    language: str
    line: int  # of the block's first line of content, 1-based
    text: str


@dataclass(frozen=True)
class Command:
    line: int
    args: list[str]  # what follows `redline`
    # Named in a sentence (inline code): it may leave out what it requires, as "`redline import` reads".
    mention: bool = False

    def __str__(self) -> str:
        return shlex.join(["redline", *self.args])


def fenced_blocks(markdown: str) -> Iterator[Block]:
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        start, body = index, []
        while index < len(lines) and not lines[index].strip().startswith(fence):
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            index += 1
        index += 1
        yield Block(opening["language"].lower(), start + 1, "\n".join(body))


def _logical_lines(block: Block) -> Iterator[tuple[int, str]]:
    """The block's lines with `\\` continuations joined; in a console block only the `$ ` lines."""
    pending, first = "", 0
    for offset, raw in enumerate(block.text.splitlines()):
        line = raw
        if block.language == "console" and not pending:
            if not line.lstrip().startswith("$ "):
                continue
            line = line.lstrip()[2:]
        if not pending:
            first = block.line + offset
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield first, pending + line
        pending = ""
    if pending:
        yield first, pending


def _words(text: str) -> list[str] | None:
    """Shell words, with `&&`, `|`, `;`, `>` and the like as words of their own; None for open quotes."""
    # `<trace id>` in documentation is a placeholder, not a redirection: as `{trace_id}` it is one word.
    text = re.sub(r"<([A-Za-z][^<>\n]*)>", lambda found: "{" + re.sub(r"\W+", "_", found[1]) + "}", text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return None


def _commands_in(words: list[str]) -> Iterator[list[str]]:
    """The argument lists after `redline` (or `python -m redline`) in one line of shell words."""
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in SEPARATORS and not word.startswith((";", "|", "&")):
            segment.append(word)
            continue
        plain: list[str] = []
        skip = False
        for part in segment:
            if skip:
                skip = False
            elif set(part) <= set("<>&") or re.fullmatch(r"\d?[<>]+&?", part):
                skip = True  # a redirection and its target
            else:
                plain.append(part)
        while plain and (ASSIGNMENT.match(plain[0]) or plain[0] in ("env", "sudo", "exec", "(")):
            plain.pop(0)
        if plain[:1] == ["redline"]:
            yield [part for part in plain[1:] if part != ")"]
        elif len(plain) >= 3 and plain[0].startswith("python") and plain[1:3] == ["-m", "redline"]:
            yield plain[3:]
        segment = []


def shell_commands(markdown: str) -> Iterator[Command]:
    """Every `redline …` command of the shell blocks, then of the inline code, with its line number."""
    for block in fenced_blocks(markdown):
        if block.language not in SHELL_LANGUAGES:
            continue
        carried, carried_line = "", 0
        for line_number, line in _logical_lines(block):
            text = f"{carried}\n{line}" if carried else line
            words = _words(text)
            if words is None:  # a quote opened here closes on a later line
                carried, carried_line = text, carried_line or line_number
                continue
            for args in _commands_in(words):
                yield Command(carried_line or line_number, args)
            carried, carried_line = "", 0
    for number, line in enumerate(markdown.splitlines(), start=1):
        for inline in INLINE_COMMAND.finditer(line):
            # `[--format F]` is usage notation for an option one may leave out.
            words = _words(re.sub(r"\[[^\]]*\]", "", inline[1]))
            for args in _commands_in(words or []):
                yield Command(number, args, mention=True)


def python_blocks(markdown: str) -> Iterator[Block]:
    return (block for block in fenced_blocks(markdown) if block.language in ("python", "py"))


def _placeholder(value: Any) -> bool:
    values = value if isinstance(value, tuple | list) else (value,)
    return any(isinstance(one, str) and PLACEHOLDER.search(one) for one in values)


class _Lenient(click.ParamType[Any, Any]):
    """A parameter's own type, except that a placeholder (or a file that is not here) is taken as given."""

    def __init__(self, real: click.ParamType[Any, Any]) -> None:
        self.real = real
        self.name = real.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.real.convert(value, param, ctx)
        except click.BadParameter:
            if _placeholder(value) or isinstance(self.real, click.Path | click.File):
                return value
            raise


def _lenient_callback(real: Callable[..., Any]) -> Callable[..., Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            return real(ctx, param, value)
        except click.BadParameter:
            if _placeholder(value):
                return value
            raise

    return callback


def _lenient(command: click.Command) -> click.Command:
    """A copy of the command (not the command itself) that takes placeholders for values."""
    relaxed = copy.copy(command)
    relaxed.params = []
    for param in command.params:
        copied = copy.copy(param)
        if not getattr(param, "is_flag", False):  # click reads a flag's kind from its type
            copied.type = _Lenient(param.type)
        if param.callback is not None and not param.is_eager:
            copied.callback = _lenient_callback(param.callback)
        relaxed.params.append(copied)
    return relaxed


def _rest(ctx: click.Context) -> list[str]:
    """What a group left for its subcommand, after parsing its own options."""
    protected = getattr(ctx, "_protected_args", None)
    return [*(protected if protected is not None else ctx.protected_args), *ctx.args]


def _walk(root: click.Group, args: list[str]) -> str | None:
    """Parse each level down the tree as click would before invoking; a command it doesn't know is said."""
    command: click.Command = root
    name, parent = "redline", None
    while True:
        ctx = _lenient(command).make_context(name, list(args), parent=parent)
        if not isinstance(command, click.Group):
            return None
        rest = _rest(ctx)
        if not rest or _placeholder(rest[0]):  # `redline --database-url URL <command>`
            return None
        sub_name, sub, args = command.resolve_command(ctx, rest)
        if sub is None or sub_name is None:
            return f"No such command {rest[0]!r}."
        command, name, parent = sub, sub_name, ctx


def parse_problem(root: click.Group, found: Command) -> str | None:
    """Why the command would not parse, in click's words; None when every level takes its arguments.

    A mention (`redline serve --port` in a table) may leave out what the command requires.
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # what `--help` would print
            return _walk(root, found.args)
    except click.exceptions.NoArgsIsHelpError:
        return None
    except click.exceptions.Exit as done:
        return None if done.exit_code == 0 else f"exits with status {done.exit_code}"
    except (click.MissingParameter, click.BadOptionUsage) as error:
        left_out = isinstance(error, click.MissingParameter) or "requires an argument" in error.message
        return None if found.mention and left_out else error.format_message()
    except click.UsageError as error:
        return error.format_message()
