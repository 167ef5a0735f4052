"""`redline`: serve the API (the default), seed a demo, and manage the store from a shell.

The commands are imported only when one runs. Importing them all made every start, even `--help`, pay
for FastAPI, uvicorn, the console, Alembic, httpx and numpy (1.5–4.5 s); the table below names each
command's module and its one-line summary, so `redline --help` lists them without importing any, and
`redline projects list` imports only what listing projects needs (bench/cli_startup.py measures it).
tests/cli/test_lazy_commands.py checks the table against the real commands, so it cannot drift.
"""

from __future__ import annotations

import importlib

import click

from redline import __version__

# Name → ("module:attribute" of the click command, its one-line summary as `--help` lists it).
COMMANDS: dict[str, tuple[str, str]] = {
    "agents": ("redline.cli.agents:agents", "Agents seen in a project and the version each pins."),
    "annotations": ("redline.cli.feedback:annotations_group", "Ratings and comments people left on traces."),
    "corrections": (
        "redline.cli.corrections:corrections",
        "Corrections of runs: list them, export an agent's, re-sort them or set their status.",
    ),
    "corrector-groups": (
        "redline.cli.groups:corrector_groups",
        "Corrector groups: who may correct as a group, where it applies, and what each correction weighs.",
    ),
    "datasets": (
        "redline.cli.datasets:datasets_group",
        "Datasets: curated inputs, messages and expected outputs for experiments.",
    ),
    "db": ("redline.cli.db:db", "Manage the store: its schema, and the counts kept beside it."),
    "demo": ("redline.cli.demo:demo", "Seed a project with data for every console page."),
    "experiments": (
        "redline.cli.experiments:experiments_group",
        "Experiments: a dataset run through a version of an agent, its results, and comparisons.",
    ),
    "expert-queue": (
        "redline.cli.expert:expert_queue_group",
        "The expert queue: the runs the queue rules picked, waiting for a correction.",
    ),
    "export": ("redline.cli.transfer:export", "Write what Redline holds to files."),
    "gepa": (
        "redline.cli.gepa:gepa_group",
        "Feedback for GEPA, the prompt optimiser: one reflective record per run.",
    ),
    "import": (
        "redline.cli.transfer:import_runs",
        "Import the runs in FILE into a project, keeping the good records and listing the skipped ones.",
    ),
    "mcp": (
        "redline.cli.mcp:mcp_command",
        "Serve Redline's MCP tools on standard input and output, as the holder of REDLINE_TOKEN.",
    ),
    "members": (
        "redline.cli.identity:members",
        "Who has which role in a project: read < write < publish < admin.",
    ),
    "pairs": (
        "redline.cli.feedback:pairs_group",
        "Preference pairs, as a reward model would be built from them.",
    ),
    "projects": ("redline.cli.identity:projects", "Projects: the unit of access and settings."),
    "queue-rules": (
        "redline.cli.expert:queue_rules_group",
        "Queue rules: each picks completed runs of a project for people to correct, as they end.",
    ),
    "queues": (
        "redline.cli.queues:queues_group",
        "Annotation queues: traces waiting for people, with the review keys they are reviewed with.",
    ),
    "reviews": (
        "redline.cli.reviews:reviews_group",
        "Human reviews: the keys (with their options or range) people review a project's traces with.",
    ),
    "reward-models": (
        "redline.cli.reward_models:reward_models_group",
        "Reward models: make one from rated or corrected traces, read it, score traces with it.",
    ),
    "serve": (
        "redline.cli.serving:serve",
        "Migrate the store, make the first workspace and admin if there are none, and serve the API.",
    ),
    "tokens": (
        "redline.cli.identity:tokens",
        "Bearer tokens: made once (the secret is shown only then), listed by prefix, revoked.",
    ),
    "trends": (
        "redline.cli.trends:trends",
        "Per queue rule, by its latest version, how often people's corrections marked each agent version "
        "right, and how far its corrector groups agree (as the job worker last computed it, with its as-of "
        "time), in the sentences of the console's Trends page (docs/results-trends.md).",
    ),
    "users": ("redline.cli.identity:users", "People (users) and programs (services) of the workspace."),
    "workspaces": (
        "redline.cli.workspaces:workspaces",
        "Workspaces: the installation's tenants, each with its own people, projects and data.",
    ),
    "worker": (
        "redline.cli.worker:worker",
        "Run background jobs (training reward models, …) until stopped (Ctrl-C or SIGTERM).",
    ),
}


def load_command(name: str) -> click.Command:
    """The real command behind a name of the table: its module is imported now, and only now."""
    module, attribute = COMMANDS[name][0].split(":")
    command: click.Command = getattr(importlib.import_module(module), attribute)
    return command


class LazyGroup(click.Group):
    """A group whose commands come from COMMANDS, imported when one is invoked (or asked for help)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's own listing, each summary from the table: shortened by click to the width as the real
        command's would be, through a stand-in command that carries only the summary."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [
            (name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)) for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.option(
    "--database-url",
    help="SQLAlchemy URL of the store [env REDLINE_DATABASE_URL; default sqlite:///redline.db].",
)
@click.option(
    "--workspace",
    envvar="REDLINE_WORKSPACE",
    help="The workspace (name or id) the command acts in [env REDLINE_WORKSPACE; default: the "
    "installation's first].",
)
@click.version_option(__version__, prog_name="redline")
@click.pass_context
def cli(ctx: click.Context, database_url: str | None, workspace: str | None) -> None:
    """Redline: self-hosted human feedback for AI agents.

    With no command, runs `redline serve`. Every option also comes from a REDLINE_* environment
    variable (see docs/configuration.md); a flag wins over the variable.
    """
    # Here, not at the top: `redline --help` and `--version` never get this far, and need none of it.
    from redline.cli.context import CliContext

    ctx.obj = CliContext(
        overrides={"database_url": database_url} if database_url else {}, workspace=workspace
    )
    ctx.call_on_close(ctx.obj.close)
    if ctx.invoked_subcommand is None:
        ctx.invoke(load_command("serve"))


def main() -> None:
    cli(prog_name="redline")
