"""Views for notebook 07, failures and recovery: every boundary of the contract, typed.

Each failure case runs one call against its own small store and is reported as
(case, call, error type, warning, message); the message must name the field or line at
fault. Also here: an unlocked check-then-append replayed step by step (why the duplicate
check belongs inside the lock); the commit point, shown both ways: a torn last line (an
uncommitted write: invisible to readers, with a warning, and moved to the quarantine
file by the next append) and a damaged complete line in the middle (it fails closed,
naming the line, until ``python -m memorylib repair`` quarantines it); and read-only
recall proven by a file hash. (Retraction, notebook 07b, has its own module,
``retraction_views``.) The real multi-process race
lives in ``failure_race`` (kept free of pandas so its spawned processes start fast).
Every byte this module writes on purpose goes through ``memorylib.files``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    StoredMemory,
    UncommittedWriteWarning,
    render_recall_context,
    seed_teaching_store,
)
from memorylib.files import append_bytes, atomic_replace, read_quarantine
from memorylib.fsck import FsckReport
from memorylib.notebook.common import NO_ERROR, error_name
from memorylib.notebook.common import typed_attempt as attempt
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.notebook.failure_race import RaceReport
from memorylib.store import encode_line
from memorylib.timestamps import CHAPTER_CLOCK

__all__ = [
    "BAD_LINE",
    "ERROR_NAMES",
    "EXERCISE_CALLS",
    "CliRun",
    "FailureCase",
    "Outcome",
    "attempt",
    "build_failure_cases",
    "bytes_accounted_for",
    "check_error_predictions",
    "conversation",
    "error_hierarchy_frame",
    "exercise_truth",
    "failure_case_view",
    "failure_frame",
    "failure_widget",
    "file_fingerprint",
    "fsck_frame",
    "insert_bad_line",
    "observe",
    "quarantine_frame",
    "race_frame",
    "read_only_frame",
    "run_cli",
    "tear_last_line",
    "unlocked_race_frame",
]

ERROR_NAMES = (
    "RemoteMemoryValidationError",
    "RemoteMemoryDuplicateError",
    "RemoteMemoryScopeError",
    "RemoteMemoryCorruptionError",
)
_CAPTURED_AT = "2026-08-02T10:00:00Z"


def conversation(
    store: RemoteMemoryStore,
    memory_id: str,
    text: str,
    *,
    captured_at: str = _CAPTURED_AT,
    source: MemorySource | None = None,
) -> StoredMemory:
    """Append one CONVERSATION record whose summary and content are ``text``."""
    return store.append(
        kind=MemoryKind.CONVERSATION,
        memory_id=memory_id,
        content=text,
        summary=text,
        source=source
        or MemorySource(f"transcript-{memory_id}", "conversation_transcript", "note", captured_at),
        stored_at=captured_at,
    )


@dataclass(frozen=True)
class Outcome:
    """What one call did: its typed error (or "no error"), the message or the result,
    and every warning it raised, as ``"<WarningType>: <message>"``."""

    error: str
    message: str
    warnings: tuple[str, ...] = ()

    @property
    def warning_types(self) -> str:
        return ", ".join(w.split(":", 1)[0] for w in self.warnings)

    def __str__(self) -> str:
        lines = [f"{self.error}: {self.message}"]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def observe(action: Callable[[], object]) -> Outcome:
    """``attempt`` that also records warnings, so a notebook shows them as text.

    A warning printed by Python itself would carry the kernel's temporary file name
    and show only once per line of code; recorded here, it is the same on every run.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error, message = attempt(action)
    shown = tuple(f"{w.category.__name__}: {w.message}" for w in caught)
    return Outcome(error, message, shown)


def error_hierarchy_frame() -> pd.DataFrame:
    """The error classes, each one's parent and what it means (catch the base to catch all),
    then the one warning: an uncommitted write is reported, never raised."""
    rows = [
        (cls.__name__, cls.__mro__[1].__name__, (cls.__doc__ or "").strip().splitlines()[0])
        for cls in (
            RemoteMemoryError,
            RemoteMemoryValidationError,
            RemoteMemoryDuplicateError,
            RemoteMemoryScopeError,
            RemoteMemoryCorruptionError,
            UncommittedWriteWarning,
        )
    ]
    return pd.DataFrame(rows, columns=["error", "parent", "meaning"])


# -- damaging a file on purpose -------------------------------------------------------------

# A complete line (it ends in a newline) that is not JSON: committed, then damaged.
BAD_LINE = b'{"memory_id": "conversation-x", oops}\n'


def _line_for(store: RemoteMemoryStore, memory_id: str, text: str) -> bytes:
    return encode_line(
        StoredMemory(
            memory_id=memory_id,
            user_scope=store.user_scope,
            kind=MemoryKind.CONVERSATION,
            content=text,
            summary=text,
            source=MemorySource(
                f"transcript-{memory_id}", "conversation_transcript", "note", _CAPTURED_AT
            ),
            stored_at=_CAPTURED_AT,
        )
    )


def tear_last_line(
    store: RemoteMemoryStore, *, memory_id: str = "conversation-007", fraction: float = 0.5
) -> bytes:
    """Simulate a crash mid-write: append the first ``fraction`` of a record line, no newline.

    Returns the torn bytes that were written.
    """
    line = _line_for(store, memory_id, "Decided to shard the memory store by user scope.")
    torn = line[: max(1, int(len(line) * fraction))]
    append_bytes(store.path, torn)  # one O_APPEND write, as a writer killed mid-line leaves
    return torn


def insert_bad_line(store: RemoteMemoryStore, lineno: int, raw: bytes = BAD_LINE) -> None:
    """Damage the middle of a store: insert ``raw`` (a complete line) before line ``lineno``.

    Stands for a disk error or a careless hand edit: the file is replaced atomically,
    as an editor would save it.
    """
    lines = store.path.read_bytes().splitlines(keepends=True)
    lines.insert(lineno - 1, raw)
    atomic_replace(store.path, b"".join(lines))


# -- the failure table ------------------------------------------------------------------------


@dataclass(frozen=True)
class FailureCase:
    """One boundary: the call, what its message must name, why it fails, and how to run it."""

    name: str
    call: str
    names: str
    story: str
    run: Callable[[], object]


def _count(records: Sequence[StoredMemory]) -> str:
    return f"read {len(records)} records"


def _on_a_copy(path: Path, user_id: str, memory_id: str) -> Callable[[], str]:
    """Append ``memory_id`` to a temporary copy of the store at ``path`` (same file name)
    and describe what happened; the store at ``path`` is left as it was."""

    def run() -> str:
        with tempfile.TemporaryDirectory(prefix="memorylib-07-") as tmp:
            copy = Path(tmp) / path.name
            append_bytes(copy, path.read_bytes())  # a new file: the copy, byte for byte
            store = RemoteMemoryStore(copy, user_id=user_id)
            record = conversation(store, memory_id, "new note")
            (entry,) = read_quarantine(copy)
            lines = len(store.read_all())
        return (
            f"appended {record.memory_id} as line {lines}; the {entry['length']} torn bytes "
            f"moved to {store.quarantine_path.name}"
        )

    return run


def _no_match_summary(engine: RecallEngine, as_of: str) -> str:
    result = engine.recall("kubernetes helm chart", query_id="q-07-none", as_of=as_of)
    return (
        f"hits=0, empty_reason={result.empty_reason!r}, searched_records="
        f"{result.searched_records}, candidate_records={result.candidate_records}, "
        f"rendered={render_recall_context(result)!r}"
    )


def build_failure_cases(
    root: str | os.PathLike[str], *, as_of: str, user_id: str = "local-user"
) -> tuple[FailureCase, ...]:
    """Create the stores the cases need under ``root`` and return the cases (not yet run).

    ``chapter.jsonl`` is the teaching store; ``malformed.jsonl`` has a complete line of
    garbage on line 3; ``torn.jsonl`` ends in half a record. Running a case never changes
    a store: the append after the torn line runs on a temporary copy.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    chapter = RemoteMemoryStore(root / "chapter.jsonl", user_id=user_id)
    seed_teaching_store(chapter)
    engine = RecallEngine(chapter)
    malformed = RemoteMemoryStore(root / "malformed.jsonl", user_id=user_id)
    seed_teaching_store(malformed)
    insert_bad_line(malformed, 3)
    torn = RemoteMemoryStore(root / "torn.jsonl", user_id=user_id)
    seed_teaching_store(torn)
    tear_last_line(torn)
    bob = RemoteMemoryStore(chapter.path, user_id="bob")
    source = MemorySource("transcript-x", "conversation_transcript", "note", _CAPTURED_AT)

    def recall(text: object, limit: object = 5) -> Callable[[], object]:
        return lambda: engine.recall(text, limit=limit, query_id="q-07", as_of=as_of)  # type: ignore[arg-type]

    def append(
        store: RemoteMemoryStore, memory_id: str, src: object = source
    ) -> Callable[[], object]:
        return lambda: store.append(
            kind=MemoryKind.CONVERSATION,
            memory_id=memory_id,
            content="new note",
            summary="new note",
            source=src,  # type: ignore[arg-type]
        )

    bad_time = MemorySource("transcript-x", "conversation_transcript", "note", "last Tuesday")
    return (
        FailureCase(
            "empty query",
            'recall("   ")',
            "recall query",
            "An empty query would match nothing or, worse, everything; say what to recall.",
            recall("   "),
        ),
        FailureCase(
            "punctuation-only query",
            'recall("?! ... !?")',
            "searchable term",
            "No word survives normalization. Falling back to 'return everything' would "
            "flood the prompt, so it is a typed error the model can correct.",
            recall("?! ... !?"),
        ),
        FailureCase(
            "limit 0",
            'recall("layered memory", limit=0)',
            "limit",
            "A limit outside 1..10 is a caller bug, not a request for zero hits.",
            recall("layered memory", 0),
        ),
        FailureCase(
            "limit 11",
            'recall("layered memory", limit=11)',
            "limit",
            "More than 10 hits would blow the prompt budget the tool promises.",
            recall("layered memory", 11),
        ),
        FailureCase(
            "limit True (a bool)",
            'recall("layered memory", limit=True)',
            "limit",
            "bool is a subclass of int in Python: True would silently mean 1.",
            recall("layered memory", True),
        ),
        FailureCase(
            "limit 2.5 (a float)",
            'recall("layered memory", limit=2.5)',
            "limit",
            "Half a hit does not exist; rounding would hide a caller bug.",
            recall("layered memory", 2.5),
        ),
        FailureCase(
            "duplicate memory_id",
            'store.append(memory_id="conversation-003", ...)',
            "memory_id",
            "The id is the record's identity: citations and retractions point at it. "
            "A second record with the same id would make every pointer ambiguous.",
            append(chapter, "conversation-003"),
        ),
        FailureCase(
            "captured_at not a timestamp",
            'MemorySource(..., captured_at="last Tuesday")',
            "source.captured_at",
            "Recency is computed from captured_at; a date nobody can parse cannot be "
            "ranked, so it is refused at the door.",
            append(chapter, "conversation-new", bad_time),
        ),
        FailureCase(
            "another user reads the file",
            'RemoteMemoryStore(path, user_id="bob").read_all()',
            "user_scope",
            "The file belongs to another user_scope. Filtering the foreign lines out would "
            "hide a misconfiguration that leaks history between users: fail closed.",
            bob.read_all,
        ),
        FailureCase(
            "another user appends to it",
            'RemoteMemoryStore(path, user_id="bob").append(...)',
            "user_scope",
            "Writing is refused too: bob's record would turn the file into a mixed one.",
            append(bob, "conversation-bob"),
        ),
        FailureCase(
            "malformed line",
            "RemoteMemoryStore(malformed_path).read_all()",
            "line 3",
            "Line 3 is complete (it ends in its newline), so it was committed, and now it "
            "does not parse. Skipping it would silently lose a record; the error names "
            "the line so a person (or repair) can decide.",
            RemoteMemoryStore(malformed.path, user_id=user_id).read_all,
        ),
        FailureCase(
            "append after a malformed line",
            "RemoteMemoryStore(malformed_path).append(...)",
            "line 3",
            "Damage in the middle fails closed for writers too: the store will not "
            "append after a committed line it cannot read. `python -m memorylib repair` "
            "moves the line to the quarantine file; a person decides what it was.",
            append(RemoteMemoryStore(malformed.path, user_id=user_id), "conversation-008"),
        ),
        FailureCase(
            "torn last line",
            "RemoteMemoryStore(torn_path).read_all()",
            "line 8",
            "Not an error: a warning. A crash mid-write left half a record with no "
            "newline, and a record commits at its newline, so this one never did: the "
            "writer never returned, nobody was told it was saved. Readers skip it and "
            "say so (UncommittedWriteWarning), and a crash cannot take the store down.",
            lambda: _count(RemoteMemoryStore(torn.path, user_id=user_id).read_all()),
        ),
        FailureCase(
            "append after a torn line",
            "RemoteMemoryStore(torn_path).append(...)",
            "quarantine",
            "Not an error either: the next writer, under the lock, moves the torn bytes "
            "to the quarantine file (offset, length, sha256 and the bytes), cuts them "
            "off, then appends. Recovery is automatic, and nothing is glued onto the "
            "half line or lost.",
            _on_a_copy(torn.path, user_id, "conversation-008"),
        ),
        FailureCase(
            "no match",
            'recall("kubernetes helm chart")',
            "empty_reason",
            "Not a failure: an explained empty result. The renderer returns '' so no "
            "empty wrapper costs prompt budget.",
            lambda: _no_match_summary(engine, as_of),
        ),
    )


def failure_frame(cases: Iterable[FailureCase]) -> pd.DataFrame:
    """Run every case once: case, call, error type, warning type, message, and whether the
    message names ``names``. Without an error, the message is the call's result followed
    by the warning's text, if any."""
    rows = []
    for case in cases:
        outcome = observe(case.run)
        message = outcome.message
        if outcome.error == NO_ERROR and outcome.warnings:
            message += " — " + "; ".join(w.split(": ", 1)[1] for w in outcome.warnings)
        rows.append(
            {
                "case": case.name,
                "call": case.call,
                "error": outcome.error,
                "warning": outcome.warning_types,
                "message": message,
                "names": case.names,
                "message names it": case.names in message,
            }
        )
    return pd.DataFrame(rows)


def failure_widget(frame: pd.DataFrame, cases: Sequence[FailureCase]) -> Any:
    """A dropdown of the cases showing the chosen row and its story; returns an ipywidgets VBox.

    The view is an HTML widget whose value is replaced on each change (escaped table),
    not an Output widget: no display messages are routed, so headless runs never stall.
    """
    import ipywidgets as widgets

    stories = {case.name: case.story for case in cases}
    choice = widgets.Dropdown(options=list(frame["case"]), description="case")
    view = widgets.HTML()

    def show(_: object = None) -> None:
        view.value = failure_case_view(frame, stories, choice.value).to_html(
            index=False, escape=True
        )

    choice.observe(show, names="value")
    show()
    return widgets.VBox([choice, view])


def failure_case_view(frame: pd.DataFrame, stories: Mapping[str, str], name: str) -> pd.DataFrame:
    """One case as a two-column (field, value) frame, its story last. Unknown names: empty."""
    match = frame[frame["case"] == name]
    if match.empty:
        return pd.DataFrame(columns=["field", "value"])
    row = match.iloc[0]
    fields = [(key, str(row[key])) for key in ("case", "call", "error", "warning", "message")]
    return pd.DataFrame([*fields, ("why", stories.get(name, ""))], columns=["field", "value"])


# -- read-only recall ---------------------------------------------------------------------------


def file_fingerprint(path: str | os.PathLike[str]) -> dict[str, object]:
    """Size, line count and the first 16 hex digits of the sha256 of a file's bytes."""
    data = Path(path).read_bytes()
    return {
        "bytes": len(data),
        "lines": data.count(b"\n"),
        "sha256": hashlib.sha256(data).hexdigest()[:16],
    }


def read_only_frame(
    store: RemoteMemoryStore,
    engine: RecallEngine,
    queries: Sequence[str],
    *,
    repeats: int,
    as_of: str,
) -> pd.DataFrame:
    """Fingerprint the store, recall every query ``repeats`` times, fingerprint again.

    Rejected queries count as calls too: a rejection must not write either.
    """
    before = file_fingerprint(store.path)
    calls = 0
    for round_ in range(repeats):
        for i, text in enumerate(queries):
            attempt(
                lambda t=text, q=f"q-07-ro-{round_}-{i}": engine.recall(t, query_id=q, as_of=as_of)
            )
            calls += 1
    after = file_fingerprint(store.path)
    return pd.DataFrame(
        [
            {"moment": "before", "recall calls": 0, **before},
            {"moment": "after", "recall calls": calls, **after},
        ]
    )


# -- the race: unlocked replay and the real thing -----------------------------------------------


def unlocked_race_frame(
    path: str | os.PathLike[str], *, user_id: str = "local-user"
) -> pd.DataFrame:
    """Replay, step by step, two writers doing check-then-append WITHOUT a lock.

    Both check before either writes, so both see the id as free and both write. The
    store file then holds the id twice, and the next ``read_all`` refuses it. The
    real ``append`` makes this interleaving impossible: check and write happen inside
    one exclusive lock.
    """
    path = Path(path)
    store = RemoteMemoryStore(path, user_id=user_id)
    seed_teaching_store(store)
    memory_id = "conversation-race"
    steps: list[tuple[str, str, str]] = []

    def ids() -> set[str]:
        return {r.memory_id for r in RemoteMemoryStore(path, user_id=user_id).read_all()}

    free_for_a = memory_id not in ids()
    steps.append(("A", f"check: is {memory_id!r} free?", "yes" if free_for_a else "no"))
    free_for_b = memory_id not in ids()
    steps.append(("B", f"check: is {memory_id!r} free?", "yes" if free_for_b else "no"))
    for writer, free in (("A", free_for_a), ("B", free_for_b)):
        if free:
            # the store's own append, minus its lock: one O_APPEND write and fsync
            append_bytes(path, _line_for(store, memory_id, f"Writer {writer} wrote this."))
            steps.append((writer, "append its line", "written"))
    error, message = attempt(RemoteMemoryStore(path, user_id=user_id).read_all)
    steps.append(("anyone", "read_all()", f"{error}: {message}"))
    return pd.DataFrame(steps, columns=["who", "step", "outcome"])


def race_frame(report: RaceReport) -> pd.DataFrame:
    """The race's outcome in counts (never process ids or timings: those vary run to run)."""
    rows = [("contenders", report.contenders)]
    rows += [(f"outcome: {name}", count) for name, count in report.outcomes.items()]
    rows += [
        ("lines in the file before", report.lines_before),
        ("lines in the file after", report.lines_after),
        ("durable lines with the raced memory_id", report.lines_with_id_after),
        ("survivor written by one contender", report.survivor_wrote_by_a_contender),
        ("processes that exited cleanly", report.clean_exits),
    ]
    return pd.DataFrame(rows, columns=["measure", "value"]).astype({"value": "object"})


# -- fsck and repair ------------------------------------------------------------------------------

_EXIT_MEANING = {
    "fsck": {
        0: "healthy (an uncommitted tail is not damage)",
        1: "damage found",
        2: "could not check",
    },
    "repair": {0: "healthy afterwards", 1: "still damaged", 2: "refused, nothing changed"},
}


@dataclass(frozen=True)
class CliRun:
    """One run of ``python -m memorylib``: the command, its output and its exit status.

    Shown as a terminal would show it: the command, what it printed, then the exit
    status with its meaning (a notebook cell that ends with it shows exactly that).
    """

    args: tuple[str, ...]
    stdout: str
    stderr: str
    exit_status: int

    @property
    def meaning(self) -> str:
        return _EXIT_MEANING.get(self.args[0] if self.args else "", {}).get(self.exit_status, "")

    @property
    def text(self) -> str:
        lines = [f"$ python -m memorylib {' '.join(self.args)}"]
        lines += [line for line in (self.stdout + self.stderr).splitlines()]
        status = f"exit status {self.exit_status}"
        lines.append(f"{status}: {self.meaning}" if self.meaning else status)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text/plain
        printer.text(self.text)


def run_cli(args: Sequence[str], *, cwd: str | os.PathLike[str]) -> CliRun:
    """Run ``python -m memorylib ARGS`` in ``cwd`` and capture it.

    Pass paths relative to ``cwd`` so no absolute path reaches a notebook's output.
    """
    completed = subprocess.run(
        [sys.executable, "-m", "memorylib", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return CliRun(tuple(args), completed.stdout, completed.stderr, completed.returncode)


def fsck_frame(report: FsckReport) -> pd.DataFrame:
    """An ``FsckReport`` as (field, value) rows, without the absolute path."""
    kinds = ", ".join(f"{kind} {n}" for kind, n in report.records_by_kind.items()) or "none"
    problems = "; ".join(f"line {line}: {msg}" for line, msg in report.problems) or "none"
    rows = [
        ("size_bytes", report.size_bytes),
        ("complete lines", report.lines),
        ("records", f"{report.records} ({kinds})"),
        ("user scopes", len(report.user_scopes)),
        ("uncommitted tail (torn_tail_bytes)", report.torn_tail_bytes),
        ("problems", problems),
        ("healthy", report.healthy),
    ]
    return pd.DataFrame(rows, columns=["field", "value"]).astype({"value": "object"})


def quarantine_frame(store_path: str | os.PathLike[str]) -> pd.DataFrame:
    """The quarantine file of a store, one row per chunk moved out of it: where it was
    (line, byte offset), its length, the first 16 hex digits of its sha256, and why.

    The moment it was quarantined is left out: it is the time of the run.
    """
    columns = ["line", "byte_offset", "length", "sha256", "reason"]
    rows = [
        {**{key: entry[key] for key in columns}, "sha256": entry["sha256"][:16]}
        for entry in read_quarantine(store_path)
    ]
    return pd.DataFrame(rows, columns=columns)


def bytes_accounted_for(
    original: bytes, kept: bytes, quarantine: Iterable[Mapping[str, Any]]
) -> bool:
    """True when the kept file plus the quarantined chunks rebuild ``original`` exactly.

    Quarantine entries carry ``byte_offset`` (in the original) and ``bytes_b64``.
    """
    chunks = sorted(
        ((int(e["byte_offset"]), base64.b64decode(e["bytes_b64"])) for e in quarantine),
        key=lambda c: c[0],
    )
    rebuilt, cursor, kept_at = bytearray(), 0, 0
    for offset, chunk in chunks:
        take = offset - cursor
        rebuilt += kept[kept_at : kept_at + take]
        kept_at += take
        rebuilt += chunk
        cursor = offset + len(chunk)
    rebuilt += kept[kept_at:]
    return bytes(rebuilt) == original


# -- the exercise: predict the typed error -------------------------------------------------------

# label -> the call, as shown to the student (see exercise_truth for what really runs).
EXERCISE_CALLS: dict[str, str] = {
    "A": 'engine.recall("layered memory", limit=0)',
    "B": 'store.append(memory_id="conversation-001", ...)   # that id is already stored',
    "C": 'RemoteMemoryStore(store.path, user_id="bob").read_all()',
    "D": 'engine.recall("kubernetes helm chart")',
    "E": "store.append(...)   # a crash tore the LAST line: it has no newline",
    "F": "store.append(...)   # line 3 is a complete line (newline and all), but not JSON",
}

_HINTS = {
    "A": "the limit is checked while the query is normalized, before anything is read.",
    "B": "it is a validation problem, but a more specific class says exactly which one.",
    "C": "every line parses fine; whose lines are they?",
    "D": "no record shares a term: is that an error, or an explained empty result?",
    "E": "a record commits at its newline. Was the torn one ever committed, and what does "
    "the next writer do with its bytes?",
    "F": "this line has its newline: it was committed, and now nobody can read it. Can a "
    "writer tell what it was?",
}


def exercise_truth(*, as_of: str = CHAPTER_CLOCK) -> dict[str, str | None]:
    """The error class name each exercise call raises (None: no error), run in a temp dir."""
    truth: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-07-") as tmp:
        stores = {}
        for name in ("store", "torn", "damaged"):
            stores[name] = RemoteMemoryStore(Path(tmp) / f"{name}.jsonl")
            seed_teaching_store(stores[name])
        store, torn, damaged = stores["store"], stores["torn"], stores["damaged"]
        tear_last_line(torn)
        insert_bad_line(damaged, 3)
        engine = RecallEngine(store)
        calls: dict[str, Callable[[], object]] = {
            "A": lambda: engine.recall("layered memory", limit=0, as_of=as_of),
            "B": lambda: conversation(store, "conversation-001", "again"),
            "C": RemoteMemoryStore(store.path, user_id="bob").read_all,
            "D": lambda: engine.recall("kubernetes helm chart", as_of=as_of),
            "E": lambda: conversation(torn, "conversation-008", "after the crash"),
            "F": lambda: conversation(damaged, "conversation-008", "after the damage"),
        }
        for label, call in calls.items():
            error = observe(call).error
            truth[label] = None if error == NO_ERROR else error
    return truth


def _same_error(given: object, expected: str | None) -> bool:
    return error_name(given) == expected


def _shown(given: object) -> str:
    name = error_name(given)
    return "no error" if name is None else str(name)


def check_error_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 07: ``answer`` maps "A".."F" to an error class (or its
    name), or None for "no error". Right when all six are right; wrong with one hint per
    wrong label; not answered while the placeholder ``...`` (or a ``...`` value) is there.
    """

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer,
            EXERCISE_CALLS,
            "a dict from 'A'..'F' to an error class (or its name) or None",
        )
        truth = exercise_truth()
        mistakes = grade_labels(truth, given, _HINTS, same=_same_error, shown=_shown)
        if mistakes is not None:
            return mistakes
        named = {label: expected or "no error" for label, expected in truth.items()}
        return right(f"All {len(truth)} right: {named}.")

    return check_value(answer, judge, placeholder="a dict like {'A': SomeErrorClass, ...}")
