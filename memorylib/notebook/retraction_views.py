"""Views for notebook 07b, retraction: hide a record from recall, keep the evidence.

``store.retract(memory_id, ...)`` appends a RETRACTION record (beyond the chapter: see
CONTRACT.md). The target leaves recall and profile selection; ``read_all()`` keeps
every line, so the audit trail is whole. These pure functions show a recall before and
after (``recall_summary_frame``), the retractions the store refuses, the trail as a
table (``audit_frame``) and as a strip of file lines with arcs from each retraction to
its target (``retraction_timeline``), and grade the "Your turn" predictions
(``check_retraction_predictions``) by running the exercise's steps on a fresh store.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RecallResult,
    RemoteMemoryStore,
    StoredMemory,
    seed_teaching_store,
)
from memorylib.notebook.common import NO_ERROR
from memorylib.notebook.common import typed_attempt as attempt
from memorylib.notebook.exercises import (
    CheckResult,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.timestamps import CHAPTER_CLOCK

__all__ = [
    "ACCOUNT_SOURCE",
    "EXERCISE_QUESTIONS",
    "EXERCISE_STEPS",
    "REVIEW_SOURCE",
    "add_newer_profile",
    "audit_frame",
    "check_retraction_predictions",
    "exercise_questions_frame",
    "exercise_steps_frame",
    "exercise_truth",
    "recall_summary_frame",
    "retraction_errors_frame",
    "retraction_timeline",
]


REVIEW_SOURCE = MemorySource(
    "review-2026-08-02", "design_review", "memory design review", "2026-08-02T09:00:00Z"
)
ACCOUNT_SOURCE = MemorySource(
    "ticket-4711",
    "support_ticket",
    "profile imported from the wrong account",
    "2026-08-02T09:30:00Z",
)


def add_newer_profile(store: RemoteMemoryStore) -> StoredMemory:
    """Append ``profile-002``, a snapshot newer than the seeded ``profile-001``."""
    return store.append(
        kind=MemoryKind.PROFILE,
        memory_id="profile-002",
        content="Frontend engineer; prefers long answers with diagrams.",
        summary="Frontend engineer; prefers long answers.",
        source=MemorySource(
            "profile-snapshot-002",
            "profile_snapshot",
            "remote profile snapshot",
            "2026-08-01T08:00:00Z",
        ),
        stored_at="2026-08-01T08:00:00Z",
    )


def recall_summary_frame(results: Mapping[str, RecallResult]) -> pd.DataFrame:
    """One row per labelled result: hits, the counts that explain them, and empty_reason."""
    return pd.DataFrame(
        [
            {
                "moment": label,
                "hits": ", ".join(h.memory_id for h in result.hits) or "(none)",
                "searched_records": result.searched_records,
                "candidate_records": result.candidate_records,
                "retracted_records": result.retracted_records,
                "empty_reason": result.empty_reason or "",
            }
            for label, result in results.items()
        ]
    )


def retraction_errors_frame(store: RemoteMemoryStore) -> pd.DataFrame:
    """The three retractions the store refuses, run against ``store`` (which must hold
    ``retraction-001``); none of them writes a line."""
    calls: list[tuple[str, Callable[[], object]]] = [
        (
            'retract("conversation-999")  # not in the store',
            lambda: store.retract("conversation-999", reason="typo", source=REVIEW_SOURCE),
        ),
        (
            'retract("retraction-001")  # a retraction',
            lambda: store.retract("retraction-001", reason="undo", source=REVIEW_SOURCE),
        ),
        (
            'append(kind="retraction", ...)',
            lambda: store.append(kind="retraction", content="x", summary="x", source=REVIEW_SOURCE),
        ),
    ]
    rows = [(call, *attempt(action)) for call, action in calls]
    return pd.DataFrame(rows, columns=["call", "error", "message"])


def audit_frame(store: RemoteMemoryStore) -> pd.DataFrame:
    """Every record in file order with what hides it: the full audit trail, nothing removed."""
    records = store.read_all()
    hidden_by = {r.retracts: r.memory_id for r in records if r.kind is MemoryKind.RETRACTION}
    return pd.DataFrame(
        [
            {
                "line": line,
                "memory_id": r.memory_id,
                "kind": r.kind.value,
                "retracts": r.retracts or "",
                "captured_at": r.source.captured_at,
                "hidden_by": hidden_by.get(r.memory_id, ""),
            }
            for line, r in enumerate(records, start=1)
        ]
    )


_KIND_STYLE = {
    "profile": ("#d95f02", "s"),
    "conversation": ("#1b9e77", "o"),
    "retraction": ("#7570b3", "X"),
}


def retraction_timeline(store: RemoteMemoryStore, *, title: str = "") -> Figure:
    """The store file as a strip of lines in append order, with arcs from each retraction
    back to the record it hides (drawn hollow). Nothing is ever removed from the strip.

    Labels are memory ids (ASCII: no CJK font needed).
    """
    records = store.read_all()
    hidden = {r.retracts for r in records if r.kind is MemoryKind.RETRACTION}
    line_of = {r.memory_id: line for line, r in enumerate(records, start=1)}
    with plt.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, ax = plt.subplots(figsize=(7.6, 3.3))
        ax.plot(
            [0.6, len(records) + 0.4],
            [0, 0],
            color="#d9d9d9",
            linewidth=8,
            solid_capstyle="round",
            zorder=1,
        )
        for line, r in enumerate(records, start=1):
            color, marker = _KIND_STYLE[r.kind.value]
            face = "white" if r.memory_id in hidden else color
            ax.scatter(
                [line],
                [0],
                marker=marker,
                s=110,
                facecolors=face,
                edgecolors=color,
                linewidths=1.8,
                zorder=3,
            )
            if r.kind is MemoryKind.RETRACTION and r.retracts in line_of:
                ax.add_patch(
                    FancyArrowPatch(
                        (line, 0.08),
                        (line_of[r.retracts], 0.08),
                        connectionstyle="arc3,rad=0.45",
                        arrowstyle="-|>",
                        mutation_scale=12,
                        color=color,
                        linewidth=1.3,
                        zorder=2,
                    )
                )
        ax.set_xticks(
            range(1, len(records) + 1),
            [f"{line}  {r.memory_id}" for line, r in enumerate(records, start=1)],
            rotation=35,
            ha="right",
            fontsize=8.5,
        )
        ax.set_yticks([])
        ax.spines[["left", "top", "right"]].set_visible(False)
        span = max(
            (
                abs(line_of[r.memory_id] - line_of[r.retracts])
                for r in records
                if r.kind is MemoryKind.RETRACTION and r.retracts in line_of
            ),
            default=1,
        )
        ax.set_ylim(-0.3, 0.3 + 0.25 * span)
        ax.set_xlim(0.4, len(records) + 0.6)
        ax.set_xlabel("file line (append order): the audit trail")
        handles = [
            plt.Line2D([], [], color=c, marker=m, linestyle="", label=k)
            for k, (c, m) in _KIND_STYLE.items()
        ]
        handles.append(
            plt.Line2D(
                [],
                [],
                color="#555555",
                marker="o",
                markerfacecolor="white",
                linestyle="",
                label="hidden by a retraction",
            )
        )
        ax.legend(handles=handles, loc="upper left", fontsize=8, frameon=False, ncol=2)
        n_hidden = sum(1 for r in records if r.memory_id in hidden)
        ax.set_title(title or f"{len(records)} lines, {n_hidden} hidden, 0 deleted")
        fig.tight_layout()
    return fig


# -- the exercise: predict what five retractions leave behind ------------------------------------

# (target, retraction_id), retracted in this order on a fresh teaching store
# (profile-001 and conversation-001..006: 7 lines); step 4 targets a retraction.
_STEPS = (
    ("profile-001", "r-1"),
    ("conversation-005", "r-2"),
    ("conversation-005", "r-3"),
    ("r-2", "r-4"),
    ("conversation-002", "r-5"),
)
# step -> the call, as shown to the student (exercise_truth runs exactly these)
EXERCISE_STEPS: dict[str, str] = {
    str(step): f'store.retract("{target}", reason=..., source=..., retraction_id="{rid}")'
    for step, (target, rid) in enumerate(_STEPS, start=1)
}

EXERCISE_QUESTIONS: dict[str, str] = {
    "lines": "len(store.read_all()) after the five steps (an int)",
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


def exercise_steps_frame() -> pd.DataFrame:
    """The exercise's five steps, in the order they run."""
    return pd.DataFrame(list(EXERCISE_STEPS.items()), columns=["step", "call"])


def exercise_questions_frame() -> pd.DataFrame:
    """The exercise's questions: the key to answer under, and what to predict."""
    return pd.DataFrame(list(EXERCISE_QUESTIONS.items()), columns=["key", "predict"])


def exercise_truth(*, as_of: str = CHAPTER_CLOCK) -> dict[str, int | str | None]:
    """Run ``EXERCISE_STEPS`` on a fresh teaching store in a temporary directory and
    answer ``EXERCISE_QUESTIONS``. A refused step (step 4) is expected and skipped."""
    with tempfile.TemporaryDirectory(prefix="memorylib-07b-") as tmp:
        store = RemoteMemoryStore(Path(tmp) / "store.jsonl")
        seed_teaching_store(store)
        returned: dict[str, str] = {}
        for step, (target, rid) in enumerate(_STEPS, start=1):
            error, message = attempt(
                lambda target=target, rid=rid: (
                    store.retract(
                        target, reason="exercise", source=REVIEW_SOURCE, retraction_id=rid
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
        answer, judge, placeholder='a dict like {"lines": 0, "returned": "r-0", ...}'
    )
