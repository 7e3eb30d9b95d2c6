"""The checks of notebook 01 (stored records), on the course's exercise engine.

* ``check_append_predictions``: predict what six appends by differently spelled user ids
  do (written, or which typed error), and how many store files end up holding records;
* ``check_built_record``: build the ``MemorySource`` of an event described in words and
  append its record, both clocks right;
* ``check_scope_function`` (optional stretch): write ``user_scope_for`` yourself (a function
  that calls it, directly or through the library, is refused).

The checkers live here, not in the notebook, so no accepted answer is on screen before the
attempt. The notebook's own code (frames, charts, the widget, the append's critical
section) is in its cells.
"""

from __future__ import annotations

import hashlib
import tempfile
from datetime import datetime
from pathlib import Path

from hypothesis import strategies as st

import memorylib
from memorylib import (
    MemoryKind,
    MemorySource,
    RemoteMemoryError,
    RemoteMemoryStore,
    StoredMemory,
    user_scope_for,
)
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt
from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Mistake,
    Named,
    check_function,
    check_value,
    expect_labels,
    grade_labels,
    right,
    wrong,
)

__all__ = [
    "BUILT_RECORD",
    "EXERCISE_APPENDS",
    "SCOPE_EXERCISE",
    "check_append_predictions",
    "check_built_record",
    "check_scope_function",
    "exercise_truth",
]

# -- A: predict what six appends do --------------------------------------------------------------

# label -> (user_id, memory_id): appended in this order, each through the store of its user
# (``users/memories-<user_scope>.jsonl``, one file per user scope, as in the notebook).
EXERCISE_APPENDS: dict[str, tuple[str, str]] = {
    "A": ("Dana", "note-1"),
    "B": (" dana ", "note-2"),
    "C": ("DANA", "note-1"),
    "D": ("Dana Okafor", "note-1"),
    "E": ("Erin", "-draft"),
    "F": ("dana", "笔记-1"),
}
_LABELS = (*EXERCISE_APPENDS, "files")
_SOURCE = MemorySource("chat-9", "conversation_transcript", "notes", "2026-08-01T08:00:00Z")

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
_MORE_SPECIFIC = (
    "be more specific: {given} is the parent class of several rejections; which of its "
    "subclasses does this call raise, and why?"
)


def _user_store(root: Path, user_id: str) -> RemoteMemoryStore:
    scope = user_scope_for(user_id)
    return RemoteMemoryStore(root / "users" / f"memories-{scope}.jsonl", user_id=user_id)


def exercise_truth() -> dict[str, str | int | None]:
    """Run the six appends in a temporary folder: each label's error class name (None when
    its line was written), and ``"files"``: how many store files hold records."""
    truth: dict[str, str | int | None] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-01-") as tmp:
        root = Path(tmp)
        for label, (user_id, memory_id) in EXERCISE_APPENDS.items():
            error, _ = typed_attempt(
                lambda user_id=user_id, memory_id=memory_id: _user_store(root, user_id).append(
                    kind=MemoryKind.CONVERSATION,
                    memory_id=memory_id,
                    content="a note",
                    summary="a note",
                    source=_SOURCE,
                    stored_at="2026-08-01T08:00:00Z",
                )
            )
            truth[label] = None if error == NO_ERROR else error
        stores = (root / "users").glob("memories-*.jsonl")
        truth["files"] = sum(1 for path in stores if path.stat().st_size)
    return truth


def _error_class(name: object) -> type[RemoteMemoryError] | None:
    found = getattr(memorylib, name, None) if isinstance(name, str) else None
    if isinstance(found, type) and issubclass(found, RemoteMemoryError):
        return found
    return None


def _same(given: object, expected: str | int | None) -> bool:
    if isinstance(expected, int):
        return type(given) is int and given == expected  # not a bool, not "2"
    return error_name(given, no_error=("written",)) == expected


def _shown(given: object) -> str:
    if isinstance(given, int | float) and not isinstance(given, bool):
        return repr(given)
    name = error_name(given, no_error=("written",))
    return "None (written)" if name is None else repr(name)


def _hints(truth: dict[str, str | int | None], given: dict[str, object]) -> dict[str, str]:
    """The hints, with "be more specific" where the answer names a parent of the right class."""
    hints = dict(_HINTS)
    for label, expected in truth.items():
        said = _error_class(error_name(given[label], no_error=("written",)))
        right_class = _error_class(expected)
        if said and right_class and said is not right_class and issubclass(right_class, said):
            hints[label] = _MORE_SPECIFIC.format(given=said.__name__)
    return hints


def check_append_predictions(answer: object) -> CheckResult:
    """``answer`` maps "A".."F" to the error class (or its name) each append raises, or None
    when it writes its line, and ``"files"`` to the number of store files holding records.
    Right when all seven are right; wrong with one hint per wrong key; not answered while
    the placeholder ``...`` is there."""

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer, _LABELS, "a dict from 'A'..'F' (an error class, its name, or None) and 'files'"
        )
        truth = exercise_truth()
        mistakes = grade_labels(truth, given, _hints(truth, given), same=_same, shown=_shown)
        if mistakes is not None:
            return mistakes
        named = {label: value if value is not None else "written" for label, value in truth.items()}
        return right(f"All {len(truth)} right: {named}.")

    return check_value(answer, judge, placeholder='a dict with the keys "A" to "F" and "files"')


# -- B: build and append the record of an event ---------------------------------------------------

# What the notebook describes in words: a call that started at 18:10 on 15 July 2026 in
# UTC-7 (so 01:10 on 16 July in UTC), transcript "call-0715" of type
# "conversation_transcript", imported by hand at 08:03 UTC (the sync job was down, so the
# corpus's usual 12-minute lag does not give captured_at). Never shown as timestamps before
# the attempt.
BUILT_RECORD = {
    "source_id": "call-0715",
    "source_type": "conversation_transcript",
    "captured_at": "2026-07-16T01:10:00Z",
    "stored_at": "2026-07-16T08:03:00Z",
}
_LOCAL_AS_UTC = "2026-07-15T18:10:00Z"  # the local time written as if it were UTC
_WRONG_SIGN = "2026-07-15T11:10:00Z"  # UTC+7 instead of UTC-7
_SYNC_JOB_LAG = "2026-07-16T07:51:00Z"  # stored_at minus the sync job's usual 12 minutes


def _captured_hint(captured_at: str) -> str:
    if captured_at == _LOCAL_AS_UTC:
        return (
            "18:10 is the local time of the call, in UTC-7, not UTC: give the offset "
            "(...T18:10:00-07:00) or convert it; the store keeps UTC."
        )
    if captured_at == _WRONG_SIGN:
        return "UTC-7 is seven hours behind UTC: to get UTC, add the seven hours."
    if captured_at == BUILT_RECORD["stored_at"]:
        return "captured_at is when the call happened, not when Omar imported the record."
    if captured_at == _SYNC_JOB_LAG:
        return (
            "the sync job's 12 minutes do not apply: this record was imported by hand. "
            "captured_at is when the call started, 18:10 in UTC-7: convert that."
        )
    return "captured_at is when the call started: 18:10 on 15 July 2026, in UTC-7."


def _stored_hint(stored_at: str) -> str:
    if stored_at == BUILT_RECORD["captured_at"]:
        return (
            "stored_at is when the record reached the store (Omar's import), not when the "
            "call happened: two clocks, two values."
        )
    return (
        "stored_at is when Omar imported the record, 08:03 UTC on 16 July; left out, it is "
        "the moment you ran the cell."
    )


def check_built_record(answer: object, store: RemoteMemoryStore | None = None) -> CheckResult:
    """``answer`` is the StoredMemory that ``store.append(...)`` returned for the call of
    notebook 01's exercise B: it must be in ``store`` (read back from its file), a
    conversation whose source is the transcript (its id and type, as the task gives them;
    the title is free), with ``captured_at`` the call's start in UTC and ``stored_at`` the
    import's time. One hint per field that is wrong."""

    def judge(record: StoredMemory) -> CheckResult:
        if store is None:
            return wrong("Pass the store you appended to: check_built_record(my_record, store).")
        try:
            stored = store.read_all()
        except RemoteMemoryError as error:
            return wrong(f"Reading {store.path.name} back failed: {type(error).__name__}: {error}")
        if record not in stored:
            return wrong(
                f"{record.memory_id!r} is not in {store.path.name}: building a StoredMemory "
                "stores nothing. Append it (store.append returns the record it wrote)."
            )
        problems = []
        if record.kind is not MemoryKind.CONVERSATION:
            problems.append(f"kind: a call is a conversation, not {record.kind.value}.")
        if record.source.source_id != BUILT_RECORD["source_id"]:
            problems.append(
                f"source_id {record.source.source_id!r}: it points at the evidence, the "
                "transcript of the call; use its id."
            )
        if record.source.source_type != BUILT_RECORD["source_type"]:
            problems.append(
                f"source_type {record.source.source_type!r}: the task gives the kind of "
                "evidence the source is, a conversation transcript; use its spelling."
            )
        if record.source.captured_at != BUILT_RECORD["captured_at"]:
            shown = record.source.captured_at
            problems.append(f"captured_at {shown}: {_captured_hint(shown)}")
        if record.stored_at != BUILT_RECORD["stored_at"]:
            problems.append(f"stored_at {record.stored_at}: {_stored_hint(record.stored_at)}")
        if problems:
            return wrong(f"{len(problems)} field(s) to fix:", problems)
        stored, captured = record.stored_at, record.source.captured_at
        lag = datetime.fromisoformat(stored) - datetime.fromisoformat(captured)
        hours, minutes = divmod(round(lag.total_seconds() / 60), 60)
        return right(
            f"Stored and read back: the call happened at {record.source.captured_at} and "
            f"reached the store {hours} h {minutes} min later, at {record.stored_at}."
        )

    return check_value(
        answer,
        judge,
        placeholder="the record store.append(...) returns",
        kind=StoredMemory,
        described="the StoredMemory that store.append(...) returned",
    )


# -- optional stretch: write user_scope_for yourself ---------------------------------------------


def _scope(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


SCOPE_EXERCISE = FunctionExercise(
    function="user_scope_for",
    reference=user_scope_for,
    # named first: the ids a careless version gets wrong
    examples=tuple(
        Named(repr(user_id), Call(user_id))
        for user_id in (
            "alice",
            "  Alice ",
            "ALICE\t",
            "Dana.Okafor@Northwind.example",
            "Straße",
            "ΣΊΣΥΦΟΣ",
            "会话-用户",
        )
    ),
    cases=st.builds(
        lambda before, text, after: before + text + after,
        st.sampled_from(("", " ", "\t")),
        st.text("abcdeXYZ.@-_ßΣσς会话İ ", min_size=1, max_size=12).filter(str.strip),
        st.sampled_from(("", " ", "\n")),
    ).map(Call),
    mistakes=(
        Mistake(
            "lower() instead of casefold()",
            "casefold() is a stronger lower(): 'Straße' and 'STRASSE' are one user.",
            lambda user_id: _scope(user_id.strip().lower()),
        ),
        Mistake(
            "not stripped",
            "Strip the spaces around the id first: '  Alice ' is the user 'alice'.",
            lambda user_id: _scope(user_id.casefold()),
        ),
        Mistake(
            "case not folded",
            "Fold the case (casefold()): 'Alice' and 'alice' are one user.",
            lambda user_id: _scope(user_id.strip()),
        ),
        Mistake(
            "the whole digest",
            "A user_scope is the FIRST 16 hex characters of the digest: hexdigest()[:16].",
            lambda user_id: hashlib.sha256(user_id.strip().casefold().encode()).hexdigest(),
        ),
    ),
    generated=200,
    # a body that returns user_scope_for(...) (or a store's .user_scope) agrees by construction
    refuses=(user_scope_for,),
)


def check_scope_function(answer: object) -> CheckResult:
    """Optional stretch of notebook 01: ``answer`` is a function computing a user_scope,
    checked against ``user_scope_for`` on named ids, then on 200 generated ones."""
    return check_value(
        answer,
        lambda function: check_function(SCOPE_EXERCISE, function),
        placeholder="a function my_user_scope(user_id) -> str",
    )
