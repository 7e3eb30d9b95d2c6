"""The views of notebook 03 (candidate): counts, frames and charts agree with stage 2."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from memorylib import (
    MemoryKind,
    MemorySource,
    RemoteMemoryStore,
    build_recall_candidates,
    normalize_recall_query,
    seed_teaching_store,
)
from memorylib.datasets import COURSE_AS_OF, COURSE_USERS, build_course_store, course_records
from memorylib.notebook.candidate_views import (
    COMMON_WORDS,
    EXERCISE_NOISY_TEXT,
    EXERCISE_TARGET,
    candidate_counts,
    candidate_frame,
    candidate_view,
    candidate_widget,
    check_cache_query,
    check_quiet_query,
    counts_frame,
    diagnose,
    match_heatmap,
    match_matrix,
    matched_count_frame,
    strategy_frame,
    style_match_matrix,
    term_candidate_chart,
    term_candidate_frame,
)

AS_OF = "2026-08-02T12:00:00Z"
SOLUTION = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "03_candidates.py"
MEI = COURSE_USERS[0]


@pytest.fixture(scope="module")
def mei() -> tuple:
    records = course_records(MEI)
    return records, records[0].user_scope


@pytest.fixture
def chapter(tmp_path: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl")
    seed_teaching_store(store)
    return store


def query(text: str, scope: str, as_of: str = COURSE_AS_OF):
    return normalize_recall_query(text, user_scope=scope, query_id="q-t", issued_at=as_of)


def test_chapter_counts_and_frame(chapter: RemoteMemoryStore) -> None:
    records = chapter.read_all()
    q = query("  LAYERED   Memory  ", chapter.user_scope, AS_OF)
    counts = candidate_counts(q, records)
    assert counts == {
        "records": 7,
        "profiles": 1,
        "conversations": 6,
        "retracted": 0,
        "searched": 6,
        "candidates": 1,
        "diagnosis": "1 of 6 searched records share a query term",
    }
    frame = candidate_frame(q, records)
    assert list(frame["memory_id"]) == ["conversation-003"]
    assert frame.loc[0, "matched_terms"] == "layered | memory"
    assert (frame.loc[0, "matched"], frame.loc[0, "of"]) == (2, 2)
    assert "score" not in frame.columns and "rank" not in frame.columns


def test_diagnosis_tells_the_empty_results_apart() -> None:
    base = {"records": 3, "searched": 2, "candidates": 0}
    assert diagnose({**base, "records": 0, "searched": 0}).startswith("empty store")
    assert diagnose({**base, "searched": 0}).startswith("nothing searchable")
    assert diagnose(base).startswith("no overlap: 2 records searched")
    assert diagnose({**base, "candidates": 1}) == "1 of 2 searched records share a query term"


def test_counts_frame_for_a_profile_only_store(tmp_path: Path) -> None:
    store = RemoteMemoryStore(tmp_path / "p.jsonl")
    store.append(
        kind=MemoryKind.PROFILE,
        memory_id="p-1",
        content="Works from Lisbon.",
        summary="Lisbon",
        source=MemorySource("ps-1", "profile_snapshot", "p", "2026-01-01T00:00:00Z"),
        stored_at="2026-01-01T00:00:00Z",
    )
    frame = counts_frame(
        [
            ("profile only", "Lisbon", store.read_all(), store.user_scope),
            ("empty", "Lisbon", (), store.user_scope),
        ],
        as_of=COURSE_AS_OF,
    )
    assert list(frame["searched"]) == [0, 0]
    assert list(frame["records"]) == [1, 0]
    assert frame.loc[0, "diagnosis"].startswith("nothing searchable")
    assert frame.loc[1, "diagnosis"].startswith("empty store")


def test_match_matrix_agrees_with_stage_2(mei: tuple) -> None:
    records, scope = mei
    q = query(EXERCISE_NOISY_TEXT, scope)
    matrix = match_matrix(q, records)
    found = build_recall_candidates(q, records)
    assert len(matrix) == found.candidate_records == 40
    assert set(matrix.columns) == set(q.terms)
    for candidate in found.candidates:
        row = matrix.loc[candidate.record.memory_id]
        assert {t for t in matrix.columns if row[t]} == set(candidate.matched_terms)
    matched = matrix.sum(axis=1).tolist()
    assert matched == sorted(matched, reverse=True)  # most matched terms first
    assert list(matrix.columns[:2]) == ["the", "recall"]  # most candidates first
    html = style_match_matrix(matrix, uuid="t").to_html()
    assert "✓" in html and 'id="T_t' in html


def test_term_and_matched_count_frames(mei: tuple) -> None:
    records, scope = mei
    q = query(EXERCISE_NOISY_TEXT, scope)
    per_term = term_candidate_frame(q, records).set_index("term")
    assert per_term.loc["the", "candidates"] == 32
    assert per_term.loc["status", "candidates"] == 1
    assert per_term.loc["the", "common_word"] and not per_term.loc["index", "common_word"]
    assert (per_term["searched"] == 69).all()
    levels = matched_count_frame(q, records)
    assert levels["candidates"].sum() == 40
    assert list(levels["matched_terms"]) == list(range(1, len(q.terms) + 1))


def test_charts(mei: tuple) -> None:
    records, scope = mei
    q = query(EXERCISE_NOISY_TEXT, scope)
    bars = term_candidate_chart(term_candidate_frame(q, records))
    labels = [t.get_text() for t in bars.axes[0].get_yticklabels()]
    assert labels[0] == "the"
    heat = match_heatmap(match_matrix(q, records), highlight=[EXERCISE_TARGET])
    highlighted = [t for t in heat.axes[0].get_yticklabels() if t.get_text() == EXERCISE_TARGET]
    assert highlighted and highlighted[0].get_fontweight() == "bold"


def test_chinese_terms_get_ascii_labels_without_a_cjk_font(mei: tuple) -> None:
    import matplotlib

    records, scope = mei
    q = query("召回结果 cache 失效", scope)
    with matplotlib.rc_context({"font.family": ["DejaVu Sans"]}):
        fig = term_candidate_chart(term_candidate_frame(q, records))
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "cache" in labels
    assert not any("\u4e00" <= c <= "\u9fff" for label in labels for c in label)
    assert sorted(x for x in labels if x.startswith("zh-")) == ["zh-1", "zh-2", "zh-3", "zh-4"]


def test_candidate_view_never_raises(mei: tuple) -> None:
    records, scope = mei
    view = candidate_view("?!", records, user_scope=scope, as_of=COURSE_AS_OF)
    assert view["accepted"] is False and view["error"].startswith("RemoteMemoryValidationError")
    view = candidate_view("index status", records, user_scope=scope, as_of=COURSE_AS_OF)
    assert view["counts"]["candidates"] == 4
    assert view["frame"].loc[0, "memory_id"] == EXERCISE_TARGET  # most matched first


def test_strategy_frame_taught_and_indexed_agree(tmp_path: Path) -> None:
    store = build_course_store(tmp_path)
    frame = strategy_frame(
        store,
        [EXERCISE_NOISY_TEXT, "召回结果 cache 失效", "kubernetes operator"],
        as_of=COURSE_AS_OF,
    )
    assert frame["identical"].all()
    assert frame.loc[2, "hits (teaching)"] == "—"


def test_checker_accepts_the_reference_solution(mei: tuple) -> None:
    records, scope = mei
    answer = runpy.run_path(str(SOLUTION))["quiet_query"]
    verdict = str(check_quiet_query(answer, records, user_scope=scope, as_of=COURSE_AS_OF))
    assert verdict.startswith("✅")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (EXERCISE_NOISY_TEXT, "'the' (32)"),
        ("recall index status", "24 candidates"),
        ("status", "is one term"),  # right by accident: cell 11 shows it makes 1 candidate
        ("Status!", "is one term"),
        ("kubernetes helm", "no longer a candidate"),
        ("!!", "rejects"),
        (42, "str"),
    ],
)
def test_checker_rejects_wrong_answers(mei: tuple, answer: object, hint: str) -> None:
    records, scope = mei
    verdict = str(check_quiet_query(answer, records, user_scope=scope, as_of=COURSE_AS_OF))
    assert verdict.startswith("❌") and hint in verdict


def test_stretch_checker_accepts_the_solution_and_rejects_wrong_answers(mei: tuple) -> None:
    records, scope = mei
    solution = runpy.run_path(str(SOLUTION))

    def check(answer: object) -> str:
        return str(check_cache_query(answer, records, user_scope=scope, as_of=COURSE_AS_OF))

    assert check(solution["cache_query"]).startswith("✅")
    assert check("版本缓存").startswith("✅")
    assert "27 candidates" in check("召回结果 cache 失效")  # the query the notebook shows
    assert "3 candidates" in check("失效")  # at most 2 wanted
    assert "no longer a candidate" in check("index status")
    assert check(...).startswith("⏳")


def test_no_query_run_in_notebook_03_answers_an_exercise(mei: tuple) -> None:
    """Every str the notebook's code cells hold (queries included) fails both checks:
    no cell, before or after the exercise, shows a passing answer."""
    import ast

    import nbformat

    records, scope = mei
    nb = nbformat.read(SOLUTION.parents[1] / "03_candidates.ipynb", as_version=4)
    texts = {EXERCISE_NOISY_TEXT}
    for cell in nb.cells:
        if cell.cell_type == "code":
            texts |= {
                node.value
                for node in ast.walk(ast.parse(cell.source))
                if isinstance(node, ast.Constant) and isinstance(node.value, str)
            }
    assert {"memory block budget tokens", "召回结果 cache 失效"} <= texts  # the walker sees them
    solution = runpy.run_path(str(SOLUTION))
    for text in sorted(texts):
        for check in (check_quiet_query, check_cache_query):
            verdict = check(text, records, user_scope=scope, as_of=COURSE_AS_OF)
            assert not verdict.is_right, f"{text!r} answers {check.__name__}"
    shown = "\n".join(c.source for c in nb.cells).casefold()
    for answer in (solution["quiet_query"], solution["cache_query"]):
        assert f'"{answer.casefold()}"' not in shown, f"{answer!r} is in the notebook"


def test_checker_placeholder(mei: tuple) -> None:
    records, scope = mei
    verdict = check_quiet_query(..., records, user_scope=scope, as_of=COURSE_AS_OF)
    assert str(verdict).startswith("⏳")


def test_widget(mei: tuple) -> None:
    records, scope = mei
    widget = candidate_widget(records, user_scope=scope, as_of=COURSE_AS_OF, max_rows=5)
    box, shown = widget.children
    assert "candidate_records = <b>40</b>" in shown.value and "35 more" in shown.value
    box.value = "index status"
    assert "candidate_records = <b>4</b>" in shown.value


def test_common_words_are_lower_case() -> None:
    assert all(w == w.casefold() for w in COMMON_WORDS)
