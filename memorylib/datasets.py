"""The course's data: a hand-written corpus, the chapter's records and labelled queries.

Three files live in the repository's ``data/`` folder (``data/README.md`` documents
every field):

* ``course_corpus.jsonl``: about a year of memories of four fictional engineers at
  "Northwind Labs", who build a coding agent called "Harbor" (profiles,
  conversations and a few retractions), in English, Chinese and both;
* ``chapter_records.jsonl``: the chapter's seven teaching records
  (``memorylib.seed.TEACHING_RECORDS``) in the same schema;
* ``labelled_queries.json``: recall queries with the records a human judges
  relevant and where the real pipeline puts them (``top1``, ``top5`` or ``miss``).

Each line or item is read by the records' own field-driven decoder
(``decoding.decode_fields``) plus the data files' stricter rules (text written
whitespace-folded, timestamps written in canonical UTC, retractions that name an
earlier record).

A line of a data file is a ``CourseEntry``, not a ``StoredMemory``: it names its
user by id, and it becomes a stored record only when ``build_store`` writes it into
a store through the public API (``append`` / ``retract``), exactly as an
application would. Nothing here reads the environment or touches a file at import
time; ``data_dir()`` looks for the folder on first use.
"""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import is_memory_id, require_items
from .decoding import Timestamp, decode_fields
from .errors import RemoteMemoryError, RemoteMemoryValidationError
from .interface import user_scope_for
from .records import MemoryKind, MemorySource, StoredMemory
from .seed import TEACHING_RECORDS
from .store import RemoteMemoryStore
from .timestamps import canonical_timestamp, parse_timestamp

__all__ = [
    "CHAPTER_FILE",
    "CHAPTER_USER",
    "CORPUS_FILE",
    "COURSE_AS_OF",
    "COURSE_USERS",
    "DATA_DIR_ENV",
    "EXPECTATIONS",
    "QUERIES_FILE",
    "TEACHES",
    "CourseDataError",
    "CourseDataMissingError",
    "CourseEntry",
    "LabelledQuery",
    "build_chapter_store",
    "build_course_store",
    "build_store",
    "chapter_entries_from_seed",
    "chapter_records",
    "course_records",
    "data_dir",
    "load_chapter_entries",
    "load_course_entries",
    "load_labelled_queries",
    "write_entries",
]

DATA_DIR_ENV = "MEMORYLIB_DATA_DIR"
CORPUS_FILE = "course_corpus.jsonl"
CHAPTER_FILE = "chapter_records.jsonl"
QUERIES_FILE = "labelled_queries.json"

# The corpus clock: every labelled query is scored at this time unless it says otherwise.
COURSE_AS_OF = "2026-11-30T09:00:00Z"
# The corpus's users in a fixed order; the first is the student's default persona.
COURSE_USERS: tuple[str, ...] = (
    "mei.lin@northwind.example",
    "omar.haddad@northwind.example",
    "sam.ortiz@northwind.example",
    "wen.zhao@northwind.example",
)
CHAPTER_USER = "local-user"  # the user of the chapter's teaching store

EXPECTATIONS: tuple[str, ...] = ("top1", "top5", "miss")
TEACHES: tuple[str, ...] = (
    "exact_match",
    "tie_break",
    "stale_vs_fresh",
    "stopword_noise",
    "near_miss",
    "chinese_bigram",
    "mixed_script",
    "isolation",
    "retraction",
    "no_match",
)

_QUERY_ID = re.compile(r"q-\d{2,3}")


class CourseDataError(RemoteMemoryError):
    """A course data file is malformed or inconsistent; the message names the file and line."""


class CourseDataMissingError(CourseDataError, FileNotFoundError):
    """The data folder or one of its files does not exist."""


# -- where the data lives ----------------------------------------------------------------


def data_dir() -> Path:
    """The folder holding the course data, resolved on every call (never at import).

    ``$MEMORYLIB_DATA_DIR`` when set, else the ``data/`` folder next to the package
    (``<repo>/data`` in a source checkout). Raises ``CourseDataMissingError`` when
    the folder does not exist.
    """
    configured = os.environ.get(DATA_DIR_ENV, "").strip()
    folder = (
        Path(configured).expanduser()
        if configured
        else Path(__file__).resolve().parents[1] / "data"
    )
    if not folder.is_dir():
        where = f"${DATA_DIR_ENV}={configured!r}" if configured else "the repository's data/"
        raise CourseDataMissingError(
            f"course data folder {str(folder)!r} does not exist ({where}); run from a "
            f"source checkout of memorylib or set {DATA_DIR_ENV} to the folder that "
            f"holds {CORPUS_FILE}"
        )
    return folder


def _data_file(path: str | os.PathLike[str] | None, default_name: str) -> Path:
    target = data_dir() / default_name if path is None else Path(path)
    if not target.is_file():
        raise CourseDataMissingError(f"course data file {str(target)!r} does not exist")
    return target


# -- one line of a data file -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CourseEntry:
    """One line of a course data file: a memory as an application would submit it."""

    user_id: str
    memory_id: str
    kind: MemoryKind
    summary: str
    content: str
    source: MemorySource
    stored_at: Timestamp
    retracts: str | None = None

    @property
    def user_scope(self) -> str:
        return user_scope_for(self.user_id)

    @property
    def captured_at(self) -> str:
        return self.source.captured_at

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "user_id": self.user_id,
            "memory_id": self.memory_id,
            "kind": self.kind.value,
            "summary": self.summary,
            "content": self.content,
            "source": self.source.to_dict(),
            "stored_at": self.stored_at,
        }
        if self.retracts is not None:
            payload["retracts"] = self.retracts
        return payload


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """A recall query with human relevance labels and the outcome the pipeline gives.

    ``relevant`` is ordered: its first id is the record a human wants on top.
    ``expect`` says where that record lands (see ``label_outcome``).
    """

    query_id: str
    user_id: str
    text: str
    as_of: Timestamp
    relevant: tuple[str, ...]
    expect: str
    teaches: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "user_id": self.user_id,
            "text": self.text,
            "as_of": self.as_of,
            "relevant": list(self.relevant),
            "expect": self.expect,
            "teaches": self.teaches,
            "note": self.note,
        }


# -- strict parsing ----------------------------------------------------------------------


def _fail(where: str, message: str) -> CourseDataError:
    return CourseDataError(f"{where}: {message}")


def _folded(value: str, key: str, where: str) -> str:
    if " ".join(value.split()) != value:
        raise _fail(
            where,
            f"{key} must be whitespace-folded (single spaces, no leading, trailing or "
            "line-break whitespace) so the store keeps it byte for byte",
        )
    return value


def _timestamp(value: str, key: str, where: str) -> str:
    canonical = canonical_timestamp(value, key)  # decode_fields has checked it parses
    if canonical != value:
        raise _fail(where, f"{key} {value!r} must be written in UTC as {canonical!r}")
    return value


def _decode(cls: type[Any], payload: object, where: str) -> Any:
    try:
        return decode_fields(cls, payload, where, error=CourseDataError, field_prefix=f"{where}: ")
    except CourseDataError:
        raise
    except RemoteMemoryError as exc:  # a nested MemorySource
        raise _fail(where, str(exc)) from None


def _entry_from(payload: object, where: str) -> CourseEntry:
    entry: CourseEntry = _decode(CourseEntry, payload, where)
    if not is_memory_id(entry.memory_id):
        raise _fail(where, f"memory_id {entry.memory_id!r} is not a valid id")
    where = f"{where} ({entry.memory_id})"
    for key in ("user_id", "summary", "content"):
        _folded(getattr(entry, key), key, where)
    for key in ("source_id", "source_type", "title"):
        _folded(getattr(entry.source, key), f"source.{key}", where)
    captured_at = _timestamp(entry.source.captured_at, "source.captured_at", where)
    stored_at = _timestamp(entry.stored_at, "stored_at", where)
    if parse_timestamp(stored_at, "stored_at") < parse_timestamp(captured_at, "captured_at"):
        raise _fail(where, f"stored_at {stored_at} is before captured_at {captured_at}")
    if entry.kind is MemoryKind.RETRACTION:
        if not is_memory_id(entry.retracts):
            raise _fail(where, "a retraction must name the retracted memory_id in 'retracts'")
    elif entry.retracts is not None:
        raise _fail(where, "only retraction entries may have 'retracts'")
    return entry


def _check_entries(entries: Sequence[CourseEntry], wheres: Sequence[str]) -> None:
    """Unique ids; every retraction names an EARLIER, live, non-retraction record of its user."""
    seen: dict[str, CourseEntry] = {}
    retracted: set[str] = set()
    for entry, where in zip(entries, wheres, strict=True):
        if entry.memory_id in seen:
            raise _fail(where, f"duplicate memory_id {entry.memory_id!r}")
        if entry.retracts is not None:
            target = seen.get(entry.retracts)
            if target is None:
                raise _fail(
                    where,
                    f"retracts {entry.retracts!r}, which is not an earlier line of the file",
                )
            if target.user_scope != entry.user_scope:
                raise _fail(where, f"retracts {entry.retracts!r}, a record of another user")
            if target.kind is MemoryKind.RETRACTION:
                raise _fail(where, f"retracts {entry.retracts!r}, which is itself a retraction")
            if entry.retracts in retracted:
                raise _fail(where, f"retracts {entry.retracts!r} a second time")
            retracted.add(entry.retracts)
        seen[entry.memory_id] = entry


def _load_entries(
    path: str | os.PathLike[str] | None, default_name: str
) -> tuple[CourseEntry, ...]:
    target = _data_file(path, default_name)
    entries: list[CourseEntry] = []
    wheres: list[str] = []
    raw = target.read_bytes()
    if raw and not raw.endswith(b"\n"):
        raise _fail(f"{target.name}: last line", "the file must end with a newline")
    for lineno, line in enumerate(raw.split(b"\n")[:-1] if raw else [], start=1):
        where = f"{target.name}: line {lineno}"
        if not line.strip():
            raise _fail(where, "blank line (every line must hold one JSON object)")
        try:
            payload = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise _fail(where, f"not valid JSON ({exc})") from None
        entries.append(_entry_from(payload, where))
        wheres.append(where)
    if not entries:
        raise _fail(target.name, "the file holds no entries")
    _check_entries(entries, wheres)
    return tuple(entries)


def load_course_entries(path: str | os.PathLike[str] | None = None) -> tuple[CourseEntry, ...]:
    """Every line of ``course_corpus.jsonl`` (or ``path``), validated, in file order."""
    return _load_entries(path, CORPUS_FILE)


def load_chapter_entries(path: str | os.PathLike[str] | None = None) -> tuple[CourseEntry, ...]:
    """The chapter's teaching records as exported in ``chapter_records.jsonl``."""
    return _load_entries(path, CHAPTER_FILE)


def chapter_entries_from_seed() -> tuple[CourseEntry, ...]:
    """``memorylib.seed.TEACHING_RECORDS`` as entries (the same records, as seeded)."""
    return tuple(CourseEntry(user_id=CHAPTER_USER, **record) for record in TEACHING_RECORDS)


def write_entries(entries: Iterable[CourseEntry], path: str | os.PathLike[str]) -> Path:
    """Write entries as JSONL (UTF-8, one object a line), e.g. to regenerate the chapter file."""
    target = Path(path)
    lines = [json.dumps(entry.to_dict(), ensure_ascii=False) + "\n" for entry in entries]
    target.write_text("".join(lines), encoding="utf-8", newline="\n")
    return target


def load_labelled_queries(
    path: str | os.PathLike[str] | None = None,
    *,
    entries: Sequence[CourseEntry] | None = None,
) -> tuple[LabelledQuery, ...]:
    """The labelled queries, validated. With ``entries``, every relevant id must be a
    conversation record of the query's user in those entries."""
    target = _data_file(path, QUERIES_FILE)
    try:
        payload = json.loads(target.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _fail(target.name, f"not valid JSON ({exc})") from None
    if not isinstance(payload, list) or not payload:
        raise _fail(target.name, "expected a non-empty JSON list of query objects")
    by_id = {entry.memory_id: entry for entry in entries} if entries is not None else None
    queries: list[LabelledQuery] = []
    seen: set[str] = set()
    for position, item in enumerate(payload):
        where = f"{target.name}: item {position}"
        query: LabelledQuery = _decode(LabelledQuery, item, where)
        if not _QUERY_ID.fullmatch(query.query_id):
            raise _fail(where, f"query_id {query.query_id!r} must look like 'q-01'")
        if query.query_id in seen:
            raise _fail(where, f"duplicate query_id {query.query_id!r}")
        seen.add(query.query_id)
        where = f"{target.name}: {query.query_id}"
        for key in ("user_id", "note"):
            _folded(getattr(query, key), key, where)
        _timestamp(query.as_of, "as_of", where)
        if not all(is_memory_id(r) for r in query.relevant):
            raise _fail(where, "relevant must be a list of memory ids")
        if len(set(query.relevant)) != len(query.relevant):
            raise _fail(where, "relevant lists an id twice")
        if query.expect not in EXPECTATIONS:
            raise _fail(where, f"expect {query.expect!r} is not one of {', '.join(EXPECTATIONS)}")
        if query.teaches not in TEACHES:
            raise _fail(where, f"teaches {query.teaches!r} is not one of {', '.join(TEACHES)}")
        if query.expect != "miss" and not query.relevant:
            raise _fail(where, f"expect {query.expect!r} needs at least one relevant id")
        if by_id is not None:
            scope = user_scope_for(query.user_id)
            for memory_id in query.relevant:
                entry = by_id.get(memory_id)
                if entry is None or entry.user_scope != scope:
                    raise _fail(where, f"relevant id {memory_id!r} is not a record of its user")
                if entry.kind is not MemoryKind.CONVERSATION:
                    raise _fail(where, f"relevant id {memory_id!r} is not a conversation record")
        queries.append(query)
    return tuple(queries)


# -- from entries to stores --------------------------------------------------------------


def build_store(
    entries: Iterable[CourseEntry],
    directory: str | os.PathLike[str],
    user_id: str,
    *,
    name: str | None = None,
) -> RemoteMemoryStore:
    """Write ``user_id``'s entries, in order, into a NEW store file under ``directory``.

    Uses only the public store API: ``append`` for profiles and conversations and
    ``retract`` for retractions, whose stored reason is the entry's summary followed
    by its content. Entries of other users are left out. The file is named
    ``name`` or ``<user_scope>.jsonl`` (never the raw user id); an existing
    non-empty file is refused. The same entries always give byte-identical files.
    """
    scope = user_scope_for(user_id)
    entries = require_items(entries, CourseEntry, "entries")
    mine = [entry for entry in entries if entry.user_scope == scope]
    if not mine:
        known = ", ".join(dict.fromkeys(entry.user_id for entry in entries)) or "none"
        raise RemoteMemoryValidationError(
            f"no entries belong to user_id {user_id!r}; the entries' users are: {known}"
        )
    folder = Path(directory)
    path = folder / (name if name is not None else f"{scope}.jsonl")
    if path.exists() and path.stat().st_size > 0:
        raise RemoteMemoryValidationError(
            f"{path.name} already holds records; build_store only writes into a new store file"
        )
    folder.mkdir(parents=True, exist_ok=True)
    store = RemoteMemoryStore(path, user_id=user_id)
    for entry in mine:
        if entry.kind is MemoryKind.RETRACTION:
            written = store.retract(
                entry.retracts or "",  # an empty target is rejected by the store, naming it
                reason=f"{entry.summary} {entry.content}",
                source=entry.source,
                retraction_id=entry.memory_id,
                stored_at=entry.stored_at,
            )
            if written.memory_id != entry.memory_id:  # the store kept an earlier retraction
                raise RemoteMemoryValidationError(
                    f"{entry.memory_id} retracts {entry.retracts!r}, which "
                    f"{written.memory_id} already retracted; nothing was written"
                )
        else:
            store.append(
                kind=entry.kind,
                content=entry.content,
                summary=entry.summary,
                source=entry.source,
                memory_id=entry.memory_id,
                stored_at=entry.stored_at,
            )
    return store


def build_course_store(
    directory: str | os.PathLike[str],
    user_id: str = COURSE_USERS[0],
    *,
    name: str | None = None,
) -> RemoteMemoryStore:
    """A new store holding ``user_id``'s part of the course corpus."""
    return build_store(load_course_entries(), directory, user_id, name=name)


def build_chapter_store(
    directory: str | os.PathLike[str], *, name: str | None = None
) -> RemoteMemoryStore:
    """A new store holding the chapter's seven teaching records (user ``local-user``)."""
    return build_store(load_chapter_entries(), directory, CHAPTER_USER, name=name)


@functools.lru_cache(maxsize=16)
def _records(kind: str, folder: str, user_id: str) -> tuple[StoredMemory, ...]:
    with tempfile.TemporaryDirectory(prefix="memorylib-course-") as tmp:
        chapter = kind == "chapter"
        store = build_chapter_store(tmp) if chapter else build_course_store(tmp, user_id)
        return tuple(store.read_all())  # cached: immutable


def course_records(user_id: str = COURSE_USERS[0]) -> tuple[StoredMemory, ...]:
    """``user_id``'s course records as stored (built once in a temporary folder, cached)."""
    return _records("course", str(data_dir()), user_id)


def chapter_records() -> tuple[StoredMemory, ...]:
    """The chapter's teaching records as stored (cached)."""
    return _records("chapter", str(data_dir()), CHAPTER_USER)
