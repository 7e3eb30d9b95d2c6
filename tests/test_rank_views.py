"""memorylib.notebook.rank_views: the pure views behind notebook 05 (stable rank)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from memorylib import (
    ScoringPolicy,
    build_recall_candidates,
    normalize_recall_query,
    recall_pipeline,
    stable_rank_recall_candidates,
)
from memorylib.notebook import rank_views as rv

from .conftest import AS_OF, add

SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "05_stable_rank.py"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def exercise():
    query, records = rv.exercise_candidates()
    return query, records, build_recall_candidates(query, records)


def test_rank_all_agrees_with_the_library_and_keeps_everyone(store) -> None:
    for i in range(12):
        add(
            store,
            f"m-{i:02d}",
            "alpha beta" if i % 3 else "alpha",
            f"2026-07-{1 + i % 4:02d}T12:00:00Z",
        )
    query = normalize_recall_query(
        "alpha beta", user_scope=store.user_scope, limit=10, query_id="q", issued_at=AS_OF
    )
    candidates = build_recall_candidates(query, store.read_all())
    ranked = rv.rank_all(query, candidates, as_of=AS_OF)
    assert len(ranked) == 12
    hits = stable_rank_recall_candidates(query, candidates, as_of=AS_OF)
    assert [s.memory_id for s in ranked[:10]] == [h.memory_id for h in hits]
    assert [s.key for s in ranked] == sorted(s.key for s in ranked)


def test_deciding_key_names_the_first_difference() -> None:
    assert rv.deciding_key(None, (-1.0, -1.0, -5, "a")) == "—"
    assert rv.deciding_key((-0.9, -1.0, -5, "a"), (-0.8, -1.0, -5, "a")) == "total"
    assert rv.deciding_key((-0.9, -1.0, -5, "a"), (-0.9, -0.5, -5, "a")) == "lexical_coverage"
    assert rv.deciding_key((-0.9, -1.0, -5, "a"), (-0.9, -1.0, -4, "a")) == "captured_at"
    assert rv.deciding_key((-0.9, -1.0, -5, "a"), (-0.9, -1.0, -5, "b")) == "memory_id"
    assert rv.deciding_key((-0.9, -1.0, -5, "a"), (-0.9, -1.0, -5, "a")) == "identical"


def test_sort_key_frame_shows_each_tie_break(exercise) -> None:
    query, _, candidates = exercise
    frame = rv.sort_key_frame(rv.rank_all(query, candidates, as_of=rv.EXERCISE_AS_OF))
    assert list(frame.columns) == [
        "rank",
        "1 total ↓",
        "2 lexical_coverage ↓",
        "3 captured_at ↓",
        "4 memory_id ↑",
        "decided by",
    ]
    assert list(frame["4 memory_id ↑"]) == ["note-d", "note-c", "note-a", "note-b", "note-e"]
    assert list(frame["decided by"]) == ["—", "total", "captured_at", "memory_id", "total"]
    assert (
        len(rv.sort_key_frame(rv.rank_all(query, candidates, as_of=rv.EXERCISE_AS_OF), limit=2))
        == 2
    )


def test_the_coverage_key_decides_an_equal_total() -> None:
    # 0.5 * 1.0 + 0.5 * 0.5 == 0.5 * 0.5 + 0.5 * 1.0: coverage breaks the tie
    records = rv.in_memory_records(
        [
            ("m-fresh-half", "alpha", "2026-08-02T12:00:00Z"),
            ("m-old-full", "alpha beta", "2026-07-03T12:00:00Z"),
        ]
    )
    query = normalize_recall_query(
        "alpha beta", user_scope=records[0].user_scope, query_id="q", issued_at=AS_OF
    )
    ranked = rv.rank_all(
        query,
        build_recall_candidates(query, records),
        as_of=AS_OF,
        policy=ScoringPolicy(0.5, 0.5, 30),
    )
    frame = rv.sort_key_frame(ranked)
    assert list(frame["4 memory_id ↑"]) == ["m-old-full", "m-fresh-half"]
    assert list(frame["decided by"]) == ["—", "lexical_coverage"]


def test_shuffles_never_change_the_stable_ranking(exercise) -> None:
    query, records, _ = exercise
    frame = rv.storage_order_frame(query, records, as_of=rv.EXERCISE_AS_OF, shuffles=8, seed=5)
    assert len(frame) == 9
    assert frame["same as file order"].all()
    assert frame["stable ranking"].nunique() == 1
    assert not frame["naive same"].all()
    again = rv.storage_order_frame(query, records, as_of=rv.EXERCISE_AS_OF, shuffles=8, seed=5)
    assert frame.equals(again)


def test_naive_order_keeps_storage_order_on_ties(exercise) -> None:
    query, records, _ = exercise
    assert rv.naive_order(query, records, as_of=rv.EXERCISE_AS_OF) == (
        "note-d",
        "note-b",
        "note-a",
        "note-c",
        "note-e",
    )
    assert rv.naive_order(query, records[::-1], as_of=rv.EXERCISE_AS_OF) == (
        "note-d",
        "note-c",
        "note-a",
        "note-b",
        "note-e",
    )


def test_monthly_steps_roll_over_the_year_and_clamp_the_day() -> None:
    steps = rv.monthly_steps("2025-11-30T09:00:00Z", "2026-03-30T09:00:00Z")
    assert steps == (
        "2025-11-30T09:00:00Z",
        "2025-12-30T09:00:00Z",
        "2026-01-30T09:00:00Z",
        "2026-02-28T09:00:00Z",
        "2026-03-30T09:00:00Z",
    )
    assert rv.monthly_steps("2026-01-01T00:00:00Z", "2025-12-01T00:00:00Z") == ()


def test_rank_trajectory_replays_the_store_as_it_was() -> None:
    records = rv.in_memory_records(
        [
            ("m-early", "alpha", "2026-01-15T00:00:00Z"),
            ("m-late", "alpha", "2026-03-15T00:00:00Z"),
        ]
    )
    query = normalize_recall_query(
        "alpha", user_scope=records[0].user_scope, query_id="q", issued_at="2026-04-01T00:00:00Z"
    )
    steps = ("2026-02-01T00:00:00Z", "2026-04-01T00:00:00Z")
    frame = rv.rank_trajectory_frame(query, records, steps)
    assert list(frame.loc[frame["step"] == steps[0], "memory_id"]) == ["m-early"]
    assert list(frame.loc[frame["step"] == steps[1], "memory_id"]) == ["m-late", "m-early"]
    assert set(frame["label"]) == {"2026-02-01", "2026-04-01"}
    future = rv.rank_trajectory_frame(query, records, steps, replay=False)
    first = future[future["step"] == steps[0]]
    assert list(first["memory_id"]) == ["m-late", "m-early"]  # a future record at age 0
    assert first.iloc[0]["recency"] == 1.0


def test_weight_trajectory_ranks_by_coverage_at_full_lexical_weight() -> None:
    records = rv.in_memory_records(
        [
            ("m-old-full", "alpha beta", "2026-01-01T00:00:00Z"),
            ("m-new-half", "alpha", "2026-08-01T00:00:00Z"),
        ]
    )
    query = normalize_recall_query(
        "alpha beta", user_scope=records[0].user_scope, query_id="q", issued_at=AS_OF
    )
    frame = rv.weight_trajectory_frame(query, records, as_of=AS_OF, lexical_weights=(1.0, 0.25))
    top = frame[frame["rank"] == 1].set_index("step")["memory_id"]
    assert top[1.0] == "m-old-full"
    assert top[0.25] == "m-new-half"
    assert list(dict.fromkeys(frame["label"])) == ["1/0", "0.25/0.75"]


def test_bump_chart_and_rank_view(exercise) -> None:
    query, records, _ = exercise
    steps = rv.monthly_steps("2026-09-30T09:00:00Z", "2026-11-30T09:00:00Z")
    trajectory = rv.rank_trajectory_frame(query, records, steps)
    fig = rv.bump_chart(trajectory, top=3, title="t")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "3", "out"]
    assert ax.get_title() == "t"
    frame, fig2 = rv.rank_view(trajectory, steps[-1], top=3)
    assert list(frame["rank"]) == [1, 2, 3]
    assert list(frame["memory_id"]) == list(rv.exercise_order()[:3])
    assert len(fig2.axes[0].patches) == 1  # the highlighted step


def test_as_of_explorer_builds_its_widgets(exercise) -> None:
    query, records, _ = exercise
    steps = rv.monthly_steps("2026-09-30T09:00:00Z", "2026-11-30T09:00:00Z")
    box = rv.as_of_explorer(rv.rank_trajectory_frame(query, records, steps))
    slider = box.children[0]
    assert slider.value == steps[-1]
    assert [label for label, _ in slider.options] == [s[:10] for s in steps]
    assert bytes(box.children[1].value).startswith(b"\x89PNG")
    assert "note-d" in box.children[2].value


def test_exercise_order_is_the_library_order(exercise) -> None:
    query, records, _ = exercise
    result = recall_pipeline(query, records[::-1], as_of=rv.EXERCISE_AS_OF)
    assert rv.exercise_order() == tuple(h.memory_id for h in result.hits)
    frame = rv.exercise_frame()
    assert list(frame["memory_id"]) == [r.memory_id for r in records]


def test_check_order_answer_says_right_wrong_or_not_yet() -> None:
    right = list(rv.exercise_order())
    assert str(rv.check_order_answer(...)).startswith("⏳")
    assert str(rv.check_order_answer(right)).startswith("✅")
    assert str(rv.check_order_answer(tuple(right))).startswith("✅")
    naive = str(rv.check_order_answer(["note-d", "note-b", "note-a", "note-c", "note-e"]))
    assert naive.startswith("❌") and "storage order" in naive
    assert "exactly once" in str(rv.check_order_answer(["note-d"]))
    assert str(rv.check_order_answer("note-d")).startswith("❌")
    swapped = str(rv.check_order_answer(["note-d", "note-a", "note-c", "note-b", "note-e"]))
    assert swapped.startswith("❌") and "captured_at" in swapped


def load_solution():
    spec = importlib.util.spec_from_file_location("solution_05", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_solution_passes_the_notebook_check() -> None:
    solution = load_solution()
    assert str(rv.check_order_answer(solution.my_order)).startswith("✅")
    assert str(rv.check_order_answer(list(reversed(solution.my_order)))).startswith("❌")


def test_query_for_keeps_the_labelled_id_and_clock() -> None:
    from types import SimpleNamespace

    labelled = SimpleNamespace(query_id="q-99", text="  Cache   TTL ", as_of=AS_OF)
    query = rv.query_for(labelled, "0123456789abcdef", limit=3)
    assert (query.query_id, query.issued_at, query.limit) == ("q-99", AS_OF, 3)
    assert query.terms == ("cache", "ttl")


def test_top_ids_frame_lists_the_leaders_per_step() -> None:
    records = rv.in_memory_records(
        [
            ("m-old-full", "alpha beta", "2026-01-01T00:00:00Z"),
            ("m-new-half", "alpha", "2026-08-01T00:00:00Z"),
        ]
    )
    query = normalize_recall_query(
        "alpha beta", user_scope=records[0].user_scope, query_id="q", issued_at=AS_OF
    )
    frame = rv.weight_trajectory_frame(query, records, as_of=AS_OF, lexical_weights=(1.0, 0.25))
    table = rv.top_ids_frame(frame, top=2)
    assert list(table.index) == ["1/0", "0.25/0.75"]
    assert list(table.columns) == ["rank 1", "rank 2"]
    assert list(table["rank 1"]) == ["m-old-full", "m-new-half"]
    steps = ("2025-12-01T00:00:00Z", "2026-02-01T00:00:00Z")
    early = rv.top_ids_frame(rv.rank_trajectory_frame(query, records, steps), top=2)
    assert list(early.loc["2025-12-01"]) == ["", ""]  # nothing stored yet
    assert list(early.loc["2026-02-01"]) == ["m-old-full", ""]


def test_bump_chart_keeps_steps_where_nothing_was_recalled() -> None:
    records = rv.in_memory_records([("m-late", "alpha", "2026-03-15T00:00:00Z")])
    query = normalize_recall_query(
        "alpha", user_scope=records[0].user_scope, query_id="q", issued_at="2026-04-01T00:00:00Z"
    )
    steps = ("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
    trajectory = rv.rank_trajectory_frame(query, records, steps)
    assert len(trajectory) == 1
    fig = rv.bump_chart(trajectory, top=2, highlight=steps[0])
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["2026-02-01", "2026-03-01", "2026-04-01"]
    frame, _ = rv.rank_view(trajectory, steps[0], top=2)
    assert frame.empty
