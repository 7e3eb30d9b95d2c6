"""Notebook 08's playground: the pure view model, its HTML and SVG, the widget wiring."""

from __future__ import annotations

import hashlib
import importlib.util
import traceback
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pytest

from memorylib import (
    TEACHING_AS_OF,
    RecallEngine,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    ScoringPolicy,
    build_recall_candidates,
    normalize_recall_query,
    render_recall_context,
    user_scope_for,
)
from memorylib.datasets import (
    CHAPTER_USER,
    COURSE_AS_OF,
    COURSE_USERS,
    build_course_store,
)
from memorylib.notebook import playground as pg
from memorylib.notebook.charts import COLOURS
from memorylib.notebook.playground import (
    DEFAULT_STATE,
    HIT_COLUMNS,
    PlaygroundCatalog,
    PlaygroundState,
    playground_view,
)

SOLUTION = (
    Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "08_query_playground.py"
)
MEI, OMAR = COURSE_USERS[0], COURSE_USERS[1]
CHAPTER = PlaygroundState(
    query="  LAYERED   Memory  ",
    dataset="chapter",
    user=CHAPTER_USER,
    as_of=TEACHING_AS_OF,
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> PlaygroundCatalog:
    # a small generated store keeps the suite fast; the notebook uses 10,000 records
    return PlaygroundCatalog(tmp_path_factory.mktemp("playground"), generated_records=300)


class Cells(HTMLParser):
    """Collects the text of every <td class=...> of one class, and the tags seen."""

    def __init__(self, css: str) -> None:
        super().__init__()
        self.css, self.values, self.tags, self._inside = css, [], [], False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        self._inside = tag == "td" and attributes.get("class") == self.css

    def handle_data(self, data):
        if self._inside:
            self.values.append(data)
            self._inside = False


def cells(markup: str, css: str = "memory-id") -> Cells:
    parser = Cells(css)
    parser.feed(markup)
    return parser


# -- the view model ----------------------------------------------------------------------


def test_the_default_state_matches_the_engine_run_directly(catalog, tmp_path) -> None:
    view = playground_view(DEFAULT_STATE, catalog)
    assert view.error is None
    expected = RecallEngine(build_course_store(tmp_path, MEI)).recall(
        DEFAULT_STATE.query, limit=5, as_of=COURSE_AS_OF, query_id=DEFAULT_STATE.query_id
    )
    assert view.result == expected
    assert view.hit_ids == [hit.memory_id for hit in expected.hits]
    assert list(view.funnel["records"]) == [69, 26, 5]
    assert view.result.retracted_records == 1
    assert tuple(view.hits.columns) == HIT_COLUMNS
    assert list(view.hits["rank"]) == [1, 2, 3, 4, 5]
    assert set(view.hits["user_scope"]) == {user_scope_for(MEI)}
    assert view.context == render_recall_context(expected)


def test_the_chapter_example_gives_the_chapter_numbers(catalog) -> None:
    view = playground_view(CHAPTER, catalog)
    assert view.query.normalized_text == "layered memory"
    assert view.query.terms == ("layered", "memory")
    assert view.hit_ids == ["conversation-003"]
    row = view.hits.iloc[0]
    assert (row["lexical_coverage"], row["recency"], row["total"]) == (1.0, 0.967742, 0.995161)
    assert row["age_days"] == 1.0
    assert row["matched_terms"] == "2/2: layered, memory"
    assert list(view.funnel["records"]) == [6, 1, 1]


def test_the_view_is_pure_and_recall_leaves_the_store_unchanged(catalog) -> None:
    store = catalog.store("course", MEI)
    before = hashlib.sha256(store.path.read_bytes()).hexdigest()
    first, second = (playground_view(DEFAULT_STATE, catalog) for _ in range(2))
    assert first.hits.equals(second.hits) and first.funnel.equals(second.funnel)
    assert first.context == second.context and first.result == second.result
    assert hashlib.sha256(store.path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"query": "!!!"}, "has no searchable term"),
        ({"query": "   "}, "recall query must not be empty"),
        ({"limit": 11}, "limit must be between 1 and 10"),
        ({"limit": 0}, "limit must be between 1 and 10"),
        ({"lexical_weight": 0.0, "recency_weight": 0.0}, "cannot both be 0"),
        ({"recency_window_days": 0.0}, "recency_window_days"),
        ({"as_of": ""}, "as_of"),
    ],
)
def test_a_rejection_is_a_typed_message_not_an_exception(catalog, change, message) -> None:
    view = playground_view(replace(DEFAULT_STATE, **change), catalog)
    assert view.error is not None
    assert view.error.startswith("RemoteMemoryValidationError: ")
    assert message in view.error
    assert view.hits.empty and list(view.funnel["records"]) == [0, 0, 0]
    assert view.context == "" and view.hit_ids == []
    assert "rejected" in pg.summary_text(view)


def test_no_match_is_an_explained_empty_result(catalog) -> None:
    view = playground_view(replace(DEFAULT_STATE, query="zzqxv quokka"), catalog)
    assert view.error is None and view.hits.empty and view.context == ""
    assert view.result.empty_reason == "no_matching_terms"
    assert list(view.funnel["records"]) == [69, 0, 0]
    assert "no hits: empty_reason = no_matching_terms" in pg.hits_table_html(view)


def test_each_user_is_answered_from_their_own_store_only(catalog) -> None:
    for user in COURSE_USERS:
        view = playground_view(replace(DEFAULT_STATE, query="cache TTL", user=user), catalog)
        assert view.user_scope == user_scope_for(user)
        assert set(view.hits["user_scope"]) <= {view.user_scope}
        assert all(hit.scope.user_scope == view.user_scope for hit in view.result.hits)
    # a user who owns nothing in a dataset searches an empty store of their own
    empty = playground_view(replace(CHAPTER, user=MEI), catalog)
    assert list(empty.funnel["records"]) == [0, 0, 0] and empty.error is None


def test_weights_and_window_change_the_ranking_and_are_reported(catalog) -> None:
    state = replace(DEFAULT_STATE, query="pgvector semantic recall decision")
    chapter = playground_view(state, catalog)
    fresh = playground_view(replace(state, lexical_weight=0.4, recency_weight=0.6), catalog)
    assert chapter.hit_ids[0] == "mei-conv-053" and fresh.hit_ids[0] != "mei-conv-053"
    breakdown = fresh.result.hits[0].score_breakdown
    assert (breakdown.lexical_weight, breakdown.recency_weight) == (0.4, 0.6)
    wide = playground_view(replace(state, recency_window_days=365.0), catalog)
    assert wide.result.hits[0].score_breakdown.recency_window_days == 365.0
    assert "window 365 days" in pg.summary_text(wide)


def test_as_of_on_keeps_the_dataset_clock_time() -> None:
    assert pg.as_of_on(date(2026, 11, 1), "course") == "2026-11-01T09:00:00Z"
    assert pg.as_of_on(date(2026, 8, 2), "chapter") == CHAPTER.as_of


def test_the_catalog_builds_each_store_once_on_first_use(tmp_path) -> None:
    catalog = PlaygroundCatalog(tmp_path, generated_records=120)
    assert not catalog.is_built("generated", OMAR)
    engine = catalog.engine("generated", OMAR)
    assert catalog.is_built("generated", OMAR) and catalog.engine("generated", OMAR) is engine
    view = playground_view(replace(DEFAULT_STATE, dataset="generated", user=OMAR), catalog)
    assert view.result.searched_records == 119  # record 0 is a PROFILE snapshot
    other = catalog.engine("generated", MEI)
    assert other.store.path != engine.store.path  # one file per user scope
    with pytest.raises(KeyError, match="dataset must be one of"):
        catalog.engine("nope", MEI)


# -- HTML and the SVG chart ------------------------------------------------------------------


def test_the_hits_table_has_a_stable_selectable_shape(catalog) -> None:
    view = playground_view(replace(DEFAULT_STATE, limit=3), catalog)
    markup = pg.hits_table_html(view)
    parsed = cells(markup)
    assert parsed.values == view.hit_ids
    table = next(attrs for tag, attrs in parsed.tags if tag == "table")
    assert table["class"] == "playground-hits"
    assert table["data-limit"] == "3" and table["data-hits"] == "3"
    assert table["data-user-scope"] == user_scope_for(MEI)
    assert table["data-query"] == DEFAULT_STATE.query
    headers = [h for h, _ in parsed.tags if h == "th"]
    assert len(headers) == len(HIT_COLUMNS)
    assert cells(markup, "total").values == [f"{t:.6f}" for t in view.hits["total"]]


def test_the_table_escapes_what_the_student_types(catalog) -> None:
    typed = '<script>alert("x")</script> cache'
    view = playground_view(replace(DEFAULT_STATE, query=typed), catalog)
    markup = pg.hits_table_html(view)
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    rejected = pg.hits_table_html(playground_view(replace(DEFAULT_STATE, query="<>"), catalog))
    assert rejected.startswith('<div class="playground-error"')
    assert "<table" not in rejected and "Query rejected" in rejected


def test_the_svg_chart_draws_one_stacked_bar_per_hit(catalog) -> None:
    view = playground_view(DEFAULT_STATE, catalog)
    root = ET.fromstring(pg.playground_svg(view))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("class") == "playground-chart"
    funnel = {
        r.get("data-stage"): int(r.get("data-records"))
        for r in root.iter(f"{ns}rect")
        if r.get("class") == "funnel"
    }
    assert funnel == {"searched": 69, "candidates": 26, "hits": 5}
    groups = [g for g in root.iter(f"{ns}g") if g.get("class") == "hit"]
    assert [g.get("data-memory-id") for g in groups] == view.hit_ids
    for group, row in zip(groups, view.hits.to_dict("records"), strict=True):
        widths = {r.get("class"): float(r.get("width")) for r in group.iter(f"{ns}rect")}
        assert widths["lexical"] == pytest.approx(360 * row["lexical_contribution"], abs=0.06)
        assert widths["recency"] == pytest.approx(360 * row["recency_contribution"], abs=0.06)
    rejected = pg.playground_svg(playground_view(replace(DEFAULT_STATE, query="!!"), catalog))
    assert "query rejected" in ET.tostring(ET.fromstring(rejected), encoding="unicode")


def test_the_svg_chart_is_the_same_string_every_run(catalog) -> None:
    # the static cell of notebook 08 shows this SVG, and nbval compares it byte for byte
    view = playground_view(DEFAULT_STATE, catalog)
    assert pg.playground_svg(view) == pg.playground_svg(playground_view(DEFAULT_STATE, catalog))
    typed = replace(DEFAULT_STATE, query='<b>cache</b> recall "x"')
    markup = pg.playground_svg(playground_view(typed, catalog))
    assert "<b>" not in markup
    ET.fromstring(markup)  # well-formed: nothing the student types becomes markup


def test_the_svg_chart_text_is_14_pt_on_a_slide(catalog) -> None:
    # drawn at its width attribute over its viewBox width; 1 CSS px is 0.75 pt (issue 23)
    for state in (DEFAULT_STATE, replace(DEFAULT_STATE, limit=10)):
        root = ET.fromstring(pg.playground_svg(playground_view(state, catalog)))
        ratio = float(root.get("width")) / float(root.get("viewBox").split()[2])
        assert float(root.get("height")) / float(root.get("viewBox").split()[3]) >= ratio
        sizes = [float(e.get("font-size")) for e in root.iter() if e.get("font-size")]
        assert sizes and min(sizes) * ratio * 0.75 >= 14


def test_the_svg_chart_draws_each_part_in_its_course_colour(catalog) -> None:
    # one colour per meaning, the same as every matplotlib chart of the course
    root = ET.fromstring(pg.playground_svg(playground_view(DEFAULT_STATE, catalog)))
    fills = {r.get("class"): r.get("fill") for r in root.iter("{http://www.w3.org/2000/svg}rect")}
    assert (fills["lexical"], fills["recency"]) == (COLOURS["lexical"], COLOURS["recency"])


def test_the_summary_and_context_html(catalog) -> None:
    view = playground_view(CHAPTER, catalog)
    text = pg.summary_text(view)
    assert "normalized 'layered memory'" in text
    assert "terms      ['layered', 'memory']" in text
    assert "funnel     searched 6 -> candidates 1 -> hits 1" in text
    assert "&lt;recalled_context" in pg.context_html(view)
    assert "nothing rendered" in pg.context_html(replace(view, context=""))


# -- the widget layer -------------------------------------------------------------------------


@pytest.fixture
def app(catalog):
    pytest.importorskip("ipywidgets")
    return pg.PlaygroundApp(catalog)


def test_the_app_wires_inputs_to_the_view_model(app, catalog) -> None:
    assert cells(app.table.value).values == playground_view(DEFAULT_STATE, catalog).hit_ids
    app.query.value = "JSONL transcripts"
    app.limit.value = 2
    expected = playground_view(replace(DEFAULT_STATE, query="JSONL transcripts", limit=2), catalog)
    assert app.view.hit_ids == expected.hit_ids == cells(app.table.value).values
    assert 'data-limit="2"' in app.table.value
    assert 'class="playground-chart"' in app.chart.value
    assert "JSONL transcripts" in app.summary.value
    app.user.value = OMAR
    assert set(app.view.hits["user_scope"]) <= {user_scope_for(OMAR)}
    assert set(app.timings) == {"recall_view_ms", "refresh_ms"}
    assert "recall + view model" in app.status.value


def test_switching_dataset_resets_clock_and_user_in_one_refresh(app) -> None:
    calls = []
    original = app.refresh
    app.refresh = lambda: (calls.append(1), original())[1]
    app.user.value = OMAR
    calls.clear()
    app.dataset.value = "chapter"
    assert calls == [1]
    assert app.user.value == CHAPTER_USER
    assert app.state.as_of == CHAPTER.as_of and app.state.dataset == "chapter"


def test_a_rejected_query_and_a_bug_both_show_a_message(app, catalog, monkeypatch) -> None:
    app.query.value = "!!!"
    assert "playground-error" in app.table.value and "Traceback" not in app.table.value
    monkeypatch.setattr(pg, "playground_view", lambda *a: 1 / 0)
    broken = pg.PlaygroundApp(catalog)
    assert "Internal error — ZeroDivisionError" in broken.table.value
    broken.query.value = "cache"
    assert "Internal error — ZeroDivisionError" in broken.table.value


def test_set_applies_several_changes_in_one_refresh(app) -> None:
    view = app.set(query="recall cache", limit=3, as_of="2026-11-01T09:00:00Z")
    assert app.state.limit == 3 and app.state.as_of == "2026-11-01T09:00:00Z"
    assert len(view.hit_ids) == 3


# -- your turn ------------------------------------------------------------------------------------


def test_the_checker_accepts_the_reference_solution(catalog) -> None:
    spec = importlib.util.spec_from_file_location("solution_08", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert pg.check_isolation_query(module.my_isolation_query, catalog).is_right


def test_the_isolation_quiz_accepts_the_solution_and_its_choices_say_true_numbers(
    tmp_path: Path,
) -> None:
    spec = importlib.util.spec_from_file_location("solution_08", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert pg.check_isolation_why(module.my_isolation_why).is_right
    # the quiz's case: Mei's mei-conv-040, copied as it is, appended to Omar's file
    catalog = PlaygroundCatalog(tmp_path / "catalog")
    asked = replace(DEFAULT_STATE, query="cache TTL", user=OMAR)
    before = playground_view(asked, catalog)  # B's numbers: the file as it was
    assert (before.result.searched_records, before.result.candidate_records) == (46, 11)
    omar_file, mei_file = (catalog.store("course", user).path for user in (OMAR, MEI))
    assert len(omar_file.read_text().splitlines()) == 52  # so the copied line is line 53
    line = next(x for x in mei_file.read_text().splitlines() if '"mei-conv-040"' in x)
    assert user_scope_for(MEI) in line
    # A's numbers: what recall would give if the line were Omar's (his scope written in)
    relabelled = tmp_path / "relabelled" / omar_file.name
    relabelled.parent.mkdir()
    mine = line.replace(user_scope_for(MEI), user_scope_for(OMAR))
    relabelled.write_text(omar_file.read_text() + mine + "\n")
    a = RecallEngine(RemoteMemoryStore(relabelled, user_id=OMAR)).recall(
        asked.query, limit=5, as_of=asked.as_of, query_id="q"
    )
    assert (a.searched_records, a.candidate_records) == (47, 12)
    assert [hit.memory_id for hit in a.hits].index("mei-conv-040") == 1  # rank 2
    # D's numbers: the candidate stage, handed the 53 records, would name records[52]
    query = normalize_recall_query(
        asked.query, user_scope=user_scope_for(OMAR), limit=5, query_id="q", issued_at=asked.as_of
    )
    foreign = next(r for r in catalog.records("course", MEI) if r.memory_id == "mei-conv-040")
    with pytest.raises(RemoteMemoryScopeError, match=r"records\[52\] \('mei-conv-040'\)"):
        build_recall_candidates(query, [*catalog.records("course", OMAR), foreign])
    # C: what happens, through the playground's own (already built) engine
    with omar_file.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    after = playground_view(asked, catalog)
    assert after.result is None and after.hit_ids == []
    assert after.error.startswith(
        "RemoteMemoryScopeError: line 53: record 'mei-conv-040' belongs to another user scope"
    ), after.error
    with pytest.raises(RemoteMemoryScopeError) as raised:  # raised by the store's read
        catalog.engine("course", OMAR).recall(asked.query, limit=5, as_of=asked.as_of)
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert (Path(last.filename).name, last.name) == ("store.py", "check_line")
    for letter, hint in (("A", "own user_scope"), ("b", "never left out"), ("D", "再次校验")):
        verdict = str(pg.check_isolation_why(letter))
        assert verdict.startswith("❌") and hint in verdict, verdict
    assert str(pg.check_isolation_why("E")).startswith("❌ 'E' is not one of the choices")


def test_the_isolation_check_refuses_a_word_of_a_printed_record(catalog) -> None:
    """Mei-only words of the records the course shows before 08's exercise (08's sections 2
    and 4, and earlier notebooks: 07b prints the pgvector story in full) would pass the rule,
    so the check refuses them and names the record and the notebook."""
    printed = pg.printed_words(catalog)
    assert printed["bigram"] == "mei-conv-057" and printed["上下"] == "mei-conv-064"
    for word, record, where in (
        ("bigram", "mei-conv-057", "in notebook 06"),
        ("课程试讲", "mei-conv-070", "in notebook 03"),
        ("nightly", "sam-conv-007", "above, in this notebook"),
        ("pgvector", "mei-conv-041", "in notebook 06b"),
        ("architecture sync", "mei-conv-041", "in notebook 06b"),
    ):
        verdict = str(pg.check_isolation_query(word, catalog))
        assert verdict.startswith("❌") and record in verdict, verdict
        assert f"showed before this exercise ({where})" in verdict, verdict
    # the same words with the rule alone (Mei hits, Omar none): they would be right. The
    # last five are words of 07b's printed records (mei-conv-053, -063, -005) that Omar's
    # store lacks: a reader of 07b could copy them.
    for word in (
        "bigram",
        "课程试讲",
        "caching",
        "上下文预算",
        "pgvector",
        "vector",
        "pull",
        "job",
        "decisions",
    ):
        mei, omar = (
            playground_view(replace(DEFAULT_STATE, query=word, user=user), catalog)
            for user in (MEI, OMAR)
        )
        assert mei.hit_ids and not omar.hit_ids, word
        assert not pg.check_isolation_query(word, catalog).is_right, word


@pytest.mark.parametrize(
    ("answer", "start", "hint"),
    [
        (..., "⏳", "Not answered yet"),
        (7, "❌", "must be a str"),
        ("!!", "❌", "rejected"),
        ("kubernetes helm", "❌", "gets no hits either"),
        ("cache TTL", "❌", "also gets hits"),
    ],
)
def test_the_checker_rejects_wrong_answers_with_a_hint(catalog, answer, start, hint) -> None:
    verdict = str(pg.check_isolation_query(answer, catalog))
    assert verdict.startswith(start) and hint in verdict


# -- the scorer selector (notebook 10) -----------------------------------------------------------


def _solution_10():
    path = SOLUTION.parent / "10_beyond_the_teaching_ranker.py"
    spec = importlib.util.spec_from_file_location("solution_10", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.my_score


def test_each_scorer_ranks_with_its_policy_and_shows_its_lexical_part(catalog) -> None:
    coverage = playground_view(DEFAULT_STATE, catalog)
    assert DEFAULT_STATE.scorer == "coverage"
    assert list(coverage.hits["lexical_score"]) == list(coverage.hits["lexical_coverage"])
    lexical, recency = pg.SCORER_PRESETS["bm25"]
    bm25 = playground_view(
        replace(DEFAULT_STATE, scorer="bm25", lexical_weight=lexical, recency_weight=recency),
        catalog,
    )
    engine = catalog.engine("course", MEI)
    direct = engine.recall(
        DEFAULT_STATE.query,
        limit=5,
        as_of=COURSE_AS_OF,
        query_id=DEFAULT_STATE.query_id,
        policy=ScoringPolicy.bm25(),
    )
    assert bm25.hit_ids == [h.memory_id for h in direct.hits] != coverage.hit_ids
    assert list(bm25.hits["lexical_score"]) == [h.score_breakdown.bm25 for h in direct.hits]
    assert "scoring    bm25 ·" in pg.summary_text(bm25)
    assert 'data-scorer="bm25"' in pg.hits_table_html(bm25)
    assert cells(pg.hits_table_html(bm25), "lexical-score").values[0] == (
        f"{bm25.hits['lexical_score'][0]:.6f}"
    )
    recent = playground_view(replace(DEFAULT_STATE, scorer="bm25+recency"), catalog)
    assert max(recent.hits["lexical_score"]) == 1.0  # BM25 over the query's best
    unknown = playground_view(replace(DEFAULT_STATE, scorer="vector"), catalog)
    assert unknown.error is not None and "scorer must be one of" in unknown.error


def test_bm25_totals_above_one_still_fit_the_chart(catalog) -> None:
    view = playground_view(
        replace(DEFAULT_STATE, scorer="bm25", lexical_weight=1.0, recency_weight=0.0), catalog
    )
    root = ET.fromstring(pg.playground_svg(view))
    ns = "{http://www.w3.org/2000/svg}"
    widths = [float(r.get("width")) for r in root.iter(f"{ns}rect") if r.get("class") == "lexical"]
    assert max(view.hits["total"]) > 1 and max(widths) == pytest.approx(360, abs=0.06)
    assert "score contributions per hit · bm25" in pg.playground_svg(view)
    assert pg.playground_svg(view) == pg.playground_svg(playground_view(view.state, catalog))


def test_yours_runs_a_registered_function_and_explains_a_missing_or_failing_one(tmp_path) -> None:
    own = PlaygroundCatalog(tmp_path, generated_records=50)
    state = replace(DEFAULT_STATE, scorer=pg.YOURS)
    assert [key for _, key in pg.scorer_options(own)] == ["coverage", "bm25", "bm25+recency"]
    missing = playground_view(state, own)
    assert missing.error is not None and "use_scorer" in missing.error
    own.use_scorer(_solution_10())
    assert [key for _, key in pg.scorer_options(own)][-1] == pg.YOURS
    view = playground_view(state, own)
    assert view.error is None
    assert {h.score_breakdown.scorer for h in view.result.hits} == {"idf_coverage"}
    own.use_scorer(lambda *args, **kwargs: 1 / 0)
    failing = playground_view(state, own)
    assert failing.error == "your scoring function failed: ZeroDivisionError: division by zero"
    with pytest.raises(TypeError, match="scoring function"):
        own.use_scorer("my_score")


def test_the_scorer_dropdown_loads_its_weights_and_use_scorer_selects_yours(tmp_path) -> None:
    pytest.importorskip("ipywidgets")
    app = pg.PlaygroundApp(PlaygroundCatalog(tmp_path, generated_records=50))
    assert "playground-scorer" in app.scorer._dom_classes
    app.scorer.value = "bm25"
    assert (app.lexical.value, app.recency.value) == pg.SCORER_PRESETS["bm25"]
    expected = playground_view(
        replace(DEFAULT_STATE, scorer="bm25", lexical_weight=1.0, recency_weight=0.0), app.catalog
    )
    assert app.view.hit_ids == expected.hit_ids == cells(app.table.value).values
    view = app.use_scorer(_solution_10())
    assert app.scorer.value == pg.YOURS and view.error is None
    assert 'data-scorer="yours"' in app.table.value
    app.use_scorer(None)
    assert app.scorer.value == "coverage" and pg.YOURS not in [k for _, k in app.scorer.options]
