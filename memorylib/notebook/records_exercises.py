"""Notebook 01's checks (six appends, a record's two clocks, ``user_scope_for``), off screen."""

import hashlib
import tempfile
from datetime import datetime
from functools import partial
from pathlib import Path

from hypothesis import strategies as st

import memorylib
from memorylib import MemorySource, RemoteMemoryError, RemoteMemoryStore, StoredMemory
from memorylib.notebook import exercises as ex
from memorylib.notebook.common import error_name, typed_attempt
from memorylib.notebook.messages import say

# A: label -> (user_id, memory_id), appended in this order, each into its user's store
EXERCISE_APPENDS: dict[str, tuple[str, str]] = {
    "A": ("Dana", "note-1"),
    "B": (" dana ", "note-2"),
    "C": ("DANA", "note-1"),
    "D": ("Dana Okafor", "note-1"),
    "E": ("Erin", "-draft"),
    "F": ("dana", "笔记-1"),
}


def _name(value: object) -> object:
    """A predicted outcome as compared; "written" (or the reader's word for it) is no error."""
    return error_name(value, no_error=("written", say("records_exercises.appends.written")))


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
            truth[label] = error_name(error)
        truth["files"] = sum(1 for path in users.glob("memories-*.jsonl") if path.stat().st_size)
    return truth


def check_append_predictions(answer: object) -> ex.CheckResult:
    """``answer``: "A".."F" -> an error class, its name or None (written), "files" -> an int."""

    def hint_for(label: str, given: object, expected: object) -> str:  # a parent: be specific
        said, raised = (getattr(memorylib, str(_name(v)), None) for v in (given, expected))
        if said in getattr(raised, "__mro__", ())[1:] and issubclass(said, RemoteMemoryError):
            return say("records_exercises.specific", name=said.__name__)
        return say(f"records_exercises.hint.{label}")

    def judge(answer: object) -> ex.CheckResult:
        truth, written = exercise_truth(), say("records_exercises.appends.shown_written")
        given = ex.expect_labels(answer, truth, say("records_exercises.appends.described"))
        word = say("records_exercises.appends.written")
        named = {label: word if value is None else value for label, value in truth.items()}
        return ex.grade_labels(
            truth,
            given,
            {label: hint_for(label, given[label], truth[label]) for label in truth},
            same=lambda g, e: type(g) is int and g == e if isinstance(e, int) else _name(g) == e,
            shown=lambda g: repr(_name(g)) if _name(g) is not None else written,
        ) or ex.right(say("records_exercises.appends.right", count=len(truth), named=named))

    return ex.check_value(answer, judge, placeholder=say("records_exercises.appends.placeholder"))


# B: a call at 18:10 on 15 July 2026 in UTC-7, imported by hand at 08:03 UTC; never shown before
BUILT_RECORD = {
    "source_id": "call-0715",
    "source_type": "conversation_transcript",
    "captured_at": "2026-07-16T01:10:00Z",
    "stored_at": "2026-07-16T08:03:00Z",
}
# (field, its value) -> the catalogue's hint of a known mistake; else the field's own hint
_KNOWN = {
    ("captured_at", "2026-07-15T18:10:00Z"): "captured_at.local",
    ("captured_at", "2026-07-15T11:10:00Z"): "captured_at.behind",
    ("captured_at", BUILT_RECORD["stored_at"]): "captured_at.imported",
    ("captured_at", "2026-07-16T07:51:00Z"): "captured_at.sync",
    ("stored_at", BUILT_RECORD["captured_at"]): "stored_at.swapped",
}


def check_built_record(answer: object, store: RemoteMemoryStore | None = None) -> ex.CheckResult:
    """``answer``: the StoredMemory ``store.append(...)`` returned; one hint per wrong field."""

    def judge(record: StoredMemory) -> ex.CheckResult:
        if store is None:
            return ex.wrong(say("records_exercises.record.no_store"))
        try:
            stored = store.read_all()
        except RemoteMemoryError as error:
            return ex.wrong(say("records_exercises.record.unreadable", store=store, error=error))
        if record not in stored:
            return ex.wrong(say("records_exercises.record.not_stored", record=record, store=store))
        kind, problems = record.kind.value, []
        if kind != "conversation":
            problems.append(say("records_exercises.record.kind", kind=kind))
        for field, expected in BUILT_RECORD.items():
            value = getattr(record if field == "stored_at" else record.source, field)
            if value != expected:
                hint = say(f"records_exercises.field.{_KNOWN.get((field, value), field)}")
                text = repr(value) if field.startswith("source_") else value
                line = say("records_exercises.record.field", field=field, value=text, hint=hint)
                problems.append(line)
        if problems:
            return ex.wrong(say("records_exercises.record.to_fix", count=len(problems)), problems)
        clock = datetime.fromisoformat
        lag = clock(record.stored_at) - clock(record.source.captured_at)
        hours, minutes = divmod(round(lag.total_seconds() / 60), 60)
        right = say("records_exercises.record.right", record=record, hours=hours, minutes=minutes)
        return ex.right(right)

    todo = say("records_exercises.record.placeholder")
    wanted = say("records_exercises.record.described")
    return ex.check_value(answer, judge, placeholder=todo, kind=StoredMemory, described=wanted)


# optional stretch: write user_scope_for yourself
def _scope(key: str, size: int = 16) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:size]


_VARIANTS = {  # catalogue key -> a mistake's function
    "lower": lambda user_id: _scope(user_id.strip().lower()),
    "strip": lambda user_id: _scope(user_id.casefold()),
    "fold": lambda user_id: _scope(user_id.strip()),
    "digest": lambda user_id: _scope(user_id.strip().casefold(), 64),
}
_NAMED = ("alice", "  Alice ", "ALICE\t", "Dana.Okafor@Northwind.example", "Straße", "ΣΊΣΥΦΟΣ")
SCOPE_EXERCISE = ex.FunctionExercise(
    function="user_scope_for",
    reference=memorylib.user_scope_for,
    # named first: the ids a careless version gets wrong
    examples={repr(user_id): ex.Call(user_id) for user_id in (*_NAMED, "会话-用户")},
    cases=st.builds(
        lambda before, text, after: before + text + after,
        st.sampled_from(("", " ", "\t")),
        st.text("abcdeXYZ.@-_ßΣσς会话İ ", min_size=1, max_size=12).filter(str.strip),
        st.sampled_from(("", " ", "\n")),
    ).map(ex.Call),
    mistakes=ex.mistakes("records_exercises.scope", _VARIANTS),
    generated=200,
    # a body that returns user_scope_for(...) (or a store's .user_scope) agrees by construction
    refuses=(memorylib.user_scope_for,),
)


def check_scope_function(answer: object) -> ex.CheckResult:
    """``answer``: a function against ``user_scope_for``, on named ids then 200 generated."""
    judge = partial(ex.check_function, SCOPE_EXERCISE)
    return ex.check_value(answer, judge, placeholder=say("records_exercises.scope.placeholder"))
