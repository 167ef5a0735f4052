"""Where a run's session page is: the link the trace page puts beside a run's session id.

A session id is the sender's text (a chat id, a UUID, `user/42/chat/7`), so it is percent-encoded whole,
slashes too, and the page's route reads the rest of the path as the id.
"""

from __future__ import annotations

import uuid
from urllib.parse import quote

from redline.traces.models import Trace


def session_url(project_id: uuid.UUID, session_id: str) -> str:
    """The console page of a project's session."""
    return f"/ui/projects/{project_id}/sessions/{quote(session_id, safe='')}"


def session_link(trace: Trace) -> str | None:
    """The page of the session the run is a turn of, with its other runs; None for a run of no session."""
    if trace.session_id is None:
        return None
    return session_url(trace.project_id, trace.session_id)
