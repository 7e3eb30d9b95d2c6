"""The views of notebooks 06 (render) and 06b (profile): pure, parse-checked, never raising
widgets."""

from __future__ import annotations

import json
import runpy
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallEngine,
    RemoteMemoryStore,
    build_system_prompt,
    recall_history,
    render_recall_context,
    seed_teaching_store,
)
from memorylib.notebook.render_views import (
    EXERCISE_CALLS,
    HOSTILE_MEMORY_ID,
    HOSTILE_SOURCE_ID,
    HOSTILE_SUMMARY,
    PROFILE_SCENARIOS,
    add_late_profile_import,
    attribute_map_frame,
    check_profile_predictions,
    check_render_predictions,
    empty_wrapper,
    escape_audit_frame,
    exercise_truth,
    explore_query,
    hits_frame,
    naive_render,
    parse_profile_block,
    parse_recalled_context,
    plot_render_budget,
    pretty_json,
    profile_exercise_frame,
    profile_exercise_truth,
    profile_frame,
    profile_vs_recall_frame,
    query_widget,
    render_cost_frame,
    store_hostile_memory,
    teaching_records_frame,
)

AS_OF = "2026-08-02T12:00:00Z"
SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"
SOLUTION = SOLUTIONS / "06_render.py"
PROFILE_SOLUTION = SOLUTIONS / "06b_profile.py"


@pytest.fixture
def chapter(tmp_path: Path) -> RemoteMemoryStore:
    store = RemoteMemoryStore(tmp_path / "chapter.jsonl")
    seed_teaching_store(store)
    return store


@pytest.fixture
def engine(chapter: RemoteMemoryStore) -> RecallEngine:
    return RecallEngine(chapter)


def test_teaching_records_frame_shows_what_recall_searches(chapter: RemoteMemoryStore) -> None:
    frame = teaching_records_frame(chapter)
    assert list(frame["memory_id"]) == [r.memory_id for r in chapter.read_all()]
    assert list(frame["kind"]) == ["profile"] + ["conversation"] * 6
    # the exercise's part E can be read off the table: "the" as a whole, case-folded word
    holds_the = [
        row.memory_id
        for row in frame.itertuples()
        if row.kind == "conversation"
        and "the" in f"{row.summary} {row.content}".casefold().replace(".", " ").split()
    ]
    assert len(holds_the) == exercise_truth()["E"]


def test_pretty_json_keeps_the_data(engine: RecallEngine) -> None:
    text = recall_history("layered memory", 5, engine=engine, as_of=AS_OF, query_id="q-1")
    pretty = pretty_json(text)
    assert json.loads(pretty) == json.loads(text)
    assert pretty.startswith('{\n  "query": {')


def test_hits_frame_flattens_every_hit(engine: RecallEngine) -> None:
    payload = json.loads(
        recall_history(
            "memory recall transcript jsonl sqlite", 10, engine=engine, as_of=AS_OF, query_id="q-1"
        )
    )
    frame = hits_frame(payload)
    assert list(frame["rank"]) == [1, 2, 3, 4]
    assert list(frame["memory_id"]) == [h["memory_id"] for h in payload["hits"]]
    first = payload["hits"][0]
    assert frame.loc[0, "total"] == first["score_breakdown"]["total"]
    assert (
        frame.loc[0, "recency_contribution"]
        == (first["score_breakdown"]["contributions"]["recency"])
    )
    assert frame.loc[0, "matched_terms"] == "jsonl, sqlite"


def test_hits_frame_of_no_hits_is_empty_with_columns() -> None:
    frame = hits_frame({"hits": []})
    assert frame.empty and "memory_id" in frame.columns


def test_attribute_map_agrees_with_the_chapter_example(engine: RecallEngine) -> None:
    result = engine.recall("  LAYERED   Memory  ", query_id="q-06-a", as_of=AS_OF)
    frame = attribute_map_frame(result)
    assert len(frame) == 3 + 13
    assert frame["agrees"].all()
    total = frame[(frame["element"] == "hit[1]/score") & (frame["attribute"] == "total")]
    assert total.iloc[0]["rendered"] == "0.995161"
    assert set(frame["comes_from"]) >= {
        "query.query_id",
        "hit.provenance.captured_at",
        "hit.snippet",
    }


def test_attribute_map_of_an_empty_result_is_empty(engine: RecallEngine) -> None:
    result = engine.recall("kubernetes", query_id="q", as_of=AS_OF)
    assert attribute_map_frame(result).empty


def test_parse_recalled_context(engine: RecallEngine) -> None:
    result = engine.recall("layered memory", query_id="q", as_of=AS_OF)
    (hit,) = parse_recalled_context(render_recall_context(result))
    assert hit["hit.memory_id"] == "conversation-003"
    assert hit["score.total"] == "0.995161"
    assert hit["provenance.source_id"] == "transcript-conversation-003"
    assert hit["snippet"] == result.hits[0].snippet
    assert parse_recalled_context("") == []
    with pytest.raises(ValueError, match="recalled_context"):
        parse_recalled_context("<other/>")


def test_a_hostile_memory_round_trips_and_forges_nothing(chapter: RemoteMemoryStore) -> None:
    store_hostile_memory(chapter)
    result = RecallEngine(chapter).recall("layered memory", query_id="q", as_of=AS_OF)
    assert [h.memory_id for h in result.hits] == ["conversation-003", HOSTILE_MEMORY_ID]
    parsed = parse_recalled_context(render_recall_context(result))
    assert len(parsed) == 2
    assert parsed[1]["snippet"] == HOSTILE_SUMMARY
    assert parsed[1]["provenance.source_id"] == HOSTILE_SOURCE_ID
    audit = escape_audit_frame(result).set_index("check")
    assert (audit["render_recall_context"] == audit["expected"]).all()
    assert audit.loc["<hit> elements a parser finds", "naive f-string"] == 3
    assert audit.loc["<system> elements a parser finds", "naive f-string"] == 1


def test_naive_render_really_is_broken(chapter: RemoteMemoryStore) -> None:
    store_hostile_memory(chapter)
    result = RecallEngine(chapter).recall("layered memory", query_id="q", as_of=AS_OF)
    root = ET.fromstring(naive_render(result))
    assert root.find("system") is not None
    assert [h.get("memory_id") for h in root.findall("hit")][-1] == "forged"


def test_no_hits_renders_nothing_but_a_wrapper_would_cost(engine: RecallEngine) -> None:
    result = engine.recall("backend engineer", query_id="q-06-e", as_of=AS_OF)
    assert render_recall_context(result) == "" and naive_render(result) == ""
    wrapper = empty_wrapper(result)
    assert ET.fromstring(wrapper).tag == "recalled_context"
    assert len(wrapper) == 122


def test_render_cost_frame_starts_at_zero_and_grows(engine: RecallEngine) -> None:
    result = engine.recall(
        "memory recall transcript jsonl sqlite", limit=10, query_id="q-06-w", as_of=AS_OF
    )
    cost = render_cost_frame(result)
    assert list(cost["hits_kept"]) == [0, 1, 2, 3, 4]
    assert cost.loc[0, "characters"] == 0
    assert cost["characters"].is_monotonic_increasing
    assert cost.loc[4, "characters"] == len(render_recall_context(result))
    assert cost["added"].sum() == cost["characters"].iloc[-1]
    assert list(cost["kth_memory_id"][1:]) == [h.memory_id for h in result.hits]


def test_plot_render_budget_draws_one_bar_per_k(engine: RecallEngine) -> None:
    import matplotlib.pyplot as plt

    result = engine.recall(
        "memory recall transcript jsonl sqlite", limit=10, query_id="q", as_of=AS_OF
    )
    cost = render_cost_frame(result)
    fig = plot_render_budget(cost, 1200)
    (ax,) = fig.axes
    assert len(ax.patches) == len(cost)
    colors = [patch.get_facecolor() for patch in ax.patches]
    assert colors[1] != colors[-1]  # within budget vs over it
    plt.close(fig)


def test_profile_selection_ignores_file_order(chapter: RemoteMemoryStore) -> None:
    newer = chapter.append(
        kind=MemoryKind.PROFILE,
        memory_id="profile-002",
        content="Newer snapshot.",
        summary="Newer.",
        stored_at="2026-08-01T08:00:00Z",
        source=MemorySource("ps-2", "profile_snapshot", "t", "2026-08-01T08:00:00Z"),
    )
    old = add_late_profile_import(chapter)
    frame = profile_frame(chapter)
    assert list(frame["memory_id"]) == ["profile-001", "profile-002", old.memory_id]
    assert list(frame["injected"]) == [False, True, False]
    assert frame["file_line"].iloc[-1] == 9
    block = parse_profile_block(build_system_prompt(chapter))
    assert block["memory_id"] == newer.memory_id
    assert block["source_id"] == "ps-2" and block["captured_at"] == "2026-08-01T08:00:00Z"
    assert block["content"] == "Newer snapshot."


def test_parse_profile_block_without_a_profile(tmp_path: Path) -> None:
    empty = RemoteMemoryStore(tmp_path / "empty.jsonl")
    assert parse_profile_block(build_system_prompt(empty)) == {}


def test_profile_only_terms_give_no_hits(chapter: RemoteMemoryStore) -> None:
    frame = profile_vs_recall_frame(chapter, "backend engineer runnable examples")
    assert frame["in_latest_profile"].all() and not frame["in_a_conversation"].any()
    result = RecallEngine(chapter).recall("backend engineer runnable examples", as_of=AS_OF)
    assert result.hits == () and result.searched_records == 6


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("", 5),
        ("   ", 5),
        ("?!", 5),
        (None, 5),
        (42, 5),
        ("layered", 0),
        ("layered", 11),
        ("layered", True),
        ("layered", 2.5),
        ("x" * 2001, 5),
    ],
)
def test_explore_query_never_raises_on_rejected_input(
    engine: RecallEngine, text: object, limit: object
) -> None:
    view = explore_query(engine, text, limit=limit, as_of=AS_OF)
    assert not view.ok and view.xml_text == "" and view.frame.empty
    assert view.message.startswith("⛔") and "RemoteMemoryValidationError" in view.message
    assert json.loads(view.json_text)["error"]["type"] == "RemoteMemoryValidationError"


def test_explore_query_with_hits_and_without(engine: RecallEngine) -> None:
    view = explore_query(engine, "recall provenance score", limit=3, as_of=AS_OF)
    assert view.ok and view.message.startswith("✅")
    assert list(view.frame["memory_id"]) == ["conversation-006"]
    assert parse_recalled_context(view.xml_text)[0]["hit.memory_id"] == "conversation-006"
    assert json.loads(view.json_text)["query"]["query_id"] == "q-06-widget"
    empty = explore_query(engine, "kubernetes", as_of=AS_OF)
    assert empty.ok and empty.xml_text == "" and empty.message.startswith("∅")


def test_query_widget_builds_and_refreshes(engine: RecallEngine) -> None:
    calls = []

    def spy(*args, **kwargs):
        calls.append(args[1])
        return explore_query(*args, **kwargs)

    box = query_widget(engine, as_of=AS_OF, initial="layered memory", view=spy)
    summary, table, context = box.children[1:]
    assert "conversation-003" in table.value and "&lt;recalled_context" in context.value
    text = box.children[0].children[0]
    text.value = "?!"
    assert calls == ["layered memory", "?!"]
    assert table.value == "" and "RemoteMemoryValidationError" in summary.value


def test_exercise_truth() -> None:
    assert set(EXERCISE_CALLS) == {"A", "B", "C", "D", "E"}
    assert exercise_truth() == {"A": 1, "B": 0, "C": "rejected", "D": 2, "E": 3}


def test_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_prediction"]
    assert str(check_render_predictions(answer)).startswith("✅")


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        ({"A": 1}, "⏳", "B, C, D, E"),
        ({"A": 1, "B": 1, "C": "rejected", "D": 2, "E": 3}, "❌", "PROFILE"),
        ({"A": 1, "B": 0, "C": 0, "D": 2, "E": 3}, "❌", "punctuation"),
        ({"A": 1, "B": 0, "C": "rejected", "D": 4, "E": 3}, "❌", "limit"),
        ({"A": 1, "B": 0, "C": "rejected", "D": 2, "E": 10}, "❌", "whole word"),
        ({"A": 1, "B": 0, "C": "rejected", "D": 2, "E": 4}, "❌", "E:"),
        ({"A": True, "B": 0, "C": "rejected", "D": 2, "E": 3}, "❌", "A:"),
        ([1, 0, "rejected", 2, 3], "❌", "dict"),
    ],
)
def test_checker_rejects_wrong_answers(answer: object, start: str, fragment: str) -> None:
    message = str(check_render_predictions(answer))
    assert message.startswith(start) and fragment in message


def test_checker_accepts_case_and_spaces_in_rejected() -> None:
    answer = {"A": 1, "B": 0, "C": " Rejected ", "D": 2, "E": 3}
    assert str(check_render_predictions(answer)).startswith("✅")


# -- notebook 06b's exercise ------------------------------------------------------------------


def test_profile_exercise_truth() -> None:
    assert set(PROFILE_SCENARIOS) == {"A", "B", "C", "D", "E"}
    assert profile_exercise_truth() == {
        "A": "profile-000",
        "B": "profile-002",
        "C": "profile-001",
        "D": "profile-001",
        "E": None,
    }


def test_profile_exercise_frame_states_the_task_without_the_answer() -> None:
    frame = profile_exercise_frame()
    assert list(frame["call"]) == ["A", "B", "C", "D", "E"]
    assert "injected" not in frame.columns
    assert frame.loc[4, "memory_id"] == "-"


def test_profile_checker_accepts_the_reference_solution() -> None:
    answer = runpy.run_path(str(PROFILE_SOLUTION))["my_prediction"]
    assert str(check_profile_predictions(answer)).startswith("✅")
    spelled = {**answer, "C": " profile-001 ", "E": "None"}
    assert check_profile_predictions(spelled).is_right


RIGHT_PROFILES = {
    "A": "profile-000",
    "B": "profile-002",
    "C": "profile-001",
    "D": "profile-001",
    "E": None,
}


@pytest.mark.parametrize(
    ("answer", "start", "fragment"),
    [
        (..., "⏳", "Not answered"),
        ({"A": "profile-000"}, "⏳", "B, C, D, E"),
        ({**RIGHT_PROFILES, "A": "profile-001"}, "❌", "newest snapshot by captured_at"),
        ({**RIGHT_PROFILES, "B": "profile-001"}, "❌", "tie is broken by memory_id"),
        ({**RIGHT_PROFILES, "C": "profile-imported"}, "❌", "file line"),
        ({**RIGHT_PROFILES, "D": "conversation-007"}, "❌", "only PROFILE records"),
        ({**RIGHT_PROFILES, "E": "profile-001"}, "❌", "no block"),
        ({**RIGHT_PROFILES, "E": ""}, "❌", "E:"),
        (["profile-000"], "❌", "dict"),
    ],
)
def test_profile_checker_rejects_wrong_answers(answer: object, start: str, fragment: str) -> None:
    message = str(check_profile_predictions(answer))
    assert message.startswith(start) and fragment in message
