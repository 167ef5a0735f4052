"""`redline annotations import`: the export's lines loaded onto the runs of a project, on each backend.

The runs live twice in one store: in `default`, where the annotations are made and exported, and in
`staging`, the same runs by external id with ids of their own, as a migration to another store finds
them. Importing the export into `staging` and exporting again must give the same lines there.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import and_, func, select

from redline.annotations import importing
from redline.annotations import service as annotation_service
from redline.annotations.hidden import NOTHING_HIDDEN
from redline.annotations.models import Annotation
from redline.annotations.schemas import AnnotationChange, AnnotationIn, QuoteIn
from redline.cli import feedback, progress
from redline.cli.main import cli
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.reviews import service as review_service
from redline.reviews.annotate import save_values
from redline.reviews.schemas import ValueIn
from redline.traces import service as traces
from redline.traces.models import Trace
from redline.traces.schemas import RunIn, StepIn
from tests.cli.test_long_work import BUSY_TIMEOUT_MS, _short_waits, _write_lock
from tests.conftest import Harness

REPLY = "Sure! I've issued a full refund to your card. A full refund takes 5 days."


def _runs(project_id: uuid.UUID) -> list[RunIn]:
    return [
        RunIn(
            project_id=project_id,
            external_id=f"t{i}",
            status="completed",
            steps=[
                StepIn(role="system", content="Be kind."),
                StepIn(role="user", content="refund?"),
                StepIn(role="assistant", content=REPLY),
            ],
        )
        for i in range(3)
    ]


def _two_projects(db: Database) -> dict[str, list[uuid.UUID]]:
    """The same three runs in `default` and `staging` (and a user, Henry Dowling); their ids by project."""
    with db.write() as session:
        actor = identity.operator(session)
        default = identity.find_project(session, actor, "default")
        staging = identity.create_project(session, actor, "staging")
        identity.create_user(session, actor, name="Henry Dowling", kind="user")
        return {
            project.name: [run.id for run in ingest.record_runs(session, actor, _runs(project.id))]
            for project in (default, staging)
        }


def _annotate(db: Database, runs: list[uuid.UUID]) -> None:
    """One of each kind on `default`'s runs: a whole-trace rating (then flagged), a step's rating with a
    comment and a quote of the second "full refund", a comment on a system step, a comment by Henry."""
    with db.write() as session:
        operator = identity.operator(session)
        steps = [traces.get_run(session, operator, run).steps for run in runs]
        flagged = annotation_service.create(session, operator, runs[0], AnnotationIn(rating=1))
        annotation_service.change(
            session, operator, flagged.id, AnnotationChange(label_error=True, label_error_note="wrong run")
        )
        quote = QuoteIn(text="full refund", prefix="A ", suffix=" takes")
        said = AnnotationIn(rating=-1, comment="No policy check", step_id=steps[1][2].id, quote=quote)
        annotation_service.create(session, operator, runs[1], said)
        annotation_service.create(
            session, operator, runs[2], AnnotationIn(comment="Too terse", step_id=steps[2][0].id)
        )
    henry = identity.Actor(
        workspace_id=operator.workspace_id,
        principal_id=_principal(db, "Henry Dowling"),
        name="Henry Dowling",
        kind="user",
        workspace_admin=True,
    )
    with db.write() as session:
        annotation_service.create(session, henry, runs[2], AnnotationIn(rating=1))


def _principal(db: Database, name: str) -> uuid.UUID:
    with db.read() as session:
        return next(
            user.id for user in identity.list_users(session, identity.operator(session)) if user.name == name
        )


def _invoke(database_url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(cli, ["--database-url", database_url, *args])


def _export(database_url: str, path: Path) -> list[dict[str, Any]]:
    done = _invoke(database_url, "annotations", "export", "--output", str(path))
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in path.read_text().splitlines()]


def _import(database_url: str, path: Path, project: str = "staging") -> Result:
    return _invoke(database_url, "annotations", "import", str(path), "--project", project)


@pytest.fixture
def exported(store_url: str, db: Database, tmp_path: Path) -> tuple[dict[str, list[uuid.UUID]], Path]:
    """The runs in both projects, `default`'s annotated and exported to a file."""
    runs = _two_projects(db)
    _annotate(db, runs["default"])
    path = tmp_path / "annotations.ndjson"
    _export(store_url, path)
    return runs, path


def _summary(result: Result) -> str:
    return result.stdout.splitlines()[0]


def test_an_export_imported_onto_the_same_runs_elsewhere_exports_the_same_lines(
    store_url: str, db: Database, exported: tuple[dict[str, list[uuid.UUID]], Path], tmp_path: Path
) -> None:
    runs, path = exported
    before = [json.loads(line) for line in path.read_text().splitlines()]
    done = _import(store_url, path)
    assert done.exit_code == 0, done.output
    assert _summary(done).startswith("Imported 4 annotations into staging in ")
    assert "already there" not in done.stdout
    again = _export(store_url, tmp_path / "again.ndjson")
    staging_ids = {str(run) for run in runs["staging"]}
    imported = [line for line in again if line["trace_id"] in staging_ids]
    by_external = dict(zip([f"t{i}" for i in range(3)], runs["staging"], strict=True))
    assert [line["trace_id"] for line in imported] == [
        str(by_external[line["trace_external_id"]]) for line in before
    ]
    assert [{**line, "trace_id": None} for line in imported] == [
        {**line, "trace_id": None} for line in before
    ]
    # Kept as written: the flag and its note, the times to the microsecond, the authors' names.
    assert imported[0]["label_error"] is True
    assert imported[0]["label_error_note"] == "wrong run"
    assert [line["author"] for line in imported] == ["operator", "operator", "operator", "Henry Dowling"]


def test_steps_quotes_and_authors_are_found_again_on_this_stores_runs(
    store_url: str, db: Database, exported: tuple[dict[str, list[uuid.UUID]], Path]
) -> None:
    runs, path = exported
    assert _import(store_url, path).exit_code == 0
    with db.read() as session:
        operator = identity.operator(session)
        said = [
            annotation_service.for_trace(session, operator, run, NOTHING_HIDDEN) for run in runs["staging"]
        ]
        steps = [traces.get_run(session, operator, run).steps for run in runs["staging"]]
    [whole], [step], [system, henry] = said
    assert whole.step_id is None
    assert step.step_id == steps[1][2].id
    # The quote is resolved on this store's step: the second "full refund", told apart by its prefix.
    second = REPLY.index("full refund", REPLY.index("full refund") + 1)
    assert step.quote == {
        "text": "full refund", "prefix": "A ", "suffix": " takes", "start": second, "end": second + 11,
    }  # fmt: skip
    assert system.step_id == steps[2][0].id
    # The author's principal is the workspace's principal of that name; the operator is none.
    assert (whole.author_id, henry.author_id) == (None, _principal(db, "Henry Dowling"))
    assert henry.author_name == "Henry Dowling"


def test_importing_the_same_file_again_stores_nothing_twice(
    store_url: str, db: Database, exported: tuple[dict[str, list[uuid.UUID]], Path]
) -> None:
    _, path = exported
    assert _import(store_url, path).exit_code == 0
    kept = _kept_counts(db)
    again = _import(store_url, path)
    assert again.exit_code == 0, again.output
    assert _summary(again).startswith("Imported 0 annotations into staging in ")
    assert _summary(again).endswith("; 4 annotations already there.")
    with db.read() as session:
        assert session.scalar(select(func.count()).select_from(Annotation)) == 8
    assert _kept_counts(db) == kept


def test_two_identical_lines_are_two_annotations_in_every_import(
    store_url: str, db: Database, exported: tuple[dict[str, list[uuid.UUID]], Path], tmp_path: Path
) -> None:
    _, path = exported
    first = path.read_text().splitlines()[0]
    twice = tmp_path / "twice.ndjson"
    twice.write_text(f"{first}\n{first}\n")
    assert _summary(_import(store_url, twice)).startswith("Imported 2 annotations ")
    assert _summary(_import(store_url, twice)).endswith("; 2 annotations already there.")


def _kept_counts(db: Database) -> list[tuple[Any, ...]]:
    """Every run's kept counts beside what counting its annotations says."""
    rated = and_(Annotation.rating.is_not(None), Annotation.label_error.is_(False))

    def counted(condition: Any) -> Any:
        return (
            select(func.count()).select_from(Annotation).where(Annotation.trace_id == Trace.id, condition)
        ).scalar_subquery()

    with db.read() as session:
        rows = session.execute(
            select(
                Trace.external_id,
                Trace.project_id,
                Trace.rated_count,
                Trace.comment_count,
                counted(rated),
                counted(Annotation.comment.is_not(None)),
            ).order_by(Trace.project_id, Trace.external_id)
        ).all()
    return [tuple(row) for row in rows]


def test_kept_counts_and_the_trace_summaries_are_right_after_an_import(
    harness: Harness, database_url: str, tmp_path: Path
) -> None:
    runs = _two_projects(harness.db)
    _annotate(harness.db, runs["default"])
    path = tmp_path / "annotations.ndjson"
    _export(database_url, path)
    assert _import(database_url, path).exit_code == 0
    kept = _kept_counts(harness.db)
    assert all(row[2:4] == row[4:6] for row in kept), kept
    with harness.db.read() as session:
        staging_id = identity.find_project(session, identity.operator(session), "staging").id
    staging = {row[0]: row[2:4] for row in kept if row[1] == staging_id}
    # t0: a flagged rating (not counted); t1: a rating and a comment; t2: a comment and Henry's rating.
    assert staging == {"t0": (0, 0), "t1": (1, 1), "t2": (1, 1)}
    answer = harness.client.get("/api/v1/rm/traces?limit=10", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    summaries = {trace["id"]: trace for trace in answer.json()["traces"]}
    counts = [
        {key: summaries[str(run)][key] for key in ("positive_count", "negative_count", "label_error_count")}
        for run in runs["staging"]
    ]
    assert counts == [
        {"positive_count": 0, "negative_count": 0, "label_error_count": 1},
        {"positive_count": 0, "negative_count": 1, "label_error_count": 0},
        {"positive_count": 1, "negative_count": 0, "label_error_count": 0},
    ]


def _line(**fields: Any) -> str:
    line = {
        "trace_id": None, "trace_external_id": "t1", "step_index": 2, "rating": -1, "comment": "c",
        "quote": None, "label_error": False, "label_error_note": None, "author": "operator",
        "created_at": "2026-09-29T03:12:00+00:00",
    }  # fmt: skip
    line.update(fields)
    return json.dumps({key: value for key, value in line.items() if value != "(absent)"})


UNKNOWN_TRACE = "no run of the project has this trace_id or trace_external_id"
BAD_LINES = [
    ("{not json", "not valid JSON: key must be a string at line 1 column 2"),
    ("[1, 2]", "a line must be a JSON object"),
    (_line(created_at="(absent)"), "created_at: Field required"),
    (_line(created_at="2026-09-29T03:12:00"), "created_at: Input should have timezone info"),
    (_line(trace_external_id=None), "a line needs a trace_id or a trace_external_id"),
    (_line(trace_external_id="nope"), UNKNOWN_TRACE),
    (_line(trace_id=str(uuid.UUID(int=7)), trace_external_id=None), UNKNOWN_TRACE),
    (_line(step_index=3), "step_index is not a step of this trace"),
    (_line(step_index=-1), "step_index: Input should be greater than or equal to 0"),
    (_line(step_index=0), "system steps can be commented on but not rated"),
    (_line(rating=None, comment=None), "an annotation needs a rating, a comment, or both"),
    (_line(rating=None, comment=""), "an annotation needs a rating, a comment, or both"),
    (_line(rating=2), "rating: Input should be 1 or -1"),
    (_line(quote={"text": "no such words"}), "quote text does not appear in the step's content"),
    (_line(step_index=None, quote={"text": "refund"}), "a quote needs a step_id"),
    (_line(comment="a\u0000b"), "comment: text may not contain the NUL character (\\u0000)"),
    (_line(author=""), "author: String should have at least 1 character"),
]  # fmt: skip


def test_bad_lines_are_skipped_with_their_reasons_and_the_good_ones_stored(
    store_url: str, db: Database, tmp_path: Path
) -> None:
    _two_projects(db)
    good = [_line(), _line(step_index=None, comment=None, rating=1), _line(step_index=0, rating=None)]
    path = tmp_path / "mixed.ndjson"
    # Blank lines are passed over but counted, as an editor numbers lines.
    path.write_text("\n".join([good[0], "", *(line for line, _ in BAD_LINES), *good[1:]]) + "\n")
    done = _import(store_url, path)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Imported 3 annotations into staging in ")
    assert lines[1] == f"Skipped {len(BAD_LINES)}:"
    assert lines[2:] == [
        f"  line {number}: {reason}" for number, (_, reason) in enumerate(BAD_LINES, start=3)
    ]


def test_a_project_that_is_not_there_is_one_line(store_url: str, db: Database, tmp_path: Path) -> None:
    path = tmp_path / "one.ndjson"
    path.write_text(_line() + "\n")
    done = _import(store_url, path, project="nope")
    assert done.exit_code == 1
    assert done.output == 'Error: No project "nope".\n'


def test_progress_counts_the_lines_a_group_at_a_time(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(db)
    monkeypatch.setattr(feedback, "IMPORT_GROUP", 2)
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    path = tmp_path / "ten.ndjson"
    path.write_text("".join(_line(created_at=f"2026-09-29T03:12:0{n}+00:00") + "\n" for n in range(10)))
    done = _import(store_url, path)
    assert done.exit_code == 0, done.output
    assert _summary(done).startswith("Imported 10 annotations into staging in ")
    shown = [line.split(",")[0] for line in done.stderr.splitlines()]
    assert shown == [
        *(f"Importing annotations: {n} of 10 lines ({n * 10}%)" for n in (2, 4, 6, 8)),
        "Importing annotations: 10 lines in "
        + done.stderr.splitlines()[-1].split(" lines in ")[1].split(",")[0],
    ]


def _import_while_locked(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds: float, **env: str
) -> Result:
    """One line imported while another connection holds the store's write lock for `seconds`, taken
    when the import is about to write its first group (so however slowly the command starts on a busy
    machine, its write meets the lock)."""
    _two_projects(db)
    path = tmp_path / "one.ndjson"
    path.write_text(_line() + "\n")
    about_to_write, held = threading.Event(), threading.Event()
    write_retrying = Database.write_retrying

    def write_once_held(self: Database, *args: Any, **kwargs: Any) -> Any:
        about_to_write.set()
        assert held.wait(60), "the lock was not taken in a minute"
        return write_retrying(self, *args, **kwargs)

    monkeypatch.setattr(Database, "write_retrying", write_once_held)

    def hold() -> None:
        if not about_to_write.wait(60):
            return
        with _write_lock(store_url):
            held.set()
            time.sleep(seconds)

    holder = threading.Thread(target=hold)
    holder.start()
    env = {"REDLINE_SQLITE_BUSY_TIMEOUT_MS": str(BUSY_TIMEOUT_MS), **env}
    done = _invoke(
        _short_waits(store_url), "annotations", "import", str(path), "--project", "staging", env=env
    )
    holder.join()
    return done


def test_a_busy_store_is_waited_for(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = _import_while_locked(store_url, db, tmp_path, monkeypatch, 2.5)
    assert done.exit_code == 0, done.output
    assert "The store is busy" in done.stderr
    assert _summary(done).startswith("Imported 1 annotation into staging in ")


def test_a_store_that_stays_busy_stops_with_one_line(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = _import_while_locked(store_url, db, tmp_path, monkeypatch, 1.5, REDLINE_LOCK_WAIT_SECONDS="0.3")
    assert done.exit_code == 1
    [error] = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert "Stored before that: 0 annotations; importing the file again adds the rest." in error
    with db.read() as session:
        assert session.scalar(select(func.count()).select_from(Annotation)) == 0


def test_an_export_with_review_values_imports_its_annotations_and_names_the_values_it_leaves(
    store_url: str, db: Database, tmp_path: Path
) -> None:
    """The export's review-value lines (key, value, reviewer, queues and their adjudications) are read
    and skipped with their reason; the annotations beside them round-trip as before."""
    runs = _two_projects(db)
    _annotate(db, runs["default"])
    with db.write() as session:
        operator = identity.operator(session)
        review_service.add_defaults(session, operator, _project_id(db, "default"))
        save_values(session, operator, runs["default"][0], "", [ValueIn(key="rating", value="good")])
    path = tmp_path / "annotations.ndjson"
    exported = _export(store_url, path)
    [value_line] = [number for number, line in enumerate(exported, start=1) if "key" in line]
    assert exported[value_line - 1]["value"] == "good"
    assert exported[value_line - 1]["queues"] == []
    done = _import(store_url, path)
    assert done.exit_code == 0, done.output
    assert _summary(done).startswith("Imported 4 annotations into staging in ")
    assert done.stdout.splitlines()[1:] == [
        "Skipped 1:",
        f"  line {value_line}: {importing.REVIEW_VALUE_NOT_IMPORTED}",
    ]
    again = _export(store_url, tmp_path / "again.ndjson")
    staging_ids = {str(run) for run in runs["staging"]}
    imported = [{**line, "trace_id": None} for line in again if line["trace_id"] in staging_ids]
    assert imported == [{**line, "trace_id": None} for line in exported if "key" not in line]


def _project_id(db: Database, name: str) -> uuid.UUID:
    with db.read() as session:
        return identity.find_project(session, identity.operator(session), name).id
