"""Views for notebook 07, failures and retraction: every boundary of the contract, typed.

Each failure case runs one call against its own small store and is reported as
(case, call, error type, message); the message must name the field or line at fault.
Also here: an unlocked check-then-append replayed step by step (why the duplicate check
belongs inside the lock), a torn last line and its repair, read-only recall proven by a
file hash, and retraction with its audit trail. The real multi-process race lives in
``failure_race`` (kept free of pandas so its spawned processes start fast).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RecallResult,
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    StoredMemory,
    render_recall_context,
    seed_teaching_store,
)
from memorylib.files import append_bytes
from memorylib.notebook.failure_race import RaceReport

__all__ = [
    "ACCOUNT_SOURCE",
    "ERROR_NAMES",
    "EXERCISE_CALLS",
    "REVIEW_SOURCE",
    "FailureCase",
    "add_newer_profile",
    "attempt",
    "audit_frame",
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
    "race_frame",
    "read_only_frame",
    "recall_summary_frame",
    "retraction_errors_frame",
    "retraction_timeline",
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
NO_ERROR = "no error"
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


def attempt(action: Callable[[], object]) -> tuple[str, str]:
    """Run ``action``: (error type name, message), or ("no error", str(result)).

    Only memorylib's typed errors are caught; anything else is a bug and propagates.
    """
    try:
        value = action()
    except RemoteMemoryError as exc:
        return type(exc).__name__, str(exc)
    return NO_ERROR, str(value)


def error_hierarchy_frame() -> pd.DataFrame:
    """The error classes: each one's parent and what it means (catch the base to catch all)."""
    rows = [
        (cls.__name__, cls.__mro__[1].__name__, (cls.__doc__ or "").strip().splitlines()[0])
        for cls in (
            RemoteMemoryError,
            RemoteMemoryValidationError,
            RemoteMemoryDuplicateError,
            RemoteMemoryScopeError,
            RemoteMemoryCorruptionError,
        )
    ]
    return pd.DataFrame(rows, columns=["error", "parent", "meaning"])


# -- damaging a file on purpose -------------------------------------------------------------


def _line_for(store: RemoteMemoryStore, memory_id: str, text: str) -> bytes:
    record = StoredMemory(
        memory_id=memory_id,
        user_scope=store.user_scope,
        kind=MemoryKind.CONVERSATION,
        content=text,
        summary=text,
        source=MemorySource(f"transcript-{memory_id}", "conversation_transcript", "note",
                            _CAPTURED_AT),
        stored_at=_CAPTURED_AT,
    )
    return json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


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


def _insert_raw_line(path: Path, lineno: int, raw: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(lineno - 1, raw)
    path.write_bytes(b"".join(lines))


# -- the failure table ------------------------------------------------------------------------


@dataclass(frozen=True)
class FailureCase:
    """One boundary: the call, what its message must name, why it fails, and how to run it."""

    name: str
    call: str
    names: str
    story: str
    run: Callable[[], object]


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

    ``chapter.jsonl`` is the teaching store; ``malformed.jsonl`` has garbage on line 3;
    ``torn.jsonl`` ends in half a record. Running a case never changes a store.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    chapter = RemoteMemoryStore(root / "chapter.jsonl", user_id=user_id)
    seed_teaching_store(chapter)
    engine = RecallEngine(chapter)
    malformed = RemoteMemoryStore(root / "malformed.jsonl", user_id=user_id)
    seed_teaching_store(malformed)
    _insert_raw_line(malformed.path, 3, b'{"memory_id": "conversation-x", oops}\n')
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
            kind=MemoryKind.CONVERSATION, memory_id=memory_id, content="new note",
            summary="new note", source=src,  # type: ignore[arg-type]
        )  # fmt: skip

    bad_time = MemorySource("transcript-x", "conversation_transcript", "note", "last Tuesday")
    return (
        FailureCase("empty query", 'recall("   ")', "query text",
                    "An empty query would match nothing or, worse, everything; say what to recall.",
                    recall("   ")),
        FailureCase("punctuation-only query", 'recall("?! ... !?")', "searchable term",
                    "No word survives normalization. Falling back to 'return everything' would "
                    "flood the prompt, so it is a typed error the model can correct.",
                    recall("?! ... !?")),
        FailureCase("limit 0", 'recall("layered memory", limit=0)', "limit",
                    "A limit outside 1..10 is a caller bug, not a request for zero hits.",
                    recall("layered memory", 0)),
        FailureCase("limit 11", 'recall("layered memory", limit=11)', "limit",
                    "More than 10 hits would blow the prompt budget the tool promises.",
                    recall("layered memory", 11)),
        FailureCase("limit True (a bool)", 'recall("layered memory", limit=True)', "limit",
                    "bool is a subclass of int in Python: True would silently mean 1.",
                    recall("layered memory", True)),
        FailureCase("limit 2.5 (a float)", 'recall("layered memory", limit=2.5)', "limit",
                    "Half a hit does not exist; rounding would hide a caller bug.",
                    recall("layered memory", 2.5)),
        FailureCase("duplicate memory_id", 'store.append(memory_id="conversation-003", ...)',
                    "memory_id",
                    "The id is the record's identity: citations and retractions point at it. "
                    "A second record with the same id would make every pointer ambiguous.",
                    append(chapter, "conversation-003")),
        FailureCase("captured_at not a timestamp", 'MemorySource(..., captured_at="last Tuesday")',
                    "source.captured_at",
                    "Recency is computed from captured_at; a date nobody can parse cannot be "
                    "ranked, so it is refused at the door.",
                    append(chapter, "conversation-new", bad_time)),
        FailureCase("another user reads the file",
                    'RemoteMemoryStore(path, user_id="bob").read_all()', "user_scope",
                    "The file belongs to another user_scope. Filtering the foreign lines out would "
                    "hide a misconfiguration that leaks history between users: fail closed.",
                    bob.read_all),
        FailureCase("another user appends to it",
                    'RemoteMemoryStore(path, user_id="bob").append(...)', "user_scope",
                    "Writing is refused too: bob's record would turn the file into a mixed one.",
                    append(bob, "conversation-bob")),
        FailureCase("malformed line", "RemoteMemoryStore(malformed_path).read_all()", "line 3",
                    "Skipping a line that does not parse would silently lose a record; the error "
                    "names the line so a person (or repair) can decide.",
                    RemoteMemoryStore(malformed.path, user_id=user_id).read_all),
        FailureCase("torn last line", "RemoteMemoryStore(torn_path).read_all()", "line 8",
                    "A crash mid-write left half a record. Reading it as 'no record' would hide "
                    "the lost write.",
                    RemoteMemoryStore(torn.path, user_id=user_id).read_all),
        FailureCase("append after a torn line", "RemoteMemoryStore(torn_path).append(...)",
                    "line 8",
                    "An append would glue the new line onto the half line and corrupt a good "
                    "record: the store refuses to write until the file is repaired.",
                    append(RemoteMemoryStore(torn.path, user_id=user_id), "conversation-008")),
        FailureCase("no match", 'recall("kubernetes helm chart")', "empty_reason",
                    "Not a failure: an explained empty result. The renderer returns '' so no "
                    "empty wrapper costs prompt budget.",
                    lambda: _no_match_summary(engine, as_of)),
    )  # fmt: skip


def failure_frame(cases: Iterable[FailureCase]) -> pd.DataFrame:
    """Run every case once: case, call, error type, message, and whether it names ``names``."""
    rows = []
    for case in cases:
        error, message = attempt(case.run)
        rows.append(
            {
                "case": case.name,
                "call": case.call,
                "error": error,
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
    fields = [(key, str(row[key])) for key in ("case", "call", "error", "message")]
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
            attempt(lambda t=text, q=f"q-07-ro-{round_}-{i}": engine.recall(t, query_id=q,
                                                                            as_of=as_of))
            calls += 1
    after = file_fingerprint(store.path)
    return pd.DataFrame(
        [{"moment": "before", "recall calls": 0, **before},
         {"moment": "after", "recall calls": calls, **after}]
    )  # fmt: skip


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
            with open(path, "ab") as handle:
                handle.write(_line_for(store, memory_id, f"Writer {writer} wrote this."))
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


def run_cli(args: Sequence[str], *, cwd: str | os.PathLike[str]) -> str:
    """Run ``python -m memorylib ARGS`` in ``cwd``; return its output and exit status.

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
    return f"{completed.stdout}{completed.stderr}(exit status {completed.returncode})"


def fsck_frame(report: Any) -> pd.DataFrame:
    """An ``FsckReport`` as (field, value) rows, without the absolute path."""
    kinds = ", ".join(f"{kind} {n}" for kind, n in report.records_by_kind.items()) or "none"
    problems = "; ".join(f"line {line}: {msg}" for line, msg in report.problems) or "none"
    rows = [
        ("size_bytes", report.size_bytes),
        ("complete lines", report.lines),
        ("records", f"{report.records} ({kinds})"),
        ("user scopes", len(report.user_scopes)),
        ("torn_tail_bytes", report.torn_tail_bytes),
        ("problems", problems),
        ("healthy", report.healthy),
    ]
    return pd.DataFrame(rows, columns=["field", "value"]).astype({"value": "object"})


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


# -- retraction and the audit trail ---------------------------------------------------------------


REVIEW_SOURCE = MemorySource(
    "review-2026-08-02", "design_review", "memory design review", "2026-08-02T09:00:00Z"
)
ACCOUNT_SOURCE = MemorySource(
    "ticket-4711", "support_ticket", "profile imported from the wrong account",
    "2026-08-02T09:30:00Z",
)  # fmt: skip


def add_newer_profile(store: RemoteMemoryStore) -> StoredMemory:
    """Append ``profile-002``, a snapshot newer than the seeded ``profile-001``."""
    return store.append(
        kind=MemoryKind.PROFILE,
        memory_id="profile-002",
        content="Frontend engineer; prefers long answers with diagrams.",
        summary="Frontend engineer; prefers long answers.",
        source=MemorySource(
            "profile-snapshot-002", "profile_snapshot", "remote profile snapshot",
            "2026-08-01T08:00:00Z",
        ),
        stored_at="2026-08-01T08:00:00Z",
    )


def recall_summary_frame(results: Mapping[str, RecallResult]) -> pd.DataFrame:
    """One row per labelled result: hits, the counts that explain them, and empty_reason."""
    return pd.DataFrame(
        [
            {
                "moment": label,
                "hits": ", ".join(h.memory_id for h in result.hits) or "(none)",
                "searched_records": result.searched_records,
                "candidate_records": result.candidate_records,
                "retracted_records": result.retracted_records,
                "empty_reason": result.empty_reason or "",
            }
            for label, result in results.items()
        ]
    )


def retraction_errors_frame(store: RemoteMemoryStore) -> pd.DataFrame:
    """The three retractions the store refuses, run against ``store`` (which must hold
    ``retraction-001``); none of them writes a line."""
    calls: list[tuple[str, Callable[[], object]]] = [
        ('retract("conversation-999")  # not in the store',
         lambda: store.retract("conversation-999", reason="typo", source=REVIEW_SOURCE)),
        ('retract("retraction-001")  # a retraction',
         lambda: store.retract("retraction-001", reason="undo", source=REVIEW_SOURCE)),
        ('append(kind="retraction", ...)',
         lambda: store.append(kind="retraction", content="x", summary="x",
                              source=REVIEW_SOURCE)),
    ]  # fmt: skip
    rows = [(call, *attempt(action)) for call, action in calls]
    return pd.DataFrame(rows, columns=["call", "error", "message"])


def audit_frame(store: RemoteMemoryStore) -> pd.DataFrame:
    """Every record in file order with what hides it: the full audit trail, nothing removed."""
    records = store.read_all()
    hidden_by = {r.retracts: r.memory_id for r in records if r.kind is MemoryKind.RETRACTION}
    return pd.DataFrame(
        [
            {
                "line": line,
                "memory_id": r.memory_id,
                "kind": r.kind.value,
                "retracts": r.retracts or "",
                "captured_at": r.source.captured_at,
                "hidden_by": hidden_by.get(r.memory_id, ""),
            }
            for line, r in enumerate(records, start=1)
        ]
    )


_KIND_STYLE = {
    "profile": ("#d95f02", "s"),
    "conversation": ("#1b9e77", "o"),
    "retraction": ("#7570b3", "X"),
}


def retraction_timeline(store: RemoteMemoryStore, *, title: str = "") -> Figure:
    """The store file as a strip of lines in append order, with arcs from each retraction
    back to the record it hides (drawn hollow). Nothing is ever removed from the strip.

    Labels are memory ids (ASCII: no CJK font needed).
    """
    records = store.read_all()
    hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION}
    line_of = {r.memory_id: line for line, r in enumerate(records, start=1)}
    with plt.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, ax = plt.subplots(figsize=(7.6, 3.3))
        ax.plot([0.6, len(records) + 0.4], [0, 0], color="#d9d9d9", linewidth=8,
                solid_capstyle="round", zorder=1)
        for line, r in enumerate(records, start=1):
            color, marker = _KIND_STYLE[r.kind.value]
            face = "white" if r.memory_id in hidden else color
            ax.scatter([line], [0], marker=marker, s=110, facecolors=face, edgecolors=color,
                       linewidths=1.8, zorder=3)
            if r.kind is MemoryKind.RETRACTION and r.retracts in line_of:
                ax.add_patch(FancyArrowPatch(
                    (line, 0.08), (line_of[r.retracts], 0.08),
                    connectionstyle="arc3,rad=0.45", arrowstyle="-|>", mutation_scale=12,
                    color=color, linewidth=1.3, zorder=2,
                ))  # fmt: skip
        ax.set_xticks(range(1, len(records) + 1),
                      [f"{line}  {r.memory_id}" for line, r in enumerate(records, start=1)],
                      rotation=35, ha="right", fontsize=8.5)
        ax.set_yticks([])
        ax.spines[["left", "top", "right"]].set_visible(False)
        span = max((abs(line_of[r.memory_id] - line_of[r.retracts])
                    for r in records if r.kind is MemoryKind.RETRACTION and r.retracts in line_of),
                   default=1)  # fmt: skip
        ax.set_ylim(-0.3, 0.3 + 0.25 * span)
        ax.set_xlim(0.4, len(records) + 0.6)
        ax.set_xlabel("file line (append order): the audit trail")
        handles = [
            plt.Line2D([], [], color=c, marker=m, linestyle="", label=k)
            for k, (c, m) in _KIND_STYLE.items()
        ]
        handles.append(plt.Line2D([], [], color="#555555", marker="o", markerfacecolor="white",
                                  linestyle="", label="hidden by a retraction"))
        ax.legend(handles=handles, loc="upper left", fontsize=8, frameon=False, ncol=2)
        n_hidden = sum(1 for r in records if r.memory_id in hidden)
        ax.set_title(title or f"{len(records)} lines, {n_hidden} hidden, 0 deleted")
        fig.tight_layout()
    return fig


# -- the exercise: predict the typed error -------------------------------------------------------

# label -> the call, as shown to the student (see _exercise_calls for what really runs).
EXERCISE_CALLS: dict[str, str] = {
    "A": 'engine.recall("layered memory", limit=0)',
    "B": 'store.append(memory_id="conversation-001", ...)   # that id is already stored',
    "C": 'RemoteMemoryStore(store.path, user_id="bob").read_all()',
    "D": 'engine.recall("kubernetes helm chart")',
    "E": "store.append(...)   # after a crash tore the last line of the file",
}

_HINTS = {
    "A": "the limit is checked while the query is normalized, before anything is read.",
    "B": "it is a validation problem, but a more specific class says exactly which one.",
    "C": "every line parses fine; whose lines are they?",
    "D": "no record shares a term: is that an error, or an explained empty result?",
    "E": "the file, not your input, is at fault, and the store will not write after it.",
}


def exercise_truth(*, as_of: str = "2026-08-02T12:00:00Z") -> dict[str, str | None]:
    """The error class name each exercise call raises (None: no error), run in a temp dir."""
    truth: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-07-") as tmp:
        store = RemoteMemoryStore(Path(tmp) / "store.jsonl")
        seed_teaching_store(store)
        engine = RecallEngine(store)
        torn = RemoteMemoryStore(Path(tmp) / "torn.jsonl")
        seed_teaching_store(torn)
        tear_last_line(torn)
        calls: dict[str, Callable[[], object]] = {
            "A": lambda: engine.recall("layered memory", limit=0, as_of=as_of),
            "B": lambda: conversation(store, "conversation-001", "again"),
            "C": RemoteMemoryStore(store.path, user_id="bob").read_all,
            "D": lambda: engine.recall("kubernetes helm chart", as_of=as_of),
            "E": lambda: conversation(torn, "conversation-008", "after the crash"),
        }
        for label, call in calls.items():
            error, _ = attempt(call)
            truth[label] = None if error == NO_ERROR else error
    return truth


def _as_name(value: object) -> object:
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, str):
        text = value.strip()
        return None if text.lower() in ("", "none", NO_ERROR) else text
    return value


def check_error_predictions(answer: object) -> str:
    """Self-check for notebook 07: ``answer`` maps "A".."E" to an error class (or its name),
    or None for "no error". Returns ✅ / ❌ (with hints) / ⏳ (placeholder still there).
    """
    if answer is Ellipsis:
        return "⏳ Not answered yet: replace ... with a dict like {'A': SomeErrorClass, ...}."
    if not isinstance(answer, Mapping):
        return ("❌ The answer must be a dict from 'A'..'E' to an error class (or its name) or "
                f"None, not {type(answer).__name__}.")
    truth = exercise_truth()
    missing = [label for label in truth if label not in answer or answer[label] is Ellipsis]
    if missing:
        return f"⏳ Not answered yet for {', '.join(missing)}."
    wrong = []
    for label, expected in truth.items():
        given = _as_name(answer[label])
        if given != expected:
            shown = given if given is not None else "no error"
            wrong.append(f"{label}: you said {shown}. Hint: {_HINTS[label]}")
    if wrong:
        return f"❌ {len(wrong)} of {len(truth)} wrong:\n  " + "\n  ".join(wrong)
    named = {label: expected or "no error" for label, expected in truth.items()}
    return f"✅ All {len(truth)} right: {named}."
