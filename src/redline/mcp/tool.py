"""What one tool of the MCP server is: its name, what it tells a model, the arguments it takes and the
thin call of the services it makes. A tool's arguments are a pydantic model: its JSON schema is the
input schema a model reads, and the same model checks what a model sends, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mcp import types
from pydantic import BaseModel, ConfigDict
from sqlalchemy.orm import Session

from redline.identity.service import Actor
from redline.stats.stored_figures import Asking


class Arguments(BaseModel):
    """A tool's arguments. An argument the tool doesn't take is refused, not dropped: a model that
    misspells one learns so, rather than getting an answer that silently ignored it."""

    model_config = ConfigDict(extra="forbid")


A = TypeVar("A", bound=Arguments)

# What a tool answers: a JSON object, sent to the model as its text.
Answer = dict[str, Any]


@dataclass(frozen=True)
class Answered:
    """A read's answer, with the stored figures it found missing or stale (`stats.stored_figures`): the
    server asks the job worker for them in a short write after the read, as the API does."""

    answer: Answer
    asking: Asking | None


@dataclass(frozen=True)
class Tool(Generic[A]):
    """One tool. `call` runs inside one transaction (a write one when `writes`) as the calling actor."""

    name: str
    title: str
    description: str
    arguments: type[A]
    call: Callable[[Session, Actor, A], Answer | Answered]
    writes: bool = False

    def definition(self) -> types.Tool:
        """The tool as `tools/list` shows it, with hints an assistant uses to decide whether to ask its
        user first: reads are read-only; writes add or change feedback, never delete anything."""
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            inputSchema=self.arguments.model_json_schema(),
            annotations=types.ToolAnnotations(
                title=self.title,
                readOnlyHint=not self.writes,
                destructiveHint=False,
                openWorldHint=False,
            ),
        )
