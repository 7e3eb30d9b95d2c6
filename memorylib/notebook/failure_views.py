"""The self-check of notebook 07's "Your turn": predict the typed error of six calls.

Everything else notebook 07 shows is written in its cells. The checker stays here so
that the answer is not on the student's screen: it runs each call for real, on fresh
stores in a temporary directory, and compares the outcome with the prediction. No call
of the exercise is one the notebook runs before it (a test checks that).
"""

from __future__ import annotations

import errno
import tempfile
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryError,
    RemoteMemoryStore,
    StoredMemory,
    errors,
    files,
    seed_teaching_store,
)
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.store import encode_line
from memorylib.timestamps import TEACHING_AS_OF

__all__ = ["EXERCISE_CALLS", "check_error_predictions", "exercise_truth"]

# label -> the call as the student reads it (exercise_truth runs exactly these).
EXERCISE_CALLS: dict[str, str] = {
    "A": 'engine.recall("layered memory", limit="5")',
    "B": 'engine.recall("?! layered !?")',
    "C": 'RemoteMemoryStore(store.path, user_id="  Local-User ").read_all()',
    "D": 'store.append(memory_id="conversation-006", ...)  '
    "# after the seven complete lines, half of an eighth one (no newline)",
    "E": "store.read_all()  # after the seven lines, an eighth ends in its newline, not JSON",
    "F": 'RemoteMemoryStore(new_path).append(memory_id="c-1", ...)  '
    "# a new file; the fsync of its directory fails, everything else works",
}

_HINTS = {
    "A": "the limit's type is checked before its range: what type is '5'?",
    "B": "only a query with no searchable term at all is refused. Does this one have a word?",
    "C": "the user scope is a hash of the user id after strip() and casefold() (notebook "
    "01): whose scope is that?",
    "D": "the writer first moves the torn tail to the quarantine file; then the usual "
    "checks run on the record it was asked to write. Is conversation-006 new?",
    "E": "a record commits at its newline, wherever its line is in the file: was this "
    "line committed, and can anyone tell what it was?",
    "F": "what failed: the step, or the cut back afterwards? Only a failed cut back "
    "fails closed; a file the call created is removed again.",
}

_SOURCE = MemorySource("transcript-07-x", "conversation_transcript", "note", "2026-08-02T10:00:00Z")
_NOT_JSON = b'{"memory_id": "conversation-x", oops}\n'  # a complete line, damaged


def _append(store: RemoteMemoryStore, memory_id: str) -> str:
    return store.append(
        kind=MemoryKind.CONVERSATION,
        memory_id=memory_id,
        content="A new note.",
        summary="A new note.",
        source=_SOURCE,
        stored_at=_SOURCE.captured_at,
    ).memory_id


def _seeded(folder: Path, name: str) -> RemoteMemoryStore:
    store = RemoteMemoryStore(folder / f"{name}.jsonl")
    seed_teaching_store(store)
    return store


def exercise_truth(*, as_of: str = TEACHING_AS_OF) -> dict[str, str | None]:
    """The error class name each call of ``EXERCISE_CALLS`` raises (None: no error),
    each run on fresh copies of the teaching store in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="memorylib-07-") as tmp:
        folder = Path(tmp)
        store = _seeded(folder, "store")
        engine = RecallEngine(store)
        torn = _seeded(folder, "torn")
        line = encode_line(
            StoredMemory(
                "conversation-007",
                torn.user_scope,
                MemoryKind.CONVERSATION,
                "A note cut short.",
                "A note cut short.",
                _SOURCE,
                _SOURCE.captured_at,
            )
        )
        files.append_bytes(torn.path, line[: len(line) // 2])  # a crash mid-write
        damaged = _seeded(folder, "damaged")
        files.append_bytes(damaged.path, _NOT_JSON)  # a complete last line, not JSON
        new = RemoteMemoryStore(folder / "new" / "store.jsonl")

        def new_file_folder_fsync_fails() -> str:
            failure = OSError(errno.EIO, "Input/output error")
            with mock.patch.object(files, "fsync_directory", side_effect=failure):
                return _append(new, "c-1")

        calls: dict[str, Callable[[], object]] = {
            "A": lambda: engine.recall("layered memory", limit="5", as_of=as_of),  # type: ignore[arg-type]
            "B": lambda: engine.recall("?! layered !?", as_of=as_of),
            "C": RemoteMemoryStore(store.path, user_id="  Local-User ").read_all,
            "D": lambda: _append(torn, "conversation-006"),
            "E": damaged.read_all,
            "F": new_file_folder_fsync_fails,
        }
        truth: dict[str, str | None] = {}
        for label, call in calls.items():
            error, _ = typed_attempt(call)
            truth[label] = None if error == NO_ERROR else error
    return truth


def _same_error(given: object, expected: str | None) -> bool:
    return error_name(given) == expected


# Names that say only "some error": the base of every memorylib error and what is above it.
_CATCH_ALL = frozenset(cls.__name__ for cls in RemoteMemoryError.__mro__)


def _hint(label: str, given: object, expected: str | None) -> str:
    """The label's hint, led by "be more specific" when the answer is right by generality.

    The catch-all gets the same words on every label, whatever the call raises, so that an
    answer of RemoteMemoryError everywhere learns nothing about which calls raise."""
    name = error_name(given)
    if name in _CATCH_ALL:
        return (
            f"{name} is above every memorylib error, so it names none: give the exact class "
            f"the call raises, or None. {_HINTS[label]}"
        )
    raised = getattr(errors, expected, None) if expected else None
    if isinstance(raised, type) and name in {cls.__name__ for cls in raised.__mro__[1:]}:
        return (
            f"be more specific: {name} is a parent of the class this call raises; name that "
            f"exact class. {_HINTS[label]}"
        )
    return _HINTS[label]


def _shown(given: object) -> str:
    name = error_name(given)
    return "no error" if name is None else str(name)


def check_error_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 07: ``answer`` maps "A".."F" to an error class (or its
    name), or None for "no error". Right when all six are right, each the exact class the
    call raises (a parent class is wrong, with a "be more specific" hint); wrong with one
    hint per wrong label; not answered while the placeholder ``...`` (or a ``...`` value)
    is there.
    """

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer,
            EXERCISE_CALLS,
            "a dict from 'A'..'F' to an error class (or its name) or None",
        )
        truth = exercise_truth()
        hints = {label: _hint(label, given[label], truth[label]) for label in truth}
        mistakes = grade_labels(truth, given, hints, same=_same_error, shown=_shown)
        if mistakes is not None:
            return mistakes
        named = {label: expected or "no error" for label, expected in truth.items()}
        return right(f"All {len(truth)} right: {named}.")

    return check_value(
        answer, judge, placeholder="a dict from 'A'..'F' to a class, its name, or None"
    )
