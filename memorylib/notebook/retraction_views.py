"""The self-check of notebook 07b: six retractions (beyond the chapter, CONTRACT.md) run here for
real on a fresh teaching store, so that no answer is on the student's screen."""

from __future__ import annotations

import tempfile
from pathlib import Path

from memorylib import MemorySource, RecallEngine, RemoteMemoryStore, seed_teaching_store
from memorylib.notebook import exercises as ex
from memorylib.notebook.common import typed_attempt
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
# the five questions of the notebook's second table, each with its hint
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
    """Run ``EXERCISE_STEPS`` on a fresh teaching store in a temporary folder (a refused step
    writes nothing) and answer the five questions."""
    review = MemorySource("review-2026-08-02", "design_review", "review", "2026-08-02T09:00:00Z")
    with tempfile.TemporaryDirectory(prefix="memorylib-07b-") as tmp:
        store = RemoteMemoryStore(Path(tmp) / "store.jsonl")
        seed_teaching_store(store)
        returned = [
            typed_attempt(
                lambda t=target, r=rid: (
                    store.retract(t, reason="exercise", source=review, retraction_id=r).memory_id
                )
            )[1]
            for target, rid in EXERCISE_STEPS
        ]
        result = RecallEngine(store).recall("memory", query_id="q-07b-exercise", as_of=as_of)
        profile = store.latest_profile()
        return {
            "lines": len(store.read_all()),
            "returned": returned[2],
            "profile": None if profile is None else profile.memory_id,
            "searched": result.searched_records,
            "retracted": result.retracted_records,
        }


def _same(given: object, expected: int | str | None) -> bool:
    if isinstance(expected, int):
        return type(given) is int and given == expected  # not a bool, not "10"
    if isinstance(given, str):  # None may be spelled "None"
        given = None if given.strip().lower() == "none" else given.strip()
    return given == expected


def check_retraction_predictions(answer: object) -> ex.CheckResult:
    """``answer`` maps each of the five keys to its prediction: one hint per wrong key."""

    def judge(answer: object) -> ex.CheckResult:
        given = ex.expect_labels(answer, _HINTS, f"a dict with the keys {list(_HINTS)}")
        truth = exercise_truth()
        return ex.grade_labels(truth, given, _HINTS, same=_same) or ex.right(
            f"All {len(truth)} right: {truth}. The file keeps every line; recall and profile "
            "selection read the retractions."
        )

    keys = '"lines", "returned", "profile", "searched" and "retracted"'
    return ex.check_value(
        answer, judge, placeholder=f"a dict with a value for each of the keys {keys}"
    )
