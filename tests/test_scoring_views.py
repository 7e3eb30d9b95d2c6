"""memorylib.notebook.scoring_views: the pure views behind notebook 04 (score)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from memorylib import (
    RemoteMemoryValidationError,
    ScoringPolicy,
    build_recall_candidates,
    normalize_recall_query,
    stable_rank_recall_candidates,
)
from memorylib.notebook import scoring_views as sv

from .conftest import AS_OF, add

SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "04_scoring.py"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def layered(store):
    query = normalize_recall_query(
        "  LAYERED   Memory  ", user_scope=store.user_scope, query_id="q-t", issued_at=AS_OF
    )
    return query, build_recall_candidates(query, store.read_all())


def test_the_explorer_default_is_the_chapter_example() -> None:
    b = sv.hypothetical_breakdown(sv.ScoringState())
    assert (b.lexical_coverage, b.recency) == (1.0, 0.967742)
    assert (b.lexical_contribution, b.recency_contribution, b.total) == (0.85, 0.145161, 0.995161)


def test_hypothetical_breakdown_follows_the_state() -> None:
    b = sv.hypothetical_breakdown(sv.ScoringState(matched=3, query_terms=4, age_days=15))
    assert b.lexical_coverage == 0.75
    assert b.recency == pytest.approx(1 / 1.5, abs=1e-6)
    assert b.total == pytest.approx(0.85 * 0.75 + 0.15 / 1.5, abs=1e-6)
    with pytest.raises(ValueError):
        sv.hypothetical_breakdown(sv.ScoringState(matched=3, query_terms=2))
    with pytest.raises(ValueError):
        sv.hypothetical_breakdown(sv.ScoringState(age_days=-1))


def test_score_frame_on_the_teaching_store(teaching_store) -> None:
    query, candidates = layered(teaching_store)
    frame = sv.score_frame(query, candidates, as_of=AS_OF)
    assert list(frame["memory_id"]) == ["conversation-003"]
    row = frame.iloc[0]
    assert (row["total"], row["recency"], row["age_days"]) == (0.995161, 0.967742, 1.0)
    assert row["matched"] == "2/2"
    assert row["matched_terms"] == "layered, memory"


def test_hits_frame_shows_the_ranked_hits_only(teaching_store) -> None:
    query, candidates = layered(teaching_store)
    hits = stable_rank_recall_candidates(query, candidates, as_of=AS_OF)
    frame = sv.hits_frame(hits)
    assert list(frame["memory_id"]) == ["conversation-003"]
    row = frame.iloc[0]
    assert (row["rank"], row["matched"], row["total"]) == (1, "2/2", 0.995161)
    assert row["captured_at"] == hits[0].provenance.captured_at
    assert sv.hits_frame(()).empty


def test_the_q11_hits_do_not_show_the_exercise_record() -> None:
    # notebook 04 shows q-11's five hits before its exercise: the answer is not among them
    from memorylib import recall_pipeline
    from memorylib.datasets import course_records

    query, _candidate, as_of = sv._exercise_inputs()
    records = course_records("mei.lin@northwind.example")
    frame = sv.hits_frame(recall_pipeline(query, records, as_of=as_of).hits)
    assert len(frame) == 5 and sv.EXERCISE_MEMORY_ID not in set(frame["memory_id"])
    assert frame["total"].min() > sv.exercise_breakdown().total


def test_score_frame_keeps_storage_order_unless_asked(store) -> None:
    add(store, "m-old", "release notes", "2026-06-01T12:00:00Z")
    add(store, "m-new", "release notes", "2026-08-01T12:00:00Z")
    add(store, "m-half", "release", "2026-08-01T12:00:00Z")
    query = normalize_recall_query(
        "release notes", user_scope=store.user_scope, query_id="q", issued_at=AS_OF
    )
    candidates = build_recall_candidates(query, store.read_all())
    assert list(sv.score_frame(query, candidates, as_of=AS_OF)["memory_id"]) == [
        "m-old",
        "m-new",
        "m-half",
    ]
    ordered = sv.score_frame(query, candidates, as_of=AS_OF, sort_by_total=True)
    assert list(ordered["memory_id"]) == ["m-new", "m-old", "m-half"]
    assert list(ordered.index) == [0, 1, 2]


def test_breakdown_fields_frame_names_every_field() -> None:
    frame = sv.breakdown_fields_frame(sv.hypothetical_breakdown(sv.ScoringState()))
    values = dict(zip(frame["field"], frame["value"], strict=True))
    assert values["total"] == "0.995161"
    assert values["recency_contribution"] == "0.145161"
    assert values["query_term_count"] == "2"
    assert "1 / (1 + age_days / 30)" in set(frame["computed as"])


def test_compare_with_library_flags_matches_and_mismatches() -> None:
    b = sv.hypothetical_breakdown(sv.ScoringState())
    recency = 1 / (1 + 1 / 30)
    by_hand = {
        "lexical_coverage": 1.0,
        "recency": recency,
        "lexical_contribution": 0.85,
        "recency_contribution": 0.15 * recency,
        "total": 0.85 + 0.15 * recency,
    }
    assert sv.compare_with_library(by_hand, b)["match"].all()
    wrong = dict(by_hand, total=0.85 + 0.15)
    frame = sv.compare_with_library(wrong, b)
    assert list(frame.loc[~frame["match"], "field"]) == ["total"]
    with pytest.raises(KeyError, match="lexical_coverage"):
        sv.compare_with_library({"total": 1.0}, b)


def test_policy_comparison_ranks_like_the_library(store) -> None:
    add(store, "m-stale-full", "alpha beta gamma", "2026-01-01T12:00:00Z")
    add(store, "m-fresh-part", "alpha beta", "2026-08-02T12:00:00Z")
    add(store, "m-mid", "alpha", "2026-07-01T12:00:00Z")
    query = normalize_recall_query(
        "alpha beta gamma", user_scope=store.user_scope, query_id="q", issued_at=AS_OF
    )
    candidates = build_recall_candidates(query, store.read_all())
    policies = {"chapter": ScoringPolicy(), "fresh": ScoringPolicy(0.5, 0.5, 7)}
    frame = sv.policy_comparison_frame(query, candidates, as_of=AS_OF, policies=policies)
    for label, policy in policies.items():
        hits = stable_rank_recall_candidates(query, candidates, as_of=AS_OF, policy=policy)
        by_rank = frame.sort_values(f"rank · {label}")["memory_id"]
        assert list(by_rank) == [h.memory_id for h in hits]
        assert list(frame.sort_values(f"rank · {label}")[f"total · {label}"]) == [
            h.score_breakdown.total for h in hits
        ]
    assert frame.iloc[0]["memory_id"] == "m-stale-full"  # rows follow the first policy
    assert frame.set_index("memory_id").loc["m-fresh-part", "rank · fresh"] == 1
    with pytest.raises(ValueError):
        sv.policy_comparison_frame(query, candidates, as_of=AS_OF, policies={})


def test_overtake_frame_matches_the_algebra_and_the_library() -> None:
    frame = sv.overtake_frame(10).set_index("query_terms")
    assert not frame.loc[1:5, "fresh_can_win"].any()
    assert frame.loc[6:10, "fresh_can_win"].all()
    assert frame.loc[6, "one_term_gap"] == round(0.85 / 6, 6)
    assert frame.loc[6, "stale_age_needed"] == 510.0
    assert math.isnan(frame.loc[5, "stale_age_needed"])
    for n in (6, 8, 10):
        needed = frame.loc[n, "stale_age_needed"]
        fresh = sv.hypothetical_breakdown(
            sv.ScoringState(matched=n - 1, query_terms=n, age_days=0)
        ).total
        older = sv.hypothetical_breakdown(
            sv.ScoringState(matched=n, query_terms=n, age_days=needed + 1)
        ).total
        younger = sv.hypothetical_breakdown(
            sv.ScoringState(matched=n, query_terms=n, age_days=needed - 1)
        ).total
        assert fresh > older
        assert fresh < younger


def test_recency_table_and_half_life() -> None:
    table = sv.recency_table(ages=(0, 7, 30, 90), windows=(7, 30, 90))
    assert list(table.columns) == ["window 7 d", "window 30 d", "window 90 d"]
    assert table.loc[7.0, "window 7 d"] == 0.5
    assert table.loc[30.0, "window 30 d"] == 0.5
    assert table.loc[90.0, "window 90 d"] == 0.5
    assert (table.loc[0.0] == 1.0).all()


def test_recency_figure_draws_one_curve_per_window() -> None:
    fig = sv.recency_decay_figure((7, 30, 90), mark_age=1)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["window 7 d", "window 30 d", "window 90 d"]  # the chapter states none


def test_contribution_figure_stacks_two_bars_per_candidate(teaching_store) -> None:
    query, candidates = layered(teaching_store)
    frame = sv.score_frame(query, candidates, as_of=AS_OF)
    fig = sv.contribution_figure(frame, title="t")
    assert len(fig.axes[0].patches) == 2 * len(frame)
    assert fig.axes[0].get_title() == "t"


def test_scoring_view_returns_frame_and_chart() -> None:
    frame, fig = sv.scoring_view(sv.ScoringState(window_days=7, age_days=45))
    values = dict(zip(frame["field"], frame["value"], strict=True))
    assert values["recency"] == f"{1 / (1 + 45 / 7):.6f}"
    assert values["total"] in fig.axes[0].get_title()
    with pytest.raises(RemoteMemoryValidationError):
        sv.scoring_view(sv.ScoringState(lexical_weight=0, recency_weight=0))


def test_scoring_explorer_builds_its_widgets() -> None:
    box = sv.scoring_explorer()
    assert len(box.children) == 6  # four sliders, the table and the chart
    assert "0.995161" in box.children[4].value
    assert bytes(box.children[5].value).startswith(b"\x89PNG")
    box.children[0].value = 0
    box.children[1].value = 0
    assert "rejects this policy" in box.children[4].value


def test_check_total_answer_says_right_wrong_or_not_yet() -> None:
    b = sv.hypothetical_breakdown(sv.ScoringState(matched=3, query_terms=4, age_days=15))
    assert str(sv.check_total_answer(..., b)).startswith("⏳")
    assert str(sv.check_total_answer(b.total, b)).startswith("✅")
    assert str(sv.check_total_answer(0.85 * 0.75 + 0.15 / 1.5, b)).startswith("✅")
    assert str(sv.check_total_answer(0.5, b)).startswith("❌")
    assert "recency" in str(sv.check_total_answer(b.lexical_contribution, b))
    assert "swapped" in str(sv.check_total_answer(0.15 * 0.75 + 0.85 / 1.5, b))
    assert str(sv.check_total_answer("0.7", b)).startswith("❌")
    assert str(sv.check_total_answer(True, b)).startswith("❌")


def test_check_total_answer_names_the_likely_mistakes() -> None:
    b = sv.hypothetical_breakdown(sv.ScoringState(matched=3, query_terms=7, age_days=15.5))
    assert "count every query term" in str(sv.check_total_answer(0.85 + 0.15 / (1 + 15.5 / 30), b))
    whole_days = 0.85 * 3 / 7 + 0.15 / (1 + 15 / 30)
    assert "not whole days" in str(sv.check_total_answer(whole_days, b))


def load_solution():
    spec = importlib.util.spec_from_file_location("solution_04", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_solution_passes_the_notebook_check() -> None:
    solution = load_solution()
    breakdown = sv.exercise_breakdown()
    assert str(sv.check_total_answer(solution.my_total, breakdown)).startswith("✅")
    assert str(sv.check_total_answer(solution.my_total + 0.01, breakdown)).startswith("❌")
