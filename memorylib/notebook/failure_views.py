"""Notebook 07's self-check: six calls, none on screen before it, run here on fresh stores."""

import errno
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from unittest import mock

from memorylib import RecallEngine, RemoteMemoryError, errors, files, seed_teaching_store
from memorylib.notebook import exercises as ex
from memorylib.notebook.common import error_name, typed_attempt
from memorylib.notebook.messages import say
from memorylib.records import MemorySource
from memorylib.store import RemoteMemoryStore, encode_line
from memorylib.timestamps import TEACHING_AS_OF

_SOURCE = MemorySource("transcript-07-x", "conversation_transcript", "note", "2026-08-02T10:00:00Z")
_NOTE = dict(kind="conversation", content="A new note.", summary="A new note.", source=_SOURCE)
_append = partial(RemoteMemoryStore.append, stored_at=_SOURCE.captured_at, **_NOTE)
_CATCH_ALL = {cls.__name__ for cls in RemoteMemoryError.__mro__}  # names that say "some error"


def exercise_truth() -> dict[str, str | None]:
    """The error class name each call raises (None: no error), on fresh teaching stores."""
    failure = mock.Mock(side_effect=OSError(errno.EIO, "Input/output error"))
    directory_fsync_fails = mock.patch.object(files, "fsync_directory", failure)
    with tempfile.TemporaryDirectory(prefix="memorylib-07-") as tmp:
        store, torn, damaged = (RemoteMemoryStore(Path(tmp) / f"{n}.jsonl") for n in "std")
        for seeded in (store, torn, damaged):
            seed_teaching_store(seeded)
        line = encode_line(replace(torn.read_all()[-1], memory_id="conversation-007"))  # new
        files.append_bytes(torn.path, line[: len(line) // 2])  # a crash mid-write
        files.append_bytes(damaged.path, b'{"memory_id": "conversation-x", oops}\n')  # not JSON
        recall = RecallEngine(store).recall
        calls = {  # the notebook's table shows them (a test checks they are these)
            "A": lambda: recall("layered memory", limit="5", as_of=TEACHING_AS_OF),  # type: ignore[arg-type]
            "B": lambda: recall("?! layered !?", as_of=TEACHING_AS_OF),
            "C": RemoteMemoryStore(store.path, user_id="  Local-User ").read_all,
            "D": partial(_append, torn, memory_id="conversation-006"),
            "E": damaged.read_all,
            "F": directory_fsync_fails(
                partial(_append, RemoteMemoryStore(Path(tmp) / "new" / "s.jsonl"), memory_id="c-1")
            ),
        }
        return {label: error_name(typed_attempt(call)[0]) for label, call in calls.items()}


def check_error_predictions(answer: object) -> ex.CheckResult:
    """``answer``: "A".."F" -> the exact error class (or its name) each call raises, or None."""

    def hint_for(label: str, given: object, expected: str | None) -> str:  # a parent: be specific
        name, hint = error_name(given), say(f"failure_views.hint.{label}")
        if name in _CATCH_ALL:
            return say("failure_views.catch_all", name=name, hint=hint)
        raised = getattr(errors, expected or "", None)
        if name in {cls.__name__ for cls in getattr(raised, "__mro__", ())[1:]}:
            return say("failure_views.specific", name=name, hint=hint)
        return hint

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, "ABCDEF", say("failure_views.described"))
        truth, no_error = exercise_truth(), say("failure_views.no_error")
        named = {label: expected or no_error for label, expected in truth.items()}
        return ex.grade_labels(
            truth,
            given,
            {label: hint_for(label, given[label], truth[label]) for label in truth},
            same=lambda given, expected: error_name(given) == expected,
            shown=lambda given: no_error if error_name(given) is None else str(error_name(given)),
        ) or ex.right(say("failure_views.right", count=len(truth), named=named))

    return ex.check_value(answer, judge, placeholder=say("failure_views.placeholder"))
