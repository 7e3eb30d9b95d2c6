"""The self-check of notebook 07b's "Your turn": what six retractions leave behind.

Everything else notebook 07b shows is written in its cells. The checker stays here so
that the answer is not on the student's screen: it runs the six steps for real on a
fresh teaching store in a temporary directory and answers the five questions from it.
``store.retract`` goes beyond the chapter (see CONTRACT.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memorylib import MemorySource, RecallEngine, RemoteMemoryStore, seed_teaching_store
from memorylib.notebook.common import NO_ERROR, typed_attempt
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.timestamps import TEACHING_AS_OF

__all__ = [
    "EXERCISE_QUESTIONS",
    "EXERCISE_STEPS",
    "check_retraction_predictions",
    "exercise_truth",
]

_SOURCE = MemorySource(
    "review-2026-08-02", "design_review", "memory design review", "2026-08-02T09:00:00Z"
)

# -- the exercise: predict what six retractions leave behind ------------------------------------

# (target, retraction_id), retracted in this order on a fresh teaching store
# (profile-001 and conversation-001..006: 7 lines); step 4 targets a retraction.
_STEPS = (
    ("profile-001", "r-1"),
    ("conversation-005", "r-2"),
    ("conversation-005", "r-3"),
    ("r-2", "r-4"),
    ("conversation-002", "r-5"),
    ("conversation-006", "r-6"),
)
# step -> the call, as shown to the student (exercise_truth runs exactly these)
EXERCISE_STEPS: dict[str, str] = {
    str(step): f'store.retract("{target}", reason=..., source=..., retraction_id="{rid}")'
    for step, (target, rid) in enumerate(_STEPS, start=1)
}

EXERCISE_QUESTIONS: dict[str, str] = {
    "lines": "len(store.read_all()) after the six steps (an int)",
    "returned": "the memory_id of the record step 3 returns (a str)",
    "profile": "store.latest_profile(): its memory_id, or None",
    "searched": 'RecallEngine(store).recall("memory").searched_records (an int)',
    "retracted": 'RecallEngine(store).recall("memory").retracted_records (an int)',
}

_HINTS = {
    "lines": "count what each step appends: a repeated retraction returns the first one, "
    "and a refused call writes nothing.",
    "returned": "retracting the same record twice is idempotent: which record comes back?",
    "profile": "profile selection skips a retracted profile. Is there another one left?",
    "searched": "only CONVERSATION records are searched, and retracted ones are not.",
    "retracted": "it counts the conversation records the search skipped because they are "
    "retracted: is a profile ever searched?",
}


def exercise_truth(*, as_of: str = TEACHING_AS_OF) -> dict[str, int | str | None]:
    """Run ``EXERCISE_STEPS`` on a fresh teaching store in a temporary directory and
    answer ``EXERCISE_QUESTIONS``. A refused step (step 4) is expected and skipped."""
    with tempfile.TemporaryDirectory(prefix="memorylib-07b-") as tmp:
        store = RemoteMemoryStore(Path(tmp) / "store.jsonl")
        seed_teaching_store(store)
        returned: dict[str, str] = {}
        for step, (target, rid) in enumerate(_STEPS, start=1):
            error, message = typed_attempt(
                lambda target=target, rid=rid: (
                    store.retract(
                        target, reason="exercise", source=_SOURCE, retraction_id=rid
                    ).memory_id
                )
            )
            returned[str(step)] = message if error == NO_ERROR else error
        result = RecallEngine(store).recall("memory", query_id="q-07b-exercise", as_of=as_of)
        profile = store.latest_profile()
        return {
            "lines": len(store.read_all()),
            "returned": returned["3"],
            "profile": None if profile is None else profile.memory_id,
            "searched": result.searched_records,
            "retracted": result.retracted_records,
        }


def _same(given: object, expected: int | str | None) -> bool:
    if isinstance(expected, int):
        return type(given) is int and given == expected  # not a bool, not "10"
    if expected is None:
        return given is None or (isinstance(given, str) and given.strip().lower() == "none")
    return isinstance(given, str) and given.strip() == expected


def check_retraction_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 07b: ``answer`` maps each key of ``EXERCISE_QUESTIONS`` to
    the predicted value. Right when all are right; wrong with one hint per wrong key; not
    answered while the placeholder ``...`` (or a ``...`` value) is there."""

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer, EXERCISE_QUESTIONS, f"a dict with the keys {list(EXERCISE_QUESTIONS)}"
        )
        truth = exercise_truth()
        mistakes = grade_labels(truth, given, _HINTS, same=_same)
        if mistakes is not None:
            return mistakes
        return right(
            f"All {len(truth)} right: {truth}. The file keeps every line; recall and profile "
            "selection read the retractions."
        )

    return check_value(
        answer,
        judge,
        placeholder="a dict with a value for each of the keys "
        '"lines", "returned", "profile", "searched" and "retracted"',
    )
