"""The `redline` command, run through click's runner against a fresh store on each backend."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from redline.annotations import service as annotation_service
from redline.annotations.hidden import NOTHING_HIDDEN
from redline.annotations.schemas import AnnotationIn, QuoteIn
from redline.cli.main import cli
from redline.db import Database
from redline.identity import service as identity
from redline.traces import service as traces
from tests.concurrency import run_at_once

TOKEN_LINE = re.compile(r"Admin token \(shown once, keep it safe\): (\S+)")


def invoke(database_url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner(env=env).invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)
    return result


def ok(database_url: str, *args: str, env: dict[str, str] | None = None) -> str:
    result = invoke(database_url, *args, env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_first_start_prints_the_admin_token_once(database_url: str, db: Database) -> None:
    first = ok(database_url, "db", "upgrade")
    match = TOKEN_LINE.search(first)
    assert match, first
    assert 'project "default"' in first
    second = ok(database_url, "db", "upgrade")
    assert "Admin token" not in second
    with db.read() as session:
        actor, _ = identity.authenticate(session, match.group(1))
    assert actor.workspace_admin
    assert actor.reviewer_role == "admin"


def test_headless_first_start_uses_the_given_token(database_url: str, db: Database) -> None:
    secret = "init-token-for-automation-0001"
    output = ok(
        database_url, "db", "upgrade", env={"REDLINE_INIT_ADMIN_TOKEN": secret, "REDLINE_INIT_PROJECT": "ops"}
    )
    assert secret not in output
    assert "REDLINE_INIT_ADMIN_TOKEN" in output
    assert 'project "ops"' in output
    with db.read() as session:
        actor, _ = identity.authenticate(session, secret)
    assert actor.name == "admin"
    later = ok(database_url, "db", "upgrade", env={"REDLINE_INIT_ADMIN_TOKEN": "another-token-ignored-0002"})
    assert "First start" not in later


def test_users_tokens_projects_and_members(database_url: str, db: Database) -> None:
    ok(database_url, "db", "upgrade")
    assert "Created user ann" in ok(database_url, "users", "create", "ann", "--reviewer-role", "senior")
    assert "Created service ci" in ok(database_url, "users", "create", "ci", "--kind", "service")
    listing = ok(database_url, "users", "list")
    assert re.search(r"ann\s+user\s+senior", listing)
    assert re.search(r"ci\s+service\s+-", listing)
    made = ok(database_url, "tokens", "create", "--user", "ci", "--name", "deploy")
    secret = made.strip().splitlines()[-1]
    token_id = made.split()[1]
    assert secret.startswith("rl_")
    tokens = ok(database_url, "tokens", "list", "--user", "ci")
    assert secret[:11] in tokens
    assert secret not in tokens
    ok(database_url, "projects", "create", "billing")
    assert "billing" in ok(database_url, "projects", "list")
    assert "ci is write in billing." in ok(
        database_url, "members", "add", "--project", "billing", "--user", "ci", "--role", "write"
    )
    with db.read() as session:
        actor, _ = identity.authenticate(session, secret)
        assert [(p.name, role) for p, role in identity.visible_projects(session, actor)] == [
            ("billing", "write")
        ]
    ok(database_url, "members", "remove", "--project", "billing", "--user", "ci")
    assert "Revoked token" in ok(database_url, "tokens", "revoke", token_id)
    with db.read() as session, pytest.raises(Exception, match="revoked"):
        identity.authenticate(session, secret)


def test_errors_are_sentences_not_tracebacks(database_url: str) -> None:
    ok(database_url, "db", "upgrade")
    taken = invoke(database_url, "projects", "create", "default")
    assert taken.exit_code == 1
    assert 'Error: The project name "default" is taken in this workspace.' in taken.output
    missing = invoke(database_url, "members", "add", "--project", "nope", "--user", "admin", "--role", "read")
    assert missing.exit_code == 1
    assert 'No project "nope".' in missing.output
    assert invoke(database_url, "tokens", "revoke", "xyz").exit_code == 2


# The parts `redline demo` reports, a line each, in the order it makes them.
DEMO_PARTS = ["Runs", "People", "Expert queue", "Annotation queue", "Dataset", "Reward model", "Experiments"]


def test_demo_seeds_and_is_repeatable(database_url: str, db: Database) -> None:
    output = ok(database_url, "demo")
    said = [line for line in output.splitlines() if line.split(":", 1)[0] in DEMO_PARTS]
    assert [line.split(":", 1)[0] for line in said] == DEMO_PARTS
    assert said[0] == 'Runs: 200 support-agent runs in project "default" (200 added, 0 already there).'
    assert said[-2].startswith('Reward model: "Support quality (demo)" trained on 500 pairs from 102 ratings')
    assert said[-1].startswith(
        'Experiments: "Refund replay · v1" (support-agent v1) follows the refund policy'
    )
    assert re.search(r'^Demo ready in project "default" in \d+\.\d s\.$', output, re.MULTILINE)
    again = ok(database_url, "demo")
    assert 'Runs: 200 support-agent runs in project "default" (0 added, 200 already there).' in again
    assert 'Expert queue: rule "Support runs" is already there; left as it is.' in again
    assert 'Experiments: "Refund replay · v1" and "Refund replay · v2" are already there' in again
    with db.read() as session:
        actor = identity.operator(session)
        # The demo's 200 runs and its experiments' (dry runs, each a datapoint's run again): two pages.
        page = traces.list_runs(session, actor, traces.RunFilters(), limit=200)
        more = traces.list_runs(session, actor, traces.RunFilters(), limit=200, cursor=page.next_cursor)
    listed = [*page.items, *more.items]
    assert more.next_cursor is None
    assert len([view for view in listed if not view.trace.dry_run]) == 200
    assert {view.agent_name for view in listed} == {"support-agent"}
    ok(database_url, "agents", "pin", "support-agent", "--project", "default", "--version", "v2")
    assert re.search(r"support-agent\s+v2", ok(database_url, "agents", "list", "--project", "default"))
    assert "ready" in ok(database_url, "reward-models", "show", "Support quality (demo)")


def test_demo_into_a_project_that_isnt_there(database_url: str) -> None:
    result = invoke(database_url, "demo", "--project", "nowhere")
    assert result.exit_code == 1
    assert result.output.endswith('\nError: No project "nowhere".\n')


def test_import_each_format_and_export_round_trip(database_url: str, tmp_path: Path, db: Database) -> None:
    ok(database_url, "db", "upgrade")
    openai = tmp_path / "openai.jsonl"
    openai.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "o1",
                        "messages": [
                            {"role": "user", "content": "hi"},
                            {"role": "assistant", "content": "hello"},
                        ],
                    }
                ),
                json.dumps({"id": "o2", "messages": []}),
                json.dumps(
                    {
                        "id": "o3",
                        "messages": [
                            {"role": "user", "content": "refund 1182"},
                            {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [
                                    {
                                        "id": "c1",
                                        "type": "function",
                                        "function": {
                                            "name": "lookup_order",
                                            "arguments": '{"order_id": "1182"}',
                                        },
                                    }
                                ],
                            },
                            {"role": "tool", "tool_call_id": "c1", "content": '{"status": "delivered"}'},
                        ],
                    }
                ),
            ]
        )
    )
    output = ok(database_url, "import", str(openai), "--project", "default")
    assert "Imported 2 runs (5 steps) into default" in output
    assert "Skipped 1:" in output
    assert "record 2: trace has no steps" in output

    anthropic = tmp_path / "anthropic.json"
    anthropic.write_text(
        json.dumps(
            {
                "id": "a1",
                "system": "Be kind.",
                "messages": [
                    {"role": "user", "content": "refund 1182"},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "t1",
                                "name": "lookup_order",
                                "input": {"order_id": "1182"},
                            }
                        ],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "delivered"}],
                    },
                ],
            }
        )
    )
    assert "Imported 1 run (4 steps)" in ok(
        database_url, "import", str(anthropic), "--project", "default", "--format", "anthropic_messages"
    )

    exported = tmp_path / "runs.jsonl"
    assert "Wrote 3 runs" in ok(
        database_url, "export", "runs", "--project", "default", "--output", str(exported)
    )
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert sorted(line["externalId"] for line in lines) == ["a1", "o1", "o3"]
    ok(database_url, "projects", "create", "copy")
    assert "Imported 3 runs (9 steps) into copy" in ok(
        database_url, "import", str(exported), "--project", "copy"
    )
    copied = tmp_path / "copy.jsonl"
    ok(database_url, "export", "runs", "--project", "copy", "--output", str(copied))
    copy_lines = [json.loads(line) for line in copied.read_text().splitlines()]
    assert _without_project(copy_lines) == _without_project(lines)


def _without_project(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return sorted(({k: v for k, v in row.items() if k != "projectId"} for row in rows), key=str)


def test_import_refuses_unknown_content(database_url: str, tmp_path: Path) -> None:
    ok(database_url, "db", "upgrade")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    result = invoke(database_url, "import", str(junk), "--project", "default")
    assert result.exit_code == 1
    assert (
        "could not detect the trace format; tried: stash, native, openai_chat, anthropic_messages, otel"
        in result.output
    )


def test_import_of_json_nested_past_the_parser_says_so_in_a_line(database_url: str, tmp_path: Path) -> None:
    ok(database_url, "db", "upgrade")
    nested = tmp_path / "nested.jsonl"
    nested.write_text("[" * 100_000 + "\n")
    named = invoke(database_url, "import", str(nested), "--project", "default", "--format", "native")
    assert named.exit_code == 0, named.output
    assert named.output.splitlines()[-2:] == [
        "Skipped 1:",
        "  record 1: not valid JSON: nested too deeply (column 1)",
    ]
    detected = invoke(database_url, "import", str(nested), "--project", "default")
    assert detected.exit_code == 1
    tried = "stash, native, openai_chat, anthropic_messages, otel"
    assert detected.output.splitlines() == [f"Error: could not detect the trace format; tried: {tried}"]


def test_import_takes_metadata_nested_as_deep_as_the_api_does_and_once(
    database_url: str, tmp_path: Path
) -> None:
    ok(database_url, "db", "upgrade")
    deep = tmp_path / "deep.jsonl"
    record = {"steps": [{"role": "user", "content": "hi"}], "metadata": {"a": 0}}
    text = json.dumps(record).replace('{"a": 0}', '{"a": ' + "[" * 900 + "]" * 900 + "}")
    deep.write_text(text + "\n")
    for _ in range(2):  # the second time finds the run by the id its content gave it
        done = invoke(database_url, "import", str(deep), "--project", "default")
        assert done.exit_code == 0, done.output
    exported = tmp_path / "runs.jsonl"
    ok(database_url, "export", "runs", "--project", "default", "--output", str(exported))
    [run] = [json.loads(line) for line in exported.read_text().splitlines()]
    assert json.dumps(run["metadata"]) == '{"a": ' + "[" * 900 + "]" * 900 + "}"


def test_import_reads_stash_records_and_says_which_it_skipped(database_url: str, tmp_path: Path) -> None:
    ok(database_url, "db", "upgrade")
    path = tmp_path / "stash.jsonl"
    records = [
        {"id": "s1", "steps": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
        {"id": "s2", "steps": [{"role": "bot", "content": "beep"}]},
    ]
    path.write_text("\n".join(json.dumps(record) for record in records))
    output = ok(database_url, "import", str(path), "--project", "default")
    assert "Imported 1 run (2 steps) into default" in output
    assert "record 2: steps[0].role: invalid role 'bot'" in output


def test_db_check_agrees(database_url: str) -> None:
    assert "Models and migrations agree." in ok(database_url, "db", "check")
    assert "Models and migrations agree." in ok(database_url, "db", "check", "--in-place")


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for args in (
        [],
        ["serve"],
        ["demo"],
        ["db"],
        ["db", "upgrade"],
        ["db", "check"],
        ["users", "create"],
        ["tokens", "create"],
        ["tokens", "revoke"],
        ["projects", "create"],
        ["members", "add"],
        ["import"],
        ["export", "runs"],
        ["agents", "pin"],
    ):
        result = runner.invoke(cli, [*args, "--help"])
        assert result.exit_code == 0, args
        assert "Usage:" in result.output


def test_large_imports_go_in_groups_and_the_last_record_of_an_id_wins(
    database_url: str, tmp_path: Path, db: Database
) -> None:
    ok(database_url, "db", "upgrade")
    records = [
        {"externalId": f"r{i % 1000}", "status": "completed", "title": f"copy {i // 1000}", "steps": []}
        for i in range(1201)
    ]
    records.insert(300, {"externalId": "r300", "status": "completed", "title": "first of two", "steps": []})
    records.append({"status": "completed", "title": "no id"})
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in records))
    output = ok(database_url, "import", str(path), "--project", "default")
    assert "Imported" in output
    with db.read() as session:
        actor = identity.operator(session)
        views = list(
            traces.iter_project_runs(session, actor, identity.find_project(session, actor, "default").id)
        )
    titles = {view.trace.external_id: view.trace.title for view in views}
    assert len(views) == 1001
    assert titles["r0"] == titles["r200"] == "copy 1"
    assert titles["r300"] == "copy 0"
    assert titles["r999"] == "copy 0"
    made = [external_id for external_id, title in titles.items() if title == "no id"]
    assert len(made) == 1
    assert re.fullmatch(r"sha256-[0-9a-f]{32}", made[0] or "")


def test_reimporting_a_run_looks_for_its_quotes_in_the_changed_steps(
    database_url: str, tmp_path: Path, db: Database
) -> None:
    """`redline import` of a run again by its external id: a quote on a step whose words changed is
    found again where it can be (annotations.anchoring), else detached on its step."""
    ok(database_url, "db", "upgrade")
    said = ["I want a refund for order 1182", "Sure! I've issued a full refund to your card."]

    def write(user: str, answer: str) -> None:
        steps = [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
        path.write_text(json.dumps({"externalId": "ticket-1182", "status": "completed", "steps": steps}))

    path = tmp_path / "runs.jsonl"
    write(*said)
    ok(database_url, "import", str(path), "--project", "default", "--format", "native")
    with db.write() as session:
        actor = identity.operator(session)
        project = identity.find_project(session, actor, "default").id
        [view] = list(traces.iter_project_runs(session, actor, project))
        steps = [step.id for step in traces.get_run(session, actor, view.trace.id).steps]
        for step_id, text in zip(steps, ["refund for order", "I've issued a full refund"], strict=True):
            body = AnnotationIn(step_id=step_id, comment="c", quote=QuoteIn(text=text))
            annotation_service.create(session, actor, view.trace.id, body)

    write("I want my money back for order 1182", "Done: I've issued a full refund to your card.")
    ok(database_url, "import", str(path), "--project", "default", "--format", "native")

    with db.read() as session:
        said_now = annotation_service.for_trace(
            session, identity.operator(session), view.trace.id, NOTHING_HIDDEN
        )
        assert [(a.step_id, a.quote, a.quote_anchor) for a in said_now] == [
            (
                steps[0],
                {"text": "refund for order", "prefix": "", "suffix": "", "start": None, "end": None},
                "detached",
            ),
            (
                steps[1],
                {"text": "I've issued a full refund", "prefix": "", "suffix": "", "start": 6, "end": 31},
                "exact",
            ),
        ]


def test_the_cookie_key_is_made_once_unless_configured(database_url: str, db: Database) -> None:
    from redline.app import create_app
    from redline.config import Settings

    ok(database_url, "db", "upgrade")
    first = create_app(Settings(database_url=database_url), db).state.secret_key
    again = create_app(Settings(database_url=database_url), db).state.secret_key
    assert first == again
    assert len(first) >= 48
    configured = create_app(Settings(database_url=database_url, secret_key="k" * 40), db).state.secret_key
    assert configured == "k" * 40


def test_server_processes_starting_together_agree_on_one_cookie_key(
    database_url: str, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`redline serve --workers 2` on a store without the key: both processes find none and both make one
    (a barrier holds each between its read and its insert, which PostgreSQL lets both pass; SQLite's
    write lock lets only one in, so there the barrier times out). The loser starts with the winner's."""
    import contextlib
    import threading
    from types import SimpleNamespace

    from sqlalchemy import delete

    from redline.app import create_app
    from redline.config import Settings
    from redline.identity.models import InstanceSetting

    ok(database_url, "db", "upgrade")
    with db.write() as session:
        session.execute(delete(InstanceSetting).where(InstanceSetting.key == identity.SECRET_KEY_SETTING))
    both_read = threading.Barrier(2, timeout=2)
    made: list[str] = []

    def new_key(length: int) -> str:
        with contextlib.suppress(threading.BrokenBarrierError):
            both_read.wait()
        made.append(f"key-{len(made)}-".ljust(length, "x"))
        return made[-1]

    monkeypatch.setattr(identity, "secrets", SimpleNamespace(token_urlsafe=new_key))
    keys: list[str] = []
    settings = Settings(database_url=database_url)
    assert run_at_once(lambda _: keys.append(create_app(settings, db).state.secret_key), threads=2) == []
    assert len(made) == (2 if db.dialect_name == "postgresql" else 1)
    with db.read() as session:
        stored = session.get(InstanceSetting, identity.SECRET_KEY_SETTING)
        assert stored is not None
        assert keys == [stored.value, stored.value]


def test_processes_starting_together_make_one_workspace(database_url: str, db: Database) -> None:
    from sqlalchemy import text

    from redline.cli.context import CliContext

    def start(_: int) -> None:
        context = CliContext(overrides={"database_url": database_url})
        try:
            context.make_store()
        finally:
            context.close()

    assert run_at_once(start, threads=4) == []
    with db.read() as session:
        assert session.execute(text("SELECT count(*) FROM workspaces")).scalar() == 1
        assert session.execute(text("SELECT count(*) FROM tokens")).scalar() == 1


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"REDLINE_DATABASE_URL": "foo"}, 'REDLINE_DATABASE_URL: "foo" is not a database URL'),
        ({"REDLINE_DATABASE_URL": "mysql://x/y"}, "Redline stores data in SQLite"),
        ({"REDLINE_INIT_ADMIN_TOKEN": "short"}, "REDLINE_INIT_ADMIN_TOKEN: String should have at least 16"),
        ({"REDLINE_LOG_LEVEL": "loud"}, "REDLINE_LOG_LEVEL: Input should be"),
    ],
)
def test_bad_settings_are_one_line_errors(env: dict[str, str], expected: str) -> None:
    result = CliRunner(env=env).invoke(cli, ["db", "upgrade"])
    assert result.exit_code == 2
    assert expected in result.output
    assert "Traceback" not in result.output


def test_an_unreachable_store_is_one_line(tmp_path: Path) -> None:
    for url, reason in [
        ("postgresql+psycopg://postgres@127.0.0.1:1/redline", "Connection refused"),
        (f"sqlite:///{tmp_path}/missing/dir/x.db", "unable to open database file"),
    ]:
        result = CliRunner().invoke(cli, ["--database-url", url, "db", "upgrade"])
        assert result.exit_code == 1
        assert f"Error: Can't open the store {url}: " in result.output
        assert reason in result.output


def test_postgres_urls_use_psycopg_3() -> None:
    from redline.config import Settings

    assert Settings(database_url="postgres://u:pw@h/db").database_url == "postgresql+psycopg://u:pw@h/db"
    assert (
        Settings(database_url="postgresql://u@h:5433/db").database_url == "postgresql+psycopg://u@h:5433/db"
    )
    assert Settings(database_url="postgresql+psycopg2://u@h/db").database_url == "postgresql+psycopg://u@h/db"
    with pytest.raises(ValueError, match="not postgresql\\+asyncpg"):
        Settings(database_url="postgresql+asyncpg://u@h/db")


def test_import_names_the_agent_of_records_that_name_none(
    database_url: str, tmp_path: Path, db: Database
) -> None:
    ok(database_url, "db", "upgrade")
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        "\n".join(
            json.dumps(
                {"messages": [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": "a"}]}
            )
            for n in range(3)
        )
    )
    output = ok(
        database_url,
        "import",
        str(chat),
        "--project",
        "default",
        "--agent",
        "support-bot",
        "--agent-version",
        "v3",
    )
    assert "Imported 3 runs (6 steps) into default" in output
    native = tmp_path / "native.jsonl"
    native.write_text(
        "\n".join(
            [
                json.dumps({"externalId": "own", "agent": "billing", "status": "completed", "steps": []}),
                json.dumps({"externalId": "flowed", "flow": "triage", "status": "completed", "steps": []}),
                json.dumps({"externalId": "bare", "status": "completed", "steps": []}),
            ]
        )
    )
    ok(database_url, "import", str(native), "--project", "default", "--agent", "support-bot")
    with db.read() as session:
        actor = identity.operator(session)
        project = identity.find_project(session, actor, "default").id
        views = list(traces.iter_project_runs(session, actor, project))
    by_id = {view.trace.external_id: view for view in views}
    chats = [view for key, view in by_id.items() if key and key.startswith("sha256-")]
    assert {(view.agent_name, view.trace.agent_version) for view in chats} == {("support-bot", "v3")}
    assert len(chats) == 3
    assert (by_id["own"].agent_name, by_id["own"].trace.agent_version) == ("billing", None)
    assert (by_id["flowed"].agent_name, by_id["flowed"].flow_name) == (None, "triage")
    assert (by_id["bare"].agent_name, by_id["bare"].trace.agent_version) == ("support-bot", None)

    # The ids come from the records themselves, so a second import with another agent corrects the runs.
    again = ok(database_url, "import", str(chat), "--project", "default", "--agent", "helper")
    assert "Imported 3 runs" in again
    with db.read() as session:
        actor = identity.operator(session)
        views = list(traces.iter_project_runs(session, actor, project))
    assert len(views) == 6
    assert sorted(view.agent_name or "-" for view in views) == [
        "-",
        "billing",
        "helper",
        "helper",
        "helper",
        "support-bot",
    ]

    refused = invoke(database_url, "import", str(chat), "--project", "default", "--agent-version", "v1")
    assert refused.exit_code == 2
    assert "Error: --agent-version needs --agent: the version of which agent?" in refused.output
    too_long = invoke(database_url, "import", str(chat), "--project", "default", "--agent", "x" * 201)
    assert too_long.exit_code == 2
    assert "Invalid value for '--agent': must be 1 to 200 characters." in too_long.output


def test_identical_records_stay_apart_and_a_second_import_adds_nothing(
    database_url: str, tmp_path: Path, db: Database
) -> None:
    ok(database_url, "db", "upgrade")
    same = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    other = {"messages": [{"role": "user", "content": "bye"}, {"role": "assistant", "content": "ciao"}]}
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in [same, other, same]))
    ok(database_url, "import", str(path), "--project", "default")
    # The file grows at the front: the records it had keep their ids.
    path.write_text(
        "\n".join(json.dumps(record) for record in [other | {"metadata": {"n": 1}}, same, other, same])
    )
    ok(database_url, "import", str(path), "--project", "default")
    with db.read() as session:
        actor = identity.operator(session)
        project = identity.find_project(session, actor, "default").id
        ids = sorted(
            view.trace.external_id or "" for view in traces.iter_project_runs(session, actor, project)
        )
    assert len(ids) == 4
    assert all(re.fullmatch(r"sha256-[0-9a-f]{32}(-2)?", external_id) for external_id in ids)
    assert sum(external_id.endswith("-2") for external_id in ids) == 1
