"""Notebook 07b's self-check: six retractions (beyond the chapter) run here on a fresh store."""

import tempfile
from contextlib import suppress
from pathlib import Path

from memorylib import MemorySource, RecallEngine, RemoteMemoryStore, seed_teaching_store
from memorylib.errors import RemoteMemoryError
from memorylib.notebook import exercises as ex
from memorylib.notebook.messages import say
from memorylib.timestamps import TEACHING_AS_OF

# (target, retraction_id), retracted in this order on a fresh teaching store (profile-001 and
# conversation-001..006: 7 lines); step 4 targets a retraction. The notebook's table shows them.
EXERCISE_STEPS = (
    ("profile-001", "r-1"),
    ("conversation-005", "r-2"),
    ("conversation-005", "r-3"),
    ("r-2", "r-4"),
    ("conversation-002", "r-5"),
    ("conversation-006", "r-6"),
)


def exercise_truth() -> dict[str, int | str | None]:
    """The five answers, after ``EXERCISE_STEPS`` (a refused step writes nothing)."""
    review = MemorySource("review-2026-08-02", "design_review", "review", "2026-08-02T09:00:00Z")
    with tempfile.TemporaryDirectory(prefix="memorylib-07b-") as tmp:
        store = RemoteMemoryStore(Path(tmp) / "store.jsonl")
        seed_teaching_store(store)
        returned = {}
        for target, rid in EXERCISE_STEPS:
            with suppress(RemoteMemoryError):  # step 4 is refused
                returned[rid] = store.retract(target, reason="x", source=review, retraction_id=rid)
        result = RecallEngine(store).recall("memory", query_id="q-07b", as_of=TEACHING_AS_OF)
        profile = store.latest_profile()
        return {
            "lines": len(store.read_all()),
            "returned": returned["r-3"].memory_id,
            "profile": profile and profile.memory_id,
            "searched": result.searched_records,
            "retracted": result.retracted_records,
        }


def check_retraction_predictions(answer: object) -> ex.CheckResult:
    """``answer`` maps each of the five keys to its prediction: one hint per wrong key."""

    def same(given: object, expected: int | str | None) -> bool:
        if isinstance(expected, int):
            return type(given) is int and given == expected  # not a bool, not "10"
        if isinstance(given, str):  # None may be spelled "None"
            given = None if given.strip().lower() == "none" else given.strip()
        return given == expected

    def judge(answer: object) -> ex.CheckResult:
        truth = exercise_truth()  # its keys are the notebook's five questions
        given = ex.expect_labels(answer, truth, say("retraction_views.described", keys=list(truth)))
        hints = {key: say(f"retraction_views.hint.{key}") for key in truth}
        right = say("retraction_views.right", count=len(truth), truth=truth)
        return ex.grade_labels(truth, given, hints, same=same) or ex.right(right)

    return ex.check_value(answer, judge, placeholder=say("retraction_views.placeholder"))
