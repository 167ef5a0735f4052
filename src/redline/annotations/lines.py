"""The export's lines read back (rm-annotations.txt, "Exporting annotations"): each line of an NDJSON file
as an annotation to import, or why it can't be one, with what makes its id the same in every import.

Reading needs no store: which run and step a line names is found when its group is stored
(`importing.py`). Each line is parsed and validated in one pass by pydantic's JSON reader: at 100,000
lines, `json.loads` and then validating the dict cost more than the inserts (bench/README.md).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC

from pydantic import ValidationError

from redline.annotations.schemas import AnnotationLine
from redline.fieldpaths import field_path
from redline.jsonio import NUL_REFUSED, dumps, find_nul
from redline.traces.importers.records import describe_validation_error

NEEDS_TRACE = "a line needs a trace_id or a trace_external_id"
NOT_AN_OBJECT = "a line must be a JSON object"
# The namespace of imported annotations' ids (uuid5): any fixed UUID; this one is Redline's own.
IMPORTED_ANNOTATIONS = uuid.UUID("6d1f3c2e-8a4b-5c7d-9e0f-a1b2c3d4e5f6")
_NAMESPACE_BYTES = IMPORTED_ANNOTATIONS.bytes


@dataclass(frozen=True)
class SkippedLine:
    """A line left out: its number in the file (1-based) and why, as a sentence."""

    line: int
    reason: str


@dataclass(frozen=True)
class ReadLine:
    """A line that reads as an annotation: its number, what it says, and its identity.

    The identity is a digest of what tells this annotation from the others of its trace (its step,
    author, time, rating, comment and quote) and of its place among the file's lines alike in all of
    those and in the trace they name: two identical lines are two annotations, as the export wrote them.
    The flag (`label_error`) and its note are left out: they are what may change about an annotation.
    `raw` is the line as read: what another process is sent, to read it again only if it must.
    """

    number: int
    said: AnnotationLine
    identity: bytes
    raw: bytes

    def annotation_id(self, trace_hex: str) -> str:
        """The annotation's id on this store's run (given as its 32 hex digits), as 32 hex digits: the
        same in every import of the line. It is `uuid5(IMPORTED_ANNOTATIONS, trace_hex + identity)`, its
        bits set here rather than through `uuid.UUID`, which cost an import of 100,000 lines half a
        second."""
        name = (trace_hex + self.identity.hex()).encode()
        digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name, usedforsecurity=False).digest()[:16])
        digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
        digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122's variant
        return digest.hex()


class LineError(ValueError):
    """A line that can't become an annotation; the message is the reason the import lists."""


def read_line(raw: bytes) -> AnnotationLine:
    """One line's annotation, or a LineError saying what is wrong with it."""
    if b"\\u0000" in raw:
        _refuse_nul(raw)
    try:
        said = AnnotationLine.model_validate_json(raw)
    except ValidationError as error:
        first = error.errors()[0]
        if first["type"] == "json_invalid":
            raise LineError(f"not valid JSON: {first.get('ctx', {}).get('error', 'invalid')}") from None
        if first["type"] == "model_type" and not first["loc"]:
            raise LineError(NOT_AN_OBJECT) from None
        raise LineError(describe_validation_error(error, camel=False)) from None
    if said.trace_id is None and said.trace_external_id is None:
        raise LineError(NEEDS_TRACE)
    return said


def _refuse_nul(raw: bytes) -> None:
    """PostgreSQL keeps no NUL in text: a line with one is refused, naming the field, as the API does."""
    try:
        value = json.loads(raw)
    except ValueError:
        return  # not JSON: the validation says so
    where = find_nul(value)
    if where is not None:
        raise LineError(f"{field_path(where, camel=False)}: {NUL_REFUSED}")


def _identity(said: AnnotationLine) -> bytes:
    quote = said.quote
    fields = [
        said.step_index,
        said.author,
        said.created_at.astimezone(UTC).isoformat(),
        said.rating,
        said.comment or None,
        [quote.text, quote.prefix, quote.suffix] if quote is not None else None,
    ]
    return hashlib.blake2b(dumps(fields), digest_size=16).digest()


def read_lines(lines: Iterable[bytes]) -> Iterator[ReadLine | SkippedLine]:
    """Each non-blank line as an annotation or why it was skipped, in order, numbered from 1 as an
    editor numbers them (blank lines count, and are passed over)."""
    alike: Counter[tuple[object, ...]] = Counter()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            said = read_line(raw)
        except LineError as error:
            yield SkippedLine(number, str(error))
            continue
        identity = _identity(said)
        key = (said.trace_id, said.trace_external_id, identity)
        alike[key] += 1
        place = alike[key].to_bytes(8, "big")
        yield ReadLine(number, said, hashlib.blake2b(identity + place, digest_size=16).digest(), raw)


def line_groups(
    items: Iterable[ReadLine | SkippedLine], size: int
) -> Iterator[tuple[list[ReadLine], list[SkippedLine], int]]:
    """The lines in groups of `size` readable ones, each with the lines skipped while reading it and how
    many lines were read for it (for progress)."""
    group: list[ReadLine] = []
    skipped: list[SkippedLine] = []
    read = 0
    for item in items:
        read += 1
        if isinstance(item, SkippedLine):
            skipped.append(item)
            continue
        group.append(item)
        if len(group) == size:
            yield group, skipped, read
            group, skipped, read = [], [], 0
    if group or read:
        yield group, skipped, read


def count_lines(lines: Iterable[bytes]) -> int:
    """How many non-blank lines there are: the total an import's progress counts to."""
    return sum(1 for raw in lines if raw.strip())
