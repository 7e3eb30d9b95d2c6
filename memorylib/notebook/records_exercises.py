"""The checks of notebook 01 (stored records): six appends predicted, a record with both clocks
right, ``user_scope_for`` written by hand. Here, not in the notebook, so no answer is on screen."""

from __future__ import annotations

import hashlib
import tempfile
from datetime import datetime
from functools import partial
from pathlib import Path

from hypothesis import strategies as st

import memorylib
from memorylib import MemoryKind, MemorySource, RemoteMemoryError, RemoteMemoryStore, StoredMemory
from memorylib.notebook import exercises as ex
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt

# A: label -> (user_id, memory_id), appended in this order, each into its user's store
EXERCISE_APPENDS: dict[str, tuple[str, str]] = {
    "A": ("Dana", "note-1"),
    "B": (" dana ", "note-2"),
    "C": ("DANA", "note-1"),
    "D": ("Dana Okafor", "note-1"),
    "E": ("Erin", "-draft"),
    "F": ("dana", "笔记-1"),
}
_HINTS = {
    "A": "nothing is stored for this user yet: is anything wrong with the call itself?",
    "B": "strip and casefold the user id: whose store is this, and is its memory_id taken?",
    "C": "which user is 'DANA' after strip + casefold, and which ids are already in that "
    "user's file?",
    "D": "memory_ids are unique per store, not across users: is 'dana okafor' the key 'dana'?",
    "E": "read the contract's id rule, quoted under section 4's output: which characters may "
    "an id hold, and what may it start with?",
    "F": "read the contract's id rule under section 4 again: a letter or digit of which "
    "scripts, and where in the id?",
    "files": "one file per user_scope: how many different keys do the six user ids give, "
    "and does a rejected append create a file?",
}


def exercise_truth() -> dict[str, str | int | None]:
    """Each append's error class name (None: written) and how many store files hold records."""
    source = MemorySource("chat-9", "conversation_transcript", "notes", "2026-08-01T08:00:00Z")
    note = dict(kind="conversation", content="a note", summary="a note", source=source)
    truth: dict[str, str | int | None] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-01-") as tmp:
        users = Path(tmp) / "users"
        for label, (user_id, memory_id) in EXERCISE_APPENDS.items():
            path = users / f"memories-{memorylib.user_scope_for(user_id)}.jsonl"
            append = RemoteMemoryStore(path, user_id=user_id).append
            error, _ = typed_attempt(partial(append, memory_id=memory_id, **note))
            truth[label] = None if error == NO_ERROR else error
        truth["files"] = sum(1 for path in users.glob("memories-*.jsonl") if path.stat().st_size)
    return truth


def _name(given: object) -> object:
    return error_name(given, no_error=("written",))


def _hint(label: str, given: object, expected: object) -> str:
    """The label's hint; "be more specific" when the answer names a parent of the right class."""
    said, raised = (getattr(memorylib, str(_name(v)), None) for v in (given, expected))
    if said in getattr(raised, "__mro__", ())[1:] and issubclass(said, RemoteMemoryError):
        return (
            f"be more specific: {said.__name__} is the parent class of several rejections; "
            "which of its subclasses does this call raise, and why?"
        )
    return _HINTS[label]


def check_append_predictions(answer: object) -> ex.CheckResult:
    """``answer``: "A".."F" -> an error class, its name or None (written), "files" -> an int."""

    def judge(answer: object) -> ex.CheckResult:
        described = "a dict from 'A'..'F' (an error class, its name, or None) and 'files'"
        given = ex.expect_labels(answer, _HINTS, described)
        truth = exercise_truth()
        hints = {label: _hint(label, given[label], truth[label]) for label in truth}
        mistakes = ex.grade_labels(
            truth,
            given,
            hints,
            same=lambda g, e: type(g) is int and g == e if isinstance(e, int) else _name(g) == e,
            shown=lambda g: "None (written)" if _name(g) is None else repr(_name(g)),
        )
        named = {label: "written" if value is None else value for label, value in truth.items()}
        return mistakes or ex.right(f"All {len(truth)} right: {named}.")

    return ex.check_value(answer, judge, placeholder='a dict with the keys "A" to "F" and "files"')


# B: a call at 18:10 on 15 July 2026 in UTC-7, imported by hand at 08:03 UTC (the sync job's 12
# minutes do not apply). Never shown as timestamps before the task.
BUILT_RECORD = {
    "source_id": "call-0715",
    "source_type": "conversation_transcript",
    "captured_at": "2026-07-16T01:10:00Z",
    "stored_at": "2026-07-16T08:03:00Z",
}
# (field, its value) -> the hint of a known mistake; else the field's own hint
_KNOWN = {
    ("captured_at", "2026-07-15T18:10:00Z"): "18:10 is the local time of the call, in UTC-7, "
    "not UTC: give the offset (...T18:10:00-07:00) or convert it; the store keeps UTC.",
    ("captured_at", "2026-07-15T11:10:00Z"): "UTC-7 is seven hours behind UTC: to get UTC, add "
    "the seven hours.",
    ("captured_at", BUILT_RECORD["stored_at"]): "captured_at is when the call happened, not "
    "when Omar imported the record.",
    ("captured_at", "2026-07-16T07:51:00Z"): "the sync job's 12 minutes do not apply: this "
    "record was imported by hand. captured_at is when the call started, 18:10 in UTC-7: "
    "convert that.",
    ("stored_at", BUILT_RECORD["captured_at"]): "stored_at is when the record reached the store "
    "(Omar's import), not when the call happened: two clocks, two values.",
}
_FIELD = {
    "source_id": "it points at the evidence, the transcript of the call; use its id.",
    "source_type": "the task gives the kind of evidence the source is, a conversation "
    "transcript; use its spelling.",
    "captured_at": "captured_at is when the call started: 18:10 on 15 July 2026, in UTC-7.",
    "stored_at": "stored_at is when Omar imported the record, 08:03 UTC on 16 July; left out, "
    "it is the moment you ran the cell.",
}


def _problems(record: StoredMemory) -> list[str]:
    source = record.source
    given = {"source_id": source.source_id, "source_type": source.source_type}
    given |= {"captured_at": source.captured_at, "stored_at": record.stored_at}
    problems = []
    if record.kind is not MemoryKind.CONVERSATION:
        problems.append(f"kind: a call is a conversation, not {record.kind.value}.")
    for field, value in given.items():
        if value != BUILT_RECORD[field]:
            shown = repr(value) if field.startswith("source_") else value
            problems.append(f"{field} {shown}: {_KNOWN.get((field, value), _FIELD[field])}")
    return problems


def check_built_record(answer: object, store: RemoteMemoryStore | None = None) -> ex.CheckResult:
    """``answer``: the StoredMemory ``store.append(...)`` returned, read back from ``store``;
    one hint per wrong field (the kind, the source's id and type, both clocks)."""

    def judge(record: StoredMemory) -> ex.CheckResult:
        if store is None:
            return ex.wrong("Pass the store you appended to: check_built_record(my_record, store).")
        try:
            stored = store.read_all()
        except RemoteMemoryError as error:
            return ex.wrong(
                f"Reading {store.path.name} back failed: {type(error).__name__}: {error}"
            )
        if record not in stored:
            return ex.wrong(
                f"{record.memory_id!r} is not in {store.path.name}: building a StoredMemory "
                "stores nothing. Append it (store.append returns the record it wrote)."
            )
        if problems := _problems(record):
            return ex.wrong(f"{len(problems)} field(s) to fix:", problems)
        stored, captured = map(
            datetime.fromisoformat, (record.stored_at, record.source.captured_at)
        )
        hours, minutes = divmod(round((stored - captured).total_seconds() / 60), 60)
        return ex.right(
            f"Stored and read back: the call happened at {record.source.captured_at} and "
            f"reached the store {hours} h {minutes} min later, at {record.stored_at}."
        )

    return ex.check_value(
        answer,
        judge,
        placeholder="the record store.append(...) returns",
        kind=StoredMemory,
        described="the StoredMemory that store.append(...) returned",
    )


# optional stretch: write user_scope_for yourself
def _scope(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


_NAMED = ("alice", "  Alice ", "ALICE\t", "Dana.Okafor@Northwind.example", "Straße", "ΣΊΣΥΦΟΣ")
SCOPE_EXERCISE = ex.FunctionExercise(
    function="user_scope_for",
    reference=memorylib.user_scope_for,
    # named first: the ids a careless version gets wrong
    examples=tuple(ex.Named(repr(user_id), ex.Call(user_id)) for user_id in (*_NAMED, "会话-用户")),
    cases=st.builds(
        lambda before, text, after: before + text + after,
        st.sampled_from(("", " ", "\t")),
        st.text("abcdeXYZ.@-_ßΣσς会话İ ", min_size=1, max_size=12).filter(str.strip),
        st.sampled_from(("", " ", "\n")),
    ).map(ex.Call),
    mistakes=(
        ex.Mistake(
            "lower() instead of casefold()",
            "casefold() is a stronger lower(): 'Straße' and 'STRASSE' are one user.",
            lambda user_id: _scope(user_id.strip().lower()),
        ),
        ex.Mistake(
            "not stripped",
            "Strip the spaces around the id first: '  Alice ' is the user 'alice'.",
            lambda user_id: _scope(user_id.casefold()),
        ),
        ex.Mistake(
            "case not folded",
            "Fold the case (casefold()): 'Alice' and 'alice' are one user.",
            lambda user_id: _scope(user_id.strip()),
        ),
        ex.Mistake(
            "the whole digest",
            "A user_scope is the FIRST 16 hex characters of the digest: hexdigest()[:16].",
            lambda user_id: hashlib.sha256(user_id.strip().casefold().encode()).hexdigest(),
        ),
    ),
    generated=200,
    # a body that returns user_scope_for(...) (or a store's .user_scope) agrees by construction
    refuses=(memorylib.user_scope_for,),
)


def check_scope_function(answer: object) -> ex.CheckResult:
    """``answer``: a function against ``user_scope_for``, on named ids then 200 generated."""
    return ex.check_value(
        answer,
        lambda function: ex.check_function(SCOPE_EXERCISE, function),
        placeholder="a function my_user_scope(user_id) -> str",
    )
