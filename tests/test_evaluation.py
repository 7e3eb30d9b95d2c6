"""``python -m memorylib eval`` and memorylib.evaluation: the table, its rules, your rows.

The numbers pinned below are the ones the README, notebook 10 and the issue report
quote; a change to a scorer or to the evaluation set must update them on purpose.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from memorylib.__main__ import main as cli
from memorylib.datasets import COURSE_AS_OF
from memorylib.errors import RemoteMemoryValidationError
from memorylib.evaluation import (
    STRICT_MIN_EVIDENCE,
    CourseStores,
    Scorer,
    ScoringFunctionError,
    evaluate,
    format_table,
    load_eval_queries,
    load_score_function,
    run_scorer,
    standard_scorers,
    summarize,
    tune_min_evidence,
)
from memorylib.scoring import ScoringPolicy, score_recall_candidate
from memorylib.timestamps import parse_timestamp

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "notebooks" / "solutions" / "10_beyond_the_teaching_ranker.py"

EXPECTED_TABLE = """\
split    scorer                queries recall@5 recall@10    MRR nDCG@10   abstain  empty
-----------------------------------------------------------------------------------------
dev      coverage                   77    0.736     0.812  0.723   0.715       5/9   0/77
dev      bm25                       77    0.771     0.812  0.756   0.729       5/9   0/77
dev      bm25+recency               77    0.771     0.812  0.753   0.728       5/9   0/77
dev      bm25+evidence              77    0.474     0.474  0.513   0.453       9/9  31/77
dev      bm25+recency+evidence      77    0.474     0.474  0.513   0.454       9/9  31/77
dev      bm25-stem-stop             77    0.833     0.844  0.830   0.797       5/9   1/77
dev      bm25-zh-seg                77    0.771     0.812  0.754   0.733       4/9   0/77
dev      bm25-dialogue              77    0.771     0.812  0.756   0.729       5/9   0/77
dev      bm25-context               77    0.771     0.812  0.756   0.729       5/9   0/77
dev      bm25-full                  77    0.833     0.844  0.814   0.794       4/9   1/77
heldout  coverage                   33    0.758     0.818  0.714   0.695       0/4   2/33
heldout  bm25                       33    0.848     0.848  0.771   0.741       0/4   2/33
heldout  bm25+recency               33    0.848     0.848  0.771   0.742       0/4   2/33
heldout  bm25+evidence              33    0.525     0.525  0.576   0.500       2/4  13/33
heldout  bm25+recency+evidence      33    0.525     0.525  0.576   0.501       2/4  13/33
heldout  bm25-stem-stop             33    0.864     0.894  0.845   0.814       0/4   1/33
heldout  bm25-zh-seg                33    0.879     0.879  0.819   0.790       0/4   1/33
heldout  bm25-dialogue              33    0.848     0.848  0.771   0.741       0/4   2/33
heldout  bm25-context               33    0.818     0.848  0.770   0.741       0/4   2/33
heldout  bm25-full                  33    0.894     0.924  0.883   0.856       0/4   0/33"""


@pytest.fixture(scope="module")
def stores():
    with CourseStores() as built:
        yield built


@pytest.fixture(scope="module")
def report(stores):
    return evaluate(stores=stores)


def test_the_evaluation_set_loads_with_its_splits() -> None:
    queries = load_eval_queries()
    assert len(queries) == 123
    counts = {(split, answerable): 0 for split in ("dev", "heldout") for answerable in (1, 0)}
    for q in queries:
        counts[(q.split, int(q.answerable))] += 1
        assert q.answerable == (q.category != "no_relevant"), q.query_id
    assert counts == {("dev", 1): 77, ("dev", 0): 9, ("heldout", 1): 33, ("heldout", 0): 4}


def test_the_table_is_the_one_the_course_quotes(report) -> None:
    assert format_table(report) == EXPECTED_TABLE


def test_the_cli_prints_the_table_deterministically(capsys) -> None:
    outputs = []
    for _ in range(2):
        assert cli(["eval", "--split", "heldout"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    table = outputs[0].split("\n\n")[0]
    lines = EXPECTED_TABLE.splitlines()
    assert table.splitlines() == lines[:2] + [ln for ln in lines if ln.startswith("heldout")]
    assert "chosen on dev only" in outputs[0]


def test_python_dash_m_memorylib_eval_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memorylib", "eval", "--split", "dev", "--json", "--per-query"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    payload = json.loads(done.stdout)
    assert payload["settings"]["strict_min_evidence"] == STRICT_MIN_EVIDENCE
    assert [r["scorer"] for r in payload["rows"]] == [s.name for s in standard_scorers()]
    assert len(payload["queries"]) == 86 * len(standard_scorers())
    unanswerable = [q for q in payload["queries"] if not q["answerable"]]
    assert unanswerable and all(q["ndcg_at_10"] is None for q in unanswerable)


def test_no_relevant_queries_are_scored_only_by_abstention(report) -> None:
    for row in report.rows:
        outcomes = [o for o in report.outcomes if o.split == row.split and o.scorer == row.scorer]
        unanswerable = [o for o in outcomes if not o.answerable]
        assert row.no_relevant == len(unanswerable) and row.answerable + row.no_relevant == len(
            outcomes
        )
        assert all(o.ndcg_at_10 is None and o.reciprocal_rank is None for o in unanswerable)
        assert row.abstained == sum(not o.hits for o in unanswerable)
        # the means are over the answerable queries alone
        answerable = [o.ndcg_at_10 for o in outcomes if o.answerable]
        assert row.ndcg_at_10 == round(sum(answerable) / len(answerable), 3)


def test_a_query_without_hits_counts_zero_not_missing(stores) -> None:
    query = next(q for q in load_eval_queries() if q.query_id == "q-15")  # a near miss
    hopeless = replace(query, text="zzzz qqqq", query_id="t-1")
    (outcome,) = run_scorer(Scorer("coverage"), [hopeless], stores)
    assert outcome.hits == () and outcome.empty_reason == "no_matching_terms"
    assert (outcome.recall_at_10, outcome.reciprocal_rank, outcome.ndcg_at_10) == (0, 0, 0)
    row = summarize([outcome], split=query.split, scorer="coverage")
    assert (row.answerable, row.ndcg_at_10, row.empty_answerable) == (1, 0.0, 1)


def test_a_query_sees_only_what_its_user_had_stored_by_its_as_of(stores) -> None:
    # e-054 is asked on 2026-06-01; sam-conv-028 was written in September. Without the cut
    # it was admitted, counted as age 0 (the freshest) and ranked first by bm25+recency.
    query = next(q for q in load_eval_queries() if q.query_id == "e-054")
    early, full = stores.store(query.user_id, query.as_of), stores.store(query.user_id)
    cut = parse_timestamp(query.as_of, "as_of")
    stored = [parse_timestamp(r.stored_at, "stored_at") for r in early.read_all()]
    assert stored and max(stored) <= cut
    later = {r.memory_id for r in full.read_all()} - {r.memory_id for r in early.read_all()}
    assert "sam-conv-028" in later
    assert all(
        parse_timestamp(r.stored_at, "stored_at") > cut
        for r in full.read_all()
        if r.memory_id in later
    )
    assert stores.store(query.user_id, COURSE_AS_OF) is full  # nothing after: the same store
    (outcome,) = run_scorer(Scorer("r", ScoringPolicy.bm25_recency()), [query], stores)
    assert outcome.hits and not set(outcome.hits) & later


def test_the_evidence_threshold_is_tuned_on_dev_only(stores) -> None:
    queries = load_eval_queries()
    dev = [q for q in queries if q.split == "dev"]
    chosen, curve = tune_min_evidence(dev, stores)
    assert chosen == STRICT_MIN_EVIDENCE
    assert curve[0]["min_evidence"] == 0.0 and len(curve) == 20
    best = max(point["objective"] for point in curve)
    assert next(p for p in curve if p["min_evidence"] == chosen)["objective"] == best
    with pytest.raises(RemoteMemoryValidationError, match="dev queries only"):
        tune_min_evidence(queries, stores)


def test_the_indexed_and_the_taught_path_give_the_same_rows(report, stores) -> None:
    taught = Scorer("coverage", score=score_recall_candidate)  # score= takes the taught path
    again = evaluate([taught], stores=stores)
    for split in ("dev", "heldout"):
        assert again.row(split, "coverage") == report.row(split, "coverage")


def test_your_function_from_a_module_or_a_file(capsys) -> None:
    assert load_score_function("memorylib.scoring:score_recall_candidate") is (
        score_recall_candidate
    )
    assert (
        cli(
            [
                "eval",
                "--split",
                "dev",
                "--scorer",
                f"{SOLUTION}:my_score",
                "--scorer",
                "memorylib.scoring:score_recall_candidate",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    mine = next(line for line in lines if line.startswith("dev      yours:my_score"))
    assert mine.split()[2:] == ["77", "0.766", "0.812", "0.737", "0.721", "5/9", "0/77"]
    same = next(line for line in lines if "yours:score_recall_candidate" in line)
    coverage = next(line for line in lines if line.startswith("dev      coverage"))
    assert same.split()[2:] == coverage.split()[2:]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "module:function"),
        ("memorylib.scoring:nothing_here", "not a function"),
        ("missing/file.py:f", "no file"),
        ("memorylib.does_not_exist:f", "cannot load"),
    ],
)
def test_bad_scorer_specs_are_explained(spec, message, capsys) -> None:
    assert cli(["eval", "--scorer", spec]) == 2
    assert message in capsys.readouterr().err


def test_a_failing_function_names_the_query(tmp_path, capsys, stores) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def f(query, candidate, *, as_of, policy, corpus):\n    return 1.0\n")
    assert cli(["eval", "--split", "dev", "--scorer", f"{broken}:f"]) == 2
    err = capsys.readouterr().err
    assert "yours:f failed on q-01" in err and "not a RecallScoreBreakdown" in err
    with pytest.raises(ScoringFunctionError):
        run_scorer(Scorer("x", score=lambda *a, **k: 1 / 0), load_eval_queries()[:1], stores)


def test_scorer_names_must_be_unique_and_splits_known(stores) -> None:
    with pytest.raises(RemoteMemoryValidationError, match="unique"):
        evaluate([Scorer("a"), Scorer("a", ScoringPolicy.bm25())], stores=stores)
    with pytest.raises(RemoteMemoryValidationError, match="splits"):
        evaluate([Scorer("a")], splits=("test",), stores=stores)
