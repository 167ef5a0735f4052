"""Where in a request a problem is, written the way the wire spells it: `runs[3].steps[0].toolName`."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic.alias_generators import to_camel


def field_path(location: Sequence[int | str], *, camel: bool = True) -> str:
    """A location as a path. Model field names (snake_case in Python) become the wire's camelCase;
    `camel=False` keeps names as they are, for locations read from the request itself."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            name = to_camel(part) if camel else part
            path += f".{name}" if path else name
    return path
