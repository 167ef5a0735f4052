"""One typed settings object, read once at start and passed in; never read from the environment later.

Every setting has a default and a help text, comes from a flag or a `REDLINE_*` environment variable,
and is listed in docs/configuration.md.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

LogLevel = Literal["debug", "info", "warning", "error"]

DEFAULT_DATABASE_URL = "sqlite:///redline.db"
# REDLINE_WORKERS: a number of server processes, or this word, for as many as the store benefits from
# (`redline.cli.processes` decides how many).
AUTO: Final = "auto"
Workers = int | Literal["auto"]
WORKERS_RULE = "a whole number of 1 or more, or auto"
# SQLite's own page cache is 2 MiB per connection: at a million runs the upper levels of the traces and
# steps indexes no longer fit, and every insert reads them back from the OS. The cache fills only as
# pages are read, so a small store costs no more than before. Per connection: a server holds one per
# request in flight.
DEFAULT_SQLITE_CACHE_MIB = 64
MIB = 1024 * 1024


class Settings(BaseSettings):
    """Redline's settings; environment variables are the field names upper-cased with a `REDLINE_` prefix."""

    model_config = SettingsConfigDict(env_prefix="REDLINE_", extra="ignore", frozen=True)

    database_url: str = Field(
        DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL of the store: sqlite:///path.db (default redline.db in the working "
        "directory) or postgresql+psycopg://user@host/db.",
    )
    host: str = Field("127.0.0.1", description="Address the server listens on.")
    port: int = Field(8000, ge=0, le=65535, description="Port the server listens on.")
    secret_key: str | None = Field(
        None,
        description="Key that signs console session cookies. Unset: one is generated on the first start "
        "and kept in the database, so every process sharing the database uses the same one.",
    )
    console_session_hours: int = Field(
        12, ge=1, le=24 * 30, description="Hours a console sign-in lasts before the token is asked for again."
    )
    console_secure_cookies: bool = Field(
        False,
        description="Mark the console's session cookie Secure (sent over HTTPS only). Set it whenever the "
        "console is reached over HTTPS, which is how it should be reached beyond localhost.",
    )
    log_level: LogLevel = Field("info", description="Least severe log level written.")
    access_log: bool = Field(
        False,
        description="Write a line per request to standard output (uvicorn's access log). Off by default: "
        "writing it costs the server about 0.1 ms of CPU a request, a tenth of an annotation's create "
        "(bench/README.md), and a proxy in front usually keeps one already. Errors are logged either way.",
    )
    metrics: bool = Field(
        False,
        description="Serve Prometheus metrics at GET /metrics (requests by route and status with latencies, "
        "runs and spans ingested, busy-store answers, jobs by state), summed over every server process. "
        "Needs REDLINE_METRICS_TOKEN.",
    )
    metrics_token: SecretStr | None = Field(
        None,
        validate_default=True,
        description="The bearer token GET /metrics takes (the scraper's `authorization` credentials); "
        "needed when metrics are on. Not a Redline token: it opens the metrics and nothing else.",
    )
    pin_cpus: bool = Field(
        True,
        description="Keep each server process's request threads on one CPU (Linux). Requests hop between "
        "the event loop's thread and a worker thread; on different CPUs each hop wakes the other CPU, "
        "which cost a 2-core virtual machine more CPU than an annotation's create itself (2.9 ms against "
        "1.16 ms a create, bench/README.md). The job worker keeps every CPU.",
    )
    workers: Workers = Field(
        AUTO,
        description="Server processes `redline serve` starts, sharing the port: a number (1 or more), or "
        "auto: one per CPU on PostgreSQL, one on SQLite, whose single writer a second process measured "
        "no faster (docs/deployment.md). One process uses about one core (Python runs one thread at a "
        "time).",
    )
    run_jobs: bool = Field(
        True,
        description="Run a background job worker (training reward models, …) inside `redline serve`. Turn it "
        "off where `redline worker` processes run the jobs instead.",
    )
    job_poll_seconds: float = Field(
        1.0, gt=0, description="How often an idle job worker looks for queued jobs, in seconds."
    )
    agreement_live_items: int = Field(
        5_000,
        ge=0,
        description="A queue's agreement is computed in the request while its items times its measured "
        "review keys are at most this many; a larger queue's is computed by the job worker and served "
        "stored, with its as-of time.",
    )
    max_body_bytes: int = Field(
        20 * MIB, gt=0, description="Largest request body accepted, in bytes; larger ones answer 413."
    )
    init_admin_token: str | None = Field(
        None,
        description="Headless first start: the admin is created with exactly this token and nothing secret "
        "is printed. Ignored once the workspace exists.",
        min_length=16,
    )
    init_project: str = Field("default", description="Name of the project made on the first start.")
    init_workspace: str = Field("default", description="Name of the workspace made on the first start.")
    init_admin_name: str = Field("admin", description="Name of the admin user made on the first start.")
    sqlite_busy_timeout_ms: int = Field(
        5000, ge=0, description="How long a SQLite writer waits for the write lock before failing."
    )
    sqlite_cache_mib: int = Field(
        DEFAULT_SQLITE_CACHE_MIB,
        ge=1,
        description="SQLite's page cache per connection, in MiB: the part of the store each connection "
        "keeps in memory. It fills only as pages are read.",
    )
    lock_wait_seconds: float = Field(
        120.0,
        ge=0,
        description="How long a command run from the shell (an import, any change) keeps trying, in all, "
        "to write to a store another process is writing to (a running server, its job worker), pausing "
        "longer between tries, before it gives up with a message. 0 tries once.",
    )
    llm_base_url: str | None = Field(
        None,
        description="Base URL of an OpenAI-compatible chat-completions endpoint (the part before "
        "/chat/completions). With llm_model set, training assesses feedback with it and adds "
        "feedback-derived pairs; unset, that source is skipped.",
    )
    llm_model: str | None = Field(None, description="The model the LLM endpoint is asked for, by name.")
    llm_api_key: SecretStr | None = Field(
        None,
        description="Bearer key for the LLM endpoint; optional (local servers need none). A secret: never "
        "logged, shown or stored.",
    )
    llm_timeout_seconds: float = Field(
        120.0, gt=0, description="How long one request to the LLM endpoint may take, in seconds."
    )
    llm_concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="How many traces one training job assesses at once, so at most this many requests to "
        "the LLM endpoint are open. More is quicker while the endpoint keeps up; 1 asks one at a time.",
    )
    llm_prompt_characters: int = Field(
        32_000,
        ge=2_000,
        description="About how many characters of conversation one request to the LLM shows (roughly 4 a "
        "token): long steps are cut in the middle and, past it, only the opening and the latest steps "
        "are shown. Raise it for models with a large context window.",
    )
    otlp_max_body_bytes: int = Field(
        64 * MIB,
        gt=0,
        description="Largest OTLP trace export (POST /v1/traces) accepted, in bytes, both as sent and after "
        "decompression; larger ones answer 413. The OTLP specification's recommended default.",
    )
    otlp_max_span_bytes: int = Field(
        8 * MIB,
        gt=0,
        description="Largest single OTLP span, with its events, in bytes; a larger span is rejected alone "
        "and the rest of its export kept.",
    )
    otlp_max_spans: int = Field(
        50_000, gt=0, description="Most spans one OTLP export may carry; more answer 413."
    )
    otlp_rate_spans_per_sec: float | None = Field(
        None,
        gt=0,
        description="Spans per second one token may send over OTLP, per server process, with a burst of "
        "as many; more answer 429 with Retry-After. Unset: no limit.",
    )
    otlp_max_pending_derive: int = Field(
        1_000,
        ge=1,
        description="Most large traces waiting for their run to be derived in the background; past it OTLP "
        "exports answer 503 with Retry-After, so exporters slow down instead of the backlog growing.",
    )
    otlp_inline_derive_max_spans: int = Field(
        2_000,
        ge=1,
        description="A trace with more spans than this has its run derived by the job worker rather than "
        "inside the export's request.",
    )
    otlp_settle_seconds: float = Field(
        30.0,
        ge=0,
        description="How long after its last span a run sent over OTLP, with its root span, is taken as "
        "complete: only then do queue rules, automations and auto-scoring see it.",
    )
    otlp_orphan_settle_seconds: float = Field(
        900.0,
        ge=0,
        description="The same wait for a run whose root span never arrived (its parent lives in a process "
        "that does not export to Redline): its earliest span is taken as the root.",
    )

    prices_file: str | None = Field(
        None,
        description="A JSON file of model prices (USD per million input and output tokens, with the day "
        "they were read) that the trace page prices model calls with when a span records no cost of its "
        "own. Unset: the table shipped with Redline (redline/traces/prices.json), whose as_of date it shows.",
    )

    @property
    def llm_configured(self) -> bool:
        """Feedback-derived alternatives need an endpoint and a model; a key is optional."""
        return bool(self.llm_base_url) and bool(self.llm_model)

    @field_validator("metrics_token")
    @classmethod
    def _metrics_need_a_token(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if info.data.get("metrics") and not (value and value.get_secret_value()):
            raise ValueError("needed when REDLINE_METRICS is on: GET /metrics is never open to all")
        return value

    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, value: object) -> Workers:
        return parse_workers(value)

    @field_validator("database_url")
    @classmethod
    def _a_store_redline_speaks(cls, value: str) -> str:
        """SQLite, or PostgreSQL through psycopg 3: URLs written for other PostgreSQL drivers
        (`postgres://`, `postgresql://`, `postgresql+psycopg2://`) are read as psycopg 3's."""
        try:
            url = make_url(value)
        except ArgumentError:
            raise ValueError(f'"{value}" is not a database URL, such as sqlite:///redline.db') from None
        backend, _, driver = url.drivername.partition("+")
        if backend in ("postgresql", "postgres") and driver in ("", "psycopg", "psycopg2"):
            return url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
        if backend == "sqlite" and driver in ("", "pysqlite"):
            return value
        raise ValueError(
            f"Redline stores data in SQLite (sqlite:///redline.db) or PostgreSQL "
            f"(postgresql+psycopg://user@host/db), not {url.drivername}"
        )


def parse_workers(value: object) -> Workers:
    """REDLINE_WORKERS or `--workers` as given (a number or its digits, or auto in any case), checked
    here once for both, so a bad value gets the same sentence from either: the union's own errors
    would name its branches, not the setting."""
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == AUTO:
            return AUTO
        if text.isascii() and text.isdigit() and int(text) >= 1:
            return int(text)
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ValueError(f"must be {WORKERS_RULE}, not {value!r}")
