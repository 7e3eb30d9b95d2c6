"""The playground's "your pipeline" panel: the student's functions beside the library's."""

from __future__ import annotations

import runpy
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from memorylib.datasets import CHAPTER_USER, COURSE_USERS
from memorylib.notebook import buildit
from memorylib.notebook.playground import (
    AUTO_RECORDS,
    DEFAULT_STATE,
    PlaygroundApp,
    PlaygroundCatalog,
    use_pipeline,
    yours_html,
)
from memorylib.records import RecallScoreBreakdown
from memorylib.timestamps import TEACHING_AS_OF, parse_timestamp

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"
CHAPTER = replace(
    DEFAULT_STATE,
    query="  LAYERED   Memory  ",
    dataset="chapter",
    user=CHAPTER_USER,
    as_of=TEACHING_AS_OF,
)


def _mine() -> dict[str, object]:
    functions: dict[str, object] = {}
    for name in ("02_normalize", "03_candidates", "04_scoring", "05_stable_rank", "06_render"):
        found = runpy.run_path(str(SOLUTIONS / f"{name}_buildit.py"))
        functions.update({k.removeprefix("my_"): v for k, v in found.items() if k[:3] == "my_"})
    return functions


MINE = _mine()


def exponential(query, candidate, *, as_of):  # a wrong scorer: exp(-age / 30)
    import math

    age = max(0.0, (parse_timestamp(as_of, "as_of") - candidate.captured_at).total_seconds())
    coverage = len(candidate.matched_terms) / len(query.terms)
    recency = math.exp(-age / 86_400 / 30)
    return RecallScoreBreakdown(
        candidate.matched_terms,
        len(query.terms),
        round(coverage, 6),
        round(recency, 6),
        round(0.85 * coverage, 6),
        round(0.15 * recency, 6),
        round(0.85 * coverage + 0.15 * recency, 6),
    )


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> PlaygroundCatalog:
    # more generated records than AUTO_RECORDS: that dataset is not compared
    return PlaygroundCatalog(tmp_path_factory.mktemp("yours"), generated_records=AUTO_RECORDS + 100)


def _verdict(root: ET.Element) -> str:
    return "".join(
        next(d for d in root.iter("div") if d.get("class") == "playground-yours-verdict").itertext()
    )


def test_a_right_pipeline_is_the_same_at_every_stage(catalog) -> None:
    markup = yours_html(CHAPTER, catalog, buildit.Pipeline.from_functions(**MINE))
    root = ET.fromstring(markup)
    assert root.get("data-same") == "yes"
    cells = [td.text for td in root.iter("td")]
    assert cells == ["1", "conversation-003", "0.995161", "conversation-003", "0.995161"]
    assert _verdict(root).startswith("the same at every stage")
    assert "chapter's weights (0.85 / 0.15)" not in markup  # the sliders are the chapter's


def test_a_wrong_stage_is_named_with_both_hit_lists(catalog) -> None:
    pipeline = buildit.Pipeline.from_functions(**{**MINE, "score_recall_candidate": exponential})
    state = replace(DEFAULT_STATE, query="recall cache TTL")
    root = ET.fromstring(yours_html(state, catalog, pipeline))
    assert root.get("data-same") == "no"
    assert _verdict(root).startswith("first difference at stage score")
    assert len([tr for tr in root.iter("tr")]) == 1 + state.limit  # a header, then both lists


def test_a_rejected_query_and_a_slider_policy_are_reported(catalog) -> None:
    pipeline = buildit.Pipeline.reference()
    rejected = yours_html(replace(CHAPTER, query="?!"), catalog, pipeline)
    assert "Query rejected" in rejected and "no searchable term" in rejected
    heavy = yours_html(replace(CHAPTER, recency_weight=0.6), catalog, pipeline)
    assert "chapter's weights (0.85 / 0.15)" in heavy


def test_what_the_student_typed_is_escaped(catalog) -> None:
    state = replace(CHAPTER, query='<b>"layered"</b> memory')
    root = ET.fromstring(yours_html(state, catalog, buildit.Pipeline.reference()))
    assert root.get("data-query") == '<b>"layered"</b> memory'  # well-formed: typed markup is data
    assert [b.text for b in root.iter("b")] == ["your pipeline"]


def test_use_pipeline_adds_a_panel_that_follows_the_app(catalog) -> None:
    app = PlaygroundApp(catalog)
    before = len(app.widget.children)
    pipeline = buildit.Pipeline.from_functions(**{**MINE, "score_recall_candidate": exponential})
    panel = use_pipeline(app, pipeline)
    assert len(app.widget.children) == before + 1 and len(app.after_refresh) == 1
    assert "playground-yours" in panel._dom_classes
    app.set(query="memory recall", limit=3)
    assert 'data-query="memory recall"' in panel.value and 'data-same="no"' in panel.value
    again = use_pipeline(app, buildit.Pipeline.from_functions(**MINE))  # replaces the pipeline
    assert again is panel and len(app.widget.children) == before + 1
    assert len(app.after_refresh) == 1 and 'data-same="yes"' in panel.value


def test_a_large_store_is_not_compared(catalog) -> None:
    app = PlaygroundApp(catalog)
    panel = use_pipeline(app, buildit.Pipeline.from_functions(**MINE))
    app.set(query="memory agent", dataset="generated")
    assert "not compared" in panel.value and f"{AUTO_RECORDS + 100:,} records" in panel.value


def test_without_a_pipeline_the_playground_is_unchanged(catalog) -> None:
    app = PlaygroundApp(catalog, replace(DEFAULT_STATE, user=COURSE_USERS[1]))
    assert app.after_refresh == []
    assert not any("playground-yours" in c._dom_classes for c in app.widget.children)
