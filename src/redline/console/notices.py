"""After a form did its work: post/redirect/get back to the page, with which change was done in the
address, and the sentence that page shows for it.

The address carries only which change and the names it mentions, never the sentence itself, so a link
can't put words of its own on a page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TypedDict
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse


def see_other(path: str, query: Mapping[str, str] | Sequence[tuple[str, str]] = ()) -> RedirectResponse:
    """The 303 to `path` (with `query`) that ends a form's post."""
    encoded = urlencode(query)
    return RedirectResponse(f"{path}?{encoded}" if encoded else path, status_code=303)


def notice(sentences: Mapping[str, str], request: Request) -> str | None:
    """The sentence for the change the address's `done` names, filled with the words the address carries
    (`name`, `key`, `role`…; one it lacks is empty); none for no (or an unknown) change."""
    query = request.query_params
    done = query.get("done", "")
    if done not in sentences:
        return None
    return sentences[done].format_map(defaultdict(str, query.items()))


class Outcome(TypedDict, total=False):
    """What a page says of the last form sent: a refusal's sentence, its status and which of the
    page's forms it refused (`error_at`), or the notice of a change done."""

    error: str
    error_at: str
    status_code: int
    notice: str | None
