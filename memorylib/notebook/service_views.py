"""Notebook 11's "Your turn" checker: the five calls run for real on fresh stores, off screen."""

import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from memorylib.backends import SQLiteMemoryStore
from memorylib.backends.migrate import migrate
from memorylib.notebook import exercises as ex
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt
from memorylib.notebook.messages import say
from memorylib.records import MemorySource
from memorylib.seed import seed_teaching_store
from memorylib.store import RemoteMemoryStore


def _note(memory_id: str, text: str) -> dict[str, object]:
    at = "2026-08-02T11:00:00Z"
    source = MemorySource(f"transcript-{memory_id}", "conversation_transcript", text, at)
    fields = {"memory_id": memory_id, "content": text, "summary": text, "stored_at": at}
    return {"kind": "conversation", "source": source, **fields}


def service_exercise_truth() -> dict[str, object]:
    """A-D: each call's typed error name (None: none); E: (alice.db's rows, alice's records)."""
    with tempfile.TemporaryDirectory(prefix="memorylib-nb11-") as tmp:
        root = Path(tmp)
        alice = SQLiteMemoryStore(root / "alice.db", user_id="alice")
        alice_file = RemoteMemoryStore(root / "alice.jsonl", user_id="alice")
        for store in (alice, alice_file):  # both: the teaching store and alice's 'm-1'
            seed_teaching_store(store)
            store.append(**_note("m-1", "alice's note"))
        bob = SQLiteMemoryStore(root / "alice.db", user_id="bob")
        bob_on_the_file = RemoteMemoryStore(root / "alice.jsonl", user_id="bob")
        other = SQLiteMemoryStore(root / "other.db", user_id="alice")
        other.append(**_note("x-1", "another note of alice's"))
        batch = [_note("m-2", "alice's second note"), _note("m-1", "alice's note, again")]
        calls = {
            "A": lambda: alice.append_many(batch),
            "B": lambda: bob.append(**_note("m-1", "bob's note")),
            "C": lambda: bob_on_the_file.append(**_note("bob-1", "bob's note")),
            "D": lambda: migrate(alice_file, other),
        }
        truth: dict[str, object] = {k: error_name(typed_attempt(c)[0]) for k, c in calls.items()}
        with closing(sqlite3.connect(alice.path)) as database:
            (rows,) = database.execute("SELECT count(*) FROM memories").fetchone()
        truth["E"] = (rows, len(alice.read_all()))
        for store in (alice, bob, other):
            store.close()
    return truth


def _same(given: object, expected: object) -> bool:
    if isinstance(expected, tuple):  # E: a pair of counts, as a tuple or a list
        return isinstance(given, tuple | list) and ex.same(expected, tuple(given))
    return error_name(given) == expected


def _shown(given: object) -> str:
    shown = given if isinstance(given, tuple | list) else error_name(given)
    return str(NO_ERROR) if shown is None else str(shown)  # str of a list or tuple is its repr


def check_service_predictions(answer: object) -> ex.CheckResult:
    """``answer``: "A".."D" -> an error class, its name or None; "E" -> (rows, records)."""

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, "ABCDE", say("service_views.described"))
        truth = service_exercise_truth()
        hints = {label: say(f"service_views.hint.{label}") for label in truth}
        mistakes = ex.grade_labels(truth, given, hints, same=_same, shown=_shown)
        named = {k: (str(NO_ERROR) if v is None else v) for k, v in truth.items()}
        return mistakes or ex.right(say("service_views.right", n=len(truth), named=named))

    return ex.check_value(answer, judge, placeholder=say("service_views.placeholder"))
