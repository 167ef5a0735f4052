"""The ASGI application: every surface mounted on one app, one database per process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi_offline import FastAPIOffline
from starlette.routing import Route

from redline import __version__
from redline.config import Settings
from redline.console import create_console
from redline.db import Database, make_engine
from redline.db.wal_checkpoints import checkpoint_in_background
from redline.identity import service as identity_service
from redline.mcp.http import PATH as MCP_PATH
from redline.mcp.http import McpEndpoint
from redline.surfaces import metrics as metrics_surface
from redline.surfaces.metrics import MetricsMiddleware
from redline.surfaces.middleware import BodyLimitMiddleware, RequestIdMiddleware
from redline.surfaces.nul import refuse_nul_characters
from redline.surfaces.openapi import document_without_framework_422
from redline.surfaces.otlp.paths import OTLP_PATHS
from redline.surfaces.otlp.throttle import SpanRate
from redline.surfaces.table import install_error_handlers, mount
from redline.web import metrics
from redline.web.route_index import index_routes

# Where /docs loads its script, style and icon from.
DOCS_ASSETS_PATH = "/docs-assets"


def app_from_environment() -> FastAPI:
    """The app for the settings in the REDLINE_* variables, for an ASGI server that imports an app
    factory: each `redline serve --workers N` process builds its own this way (the engine is opened in
    its lifespan, never shared across processes)."""
    return create_app(Settings())


def create_app(settings: Settings, database: Database | None = None) -> FastAPI:
    """The app for these settings; tests may hand in a database, otherwise the lifespan opens one."""

    def attach(db: Database) -> None:
        # Every server process of `redline serve --workers N` starts at once on a store that may not
        # have the key yet: on PostgreSQL two may both find none and both insert one, and the loser's
        # start then failed (which stops uvicorn's supervisor). Done again, it reads the winner's.
        secret_key = db.write_retrying_conflicts(
            lambda session: identity_service.instance_secret(session, settings.secret_key)
        )
        for state in (app.state, console.state):
            state.database = db
            state.secret_key = secret_key

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp.running():
            if database is not None:
                yield
                return
            attach(
                Database(
                    make_engine(
                        settings.database_url,
                        sqlite_busy_timeout_ms=settings.sqlite_busy_timeout_ms,
                        sqlite_cache_mib=settings.sqlite_cache_mib,
                    )
                )
            )
            stop_checkpoints = checkpoint_in_background(app.state.database.engine)
            try:
                yield
            finally:
                stop_checkpoints()
                app.state.database.dispose()

    # Swagger UI (/docs) from assets in an installed package, not a CDN: a self-hosted install is often
    # air-gapped, and no page Redline serves loads from another host. No ReDoc: its page always loads
    # its attribution logo from redocly's CDN.
    app = FastAPIOffline(
        redoc_url=None,
        static_url=DOCS_ASSETS_PATH,
        # Swagger UI would otherwise show a badge fetched from validator.swagger.io on any host but localhost.
        swagger_ui_parameters={"validatorUrl": None},
        title="Redline",
        version=__version__,
        description="Self-hosted human feedback for AI agents.",
        lifespan=lifespan,
        dependencies=[Depends(refuse_nul_characters)],
    )
    app.state.settings = settings
    if settings.otlp_rate_spans_per_sec is not None:
        app.state.otlp_rate = SpanRate(settings.otlp_rate_spans_per_sec)
    console = create_console(settings)
    # The trace page prices model calls whose spans record no cost from this file (REDLINE_PRICES_FILE).
    if database is not None:
        attach(database)
    install_error_handlers(app)
    mount(app)

    document_without_framework_422(app)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    app.mount("/ui", console)
    # MCP for assistants (docs/mcp.md): the same tokens and roles as the API, the same services.
    mcp = McpEndpoint(lambda: app.state.database)
    app.router.routes.append(Route(MCP_PATH, mcp, include_in_schema=False))

    # Outermost last: the request id exists before the body limit can refuse anything.
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes, exempt=OTLP_PATHS)
    app.add_middleware(RequestIdMiddleware)
    if settings.metrics:
        metrics.turn_on()
        app.include_router(metrics_surface.router)
        # Outside everything else, so it sees the status every request was finally answered with.
        app.add_middleware(MetricsMiddleware)
    index_routes(app)
    return app
