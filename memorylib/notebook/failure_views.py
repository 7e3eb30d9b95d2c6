"""The self-check of notebook 07: six calls, none run before it, run here for real on fresh
stores in a temporary folder, so that no answer is on the student's screen."""

from __future__ import annotations

import errno
import tempfile
from dataclasses import replace
from pathlib import Path
from unittest import mock

from memorylib import RecallEngine, RemoteMemoryError, errors, files, seed_teaching_store
from memorylib.notebook import exercises as ex
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt
from memorylib.records import MemorySource
from memorylib.store import RemoteMemoryStore, encode_line
from memorylib.timestamps import TEACHING_AS_OF

# label -> its hint; the notebook's table shows the calls (a test checks they are these)
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
_NOTE = dict(kind="conversation", content="A new note.", summary="A new note.", source=_SOURCE)


def exercise_truth(*, as_of: str = TEACHING_AS_OF) -> dict[str, str | None]:
    """The error class name each call raises (None: no error), on fresh teaching stores."""

    def seeded(name: str) -> RemoteMemoryStore:
        store = RemoteMemoryStore(folder / f"{name}.jsonl")
        seed_teaching_store(store)
        return store

    def append(store: RemoteMemoryStore, memory_id: str) -> str:
        return store.append(memory_id=memory_id, stored_at=_SOURCE.captured_at, **_NOTE).memory_id

    def new_file_folder_fsync_fails() -> str:
        failure = OSError(errno.EIO, "Input/output error")
        with mock.patch.object(files, "fsync_directory", side_effect=failure):
            return append(RemoteMemoryStore(folder / "new" / "store.jsonl"), "c-1")

    with tempfile.TemporaryDirectory(prefix="memorylib-07-") as tmp:
        folder = Path(tmp)
        engine = RecallEngine(store := seeded("store"))
        torn, damaged = seeded("torn"), seeded("damaged")
        line = encode_line(replace(torn.read_all()[-1], memory_id="conversation-007"))  # new
        files.append_bytes(torn.path, line[: len(line) // 2])  # a crash mid-write
        files.append_bytes(damaged.path, b'{"memory_id": "conversation-x", oops}\n')  # not JSON
        calls = {
            "A": lambda: engine.recall("layered memory", limit="5", as_of=as_of),  # type: ignore[arg-type]
            "B": lambda: engine.recall("?! layered !?", as_of=as_of),
            "C": RemoteMemoryStore(store.path, user_id="  Local-User ").read_all,
            "D": lambda: append(torn, "conversation-006"),
            "E": damaged.read_all,
            "F": new_file_folder_fsync_fails,
        }
        outcomes = {label: typed_attempt(call)[0] for label, call in calls.items()}
    return {label: None if error == NO_ERROR else error for label, error in outcomes.items()}


# Names that say only "some error": the base of every memorylib error and what is above it.
_CATCH_ALL = frozenset(cls.__name__ for cls in RemoteMemoryError.__mro__)


def _hint(label: str, given: object, expected: str | None) -> str:
    """The label's hint, led by "be more specific" for a parent class; the catch-all gets the
    same words on every label, so it learns nothing about which calls raise."""
    name = error_name(given)
    if name in _CATCH_ALL:
        return (
            f"{name} is above every memorylib error, so it names none: give the exact class "
            f"the call raises, or None. {_HINTS[label]}"
        )
    raised = getattr(errors, expected or "", None)
    if name in {cls.__name__ for cls in getattr(raised, "__mro__", ())[1:]}:
        return (
            f"be more specific: {name} is a parent of the class this call raises; name that "
            f"exact class. {_HINTS[label]}"
        )
    return _HINTS[label]


def check_error_predictions(answer: object) -> ex.CheckResult:
    """``answer``: "A".."F" -> the exact error class (or its name) each call raises, or None."""

    def judge(answer: object) -> ex.CheckResult:
        described = "a dict from 'A'..'F' to an error class (or its name) or None"
        given = ex.expect_labels(answer, _HINTS, described)
        truth = exercise_truth()
        hints = {label: _hint(label, given[label], truth[label]) for label in truth}
        mistakes = ex.grade_labels(
            truth,
            given,
            hints,
            same=lambda given, expected: error_name(given) == expected,
            shown=lambda given: "no error" if error_name(given) is None else str(error_name(given)),
        )
        named = {label: expected or "no error" for label, expected in truth.items()}
        return mistakes or ex.right(f"All {len(truth)} right: {named}.")

    return ex.check_value(
        answer, judge, placeholder="a dict from 'A'..'F' to a class, its name, or None"
    )
