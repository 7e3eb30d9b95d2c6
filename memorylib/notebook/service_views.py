"""Notebook 11's "Your turn" checker: it runs the exercise's five calls for real, on fresh
stores in a temporary folder (a checker on screen would show the answer)."""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from memorylib.backends import SQLiteMemoryStore
from memorylib.backends.migrate import migrate
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
    same,
)
from memorylib.records import MemorySource
from memorylib.seed import seed_teaching_store
from memorylib.store import RemoteMemoryStore

__all__ = ["LABELS", "check_service_predictions", "service_exercise_truth"]

LABELS = ("A", "B", "C", "D", "E")  # the five calls of the notebook's "Your turn" table


def _note(memory_id: str, text: str) -> dict[str, object]:
    at = "2026-08-02T11:00:00Z"
    source = MemorySource(f"transcript-{memory_id}", "conversation_transcript", text, at)
    fields = {"memory_id": memory_id, "content": text, "summary": text, "stored_at": at}
    return {"kind": "conversation", "source": source, **fields}


def service_exercise_truth() -> dict[str, object]:
    """Run the five calls on fresh stores: for A-D the name of the typed error each raises
    (None: none), for E the pair (rows of alice.db's memories table, every scope counted;
    the records alice's read_all() returns from it), after A to D."""
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
        truth: dict[str, object] = {}
        for label, call in calls.items():
            name, _ = typed_attempt(call)
            truth[label] = None if name == NO_ERROR else name
        with closing(sqlite3.connect(alice.path)) as database:
            (rows,) = database.execute("SELECT count(*) FROM memories").fetchone()
        truth["E"] = (rows, len(alice.read_all()))
        for store in (alice, bob, other):
            store.close()
    return truth


_HINTS = {
    "A": "append_many is one transaction: one refused record refuses the whole batch. "
    "The unique key is (user_scope, memory_id): is alice's (scope, 'm-1') already there?",
    "B": "bob's store writes rows carrying bob's user_scope: is (bob's scope, 'm-1') taken?",
    "C": "a JSONL file holds one user's records: before it writes, an append reads the file, "
    "and every record it reads is checked against the reader's user_scope.",
    "D": "migrate copies into an empty target, or one holding a prefix of the source (a copy "
    "cut short); anything else it refuses before writing, as a call whose arguments are wrong.",
    "E": "alice.db's memories table holds every user scope's rows; alice's read_all() returns "
    "only the rows carrying her user_scope. Count what A and what B stored in it.",
}


def _same(given: object, expected: object) -> bool:
    if isinstance(expected, tuple):  # E: a pair of counts, as a tuple or a list
        return isinstance(given, tuple | list) and same(expected, tuple(given))
    return error_name(given) == expected


def _shown(given: object) -> str:
    if isinstance(given, tuple | list):
        return repr(given)
    name = error_name(given)
    return NO_ERROR if name is None else str(name)


def check_service_predictions(answer: object) -> CheckResult:
    """Self-check: ``answer`` maps "A".."D" to an error class (or its name) or None, and
    "E" to a pair of counts, ``(rows, records)``. Right when all five are right; wrong with
    one hint per wrong label; not answered while the placeholder ``...`` (or a ``...``
    value) is there."""

    def judge(answer: object) -> CheckResult:
        given = expect_labels(answer, LABELS, "a dict from 'A'..'E'")
        truth = service_exercise_truth()
        mistakes = grade_labels(truth, given, _HINTS, same=_same, shown=_shown)
        named = {k: (NO_ERROR if v is None else v) for k, v in truth.items()}
        return right(f"All {len(truth)} right: {named}.") if mistakes is None else mistakes

    return check_value(
        answer,
        judge,
        placeholder='a dict with a value for each of "A", "B", "C", "D" and "E"',
    )
