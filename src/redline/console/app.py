"""The console's ASGI app, mounted at /ui by `redline.app`: its pages, static files and error pages."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from redline.config import Settings
from redline.console.errors import UnexpectedErrorPage, install_console_errors
from redline.console.pages import (
    auth,
    correct,
    corrections,
    datasets,
    disagreements,
    experiment_compare,
    experiment_review,
    experiments,
    human_reviews,
    indexed_metadata,
    members,
    queue_rules,
    retention,
    review,
    reward_models,
    sessions,
    to_fix,
    to_review,
    tokens,
    trace_actions,
    traces,
    trends,
    who_corrects,
)
from redline.console.timing import ServerTimingMiddleware


def create_console(config: Settings) -> FastAPI:
    """The console for these settings; `redline.app` hands it the database and the signing key."""
    console = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    console.state.session_seconds = config.console_session_hours * 3600
    console.state.secure_cookies = config.console_secure_cookies
    # Whether a new model may start with fewer than two pairs (training adds feedback-derived ones).
    console.state.llm_configured = config.llm_configured
    # Where the trace page reads model prices from (REDLINE_PRICES_FILE), else the table Redline ships.
    console.state.prices_file = config.prices_file
    # A queue's agreement is computed in the page's request up to this size (REDLINE_AGREEMENT_LIVE_ITEMS).
    console.state.agreement_live_items = config.agreement_live_items
    install_console_errors(console)
    console.mount("/static", StaticFiles(directory=str(files("redline.console") / "static")), name="static")
    for part in (auth, traces, trace_actions, sessions, correct, review, datasets, reward_models):
        console.include_router(part.router)
    console.include_router(disagreements.router)
    for experimenting in (experiments, experiment_review, experiment_compare):
        console.include_router(experimenting.router)
    for correcting in (corrections, to_review, to_fix, who_corrects, queue_rules, trends):
        console.include_router(correcting.router)
    for setting in (human_reviews, members, tokens, indexed_metadata, retention):
        console.include_router(setting.router)
    console.add_middleware(UnexpectedErrorPage)
    console.add_middleware(ServerTimingMiddleware)
    return console
