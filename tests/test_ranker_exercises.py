"""memorylib.notebook.ranker_exercises: notebook 10's "Your turn" check (idf-weighted coverage).

The reference solution passes, the placeholder is not answered, every typical mistake is
rejected with its hint, and nothing on screen before the attempt gives the formula away.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from memorylib import RecallScoreBreakdown, score_recall_candidate
from memorylib.notebook.exercises import Verdict
from memorylib.notebook.ranker_exercises import BREAKDOWN_FIELDS, check_my_score
from memorylib.scoring import DEFAULT_POLICY, evidence, idf

SOLUTION_PATH = (
    Path(__file__).resolve().parents[1]
    / "notebooks"
    / "solutions"
    / "10_beyond_the_teaching_ranker.py"
)


def _solution():
    spec = importlib.util.spec_from_file_location("solution_10", SOLUTION_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.my_score


reference = _solution()


# -- the build-it exercise -----------------------------------------------------------------------


def test_the_checker_accepts_the_reference_solution() -> None:
    result = check_my_score(reference)
    assert result.is_right, result.text
    assert "3 worked examples and on 40 generated inputs" in result.message


def test_the_placeholder_and_an_empty_body_are_not_answered() -> None:
    def blank(query, candidate, *, as_of, policy, corpus):
        """Template as committed."""

    assert check_my_score(...).verdict is Verdict.NOT_ANSWERED
    assert check_my_score(blank).verdict is Verdict.NOT_ANSWERED


def _replace(**fields):
    def score(query, candidate, *, as_of, policy, corpus):
        good = reference(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
        changed = {k: (v(good) if callable(v) else v) for k, v in fields.items()}
        return dataclasses.replace(good, **changed)

    return score


def _chapter_with_name(query, candidate, *, as_of, policy, corpus):
    """Plain coverage under the new name: every term weighs the same."""
    b = score_recall_candidate(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
    return dataclasses.replace(b, scorer="idf_coverage", lexical_score=b.lexical_coverage)


def _idf_over_term_count(query, candidate, *, as_of, policy, corpus):
    good = reference(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
    share = sum(idf(t, corpus) for t in candidate.matched_terms) / len(query.terms)
    lexical = round(policy.lexical_weight * share, 6)
    return dataclasses.replace(
        good,
        lexical_score=round(share, 6),
        lexical_contribution=lexical,
        total=round(lexical + good.recency_contribution, 6),
    )


def _chapter_policy(query, candidate, *, as_of, policy, corpus):
    return reference(query, candidate, as_of=as_of, policy=DEFAULT_POLICY, corpus=corpus)


def _raises(query, candidate, *, as_of, policy, corpus):
    return 1 / 0


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a, **k: 0.5, "return a RecallScoreBreakdown, not float"),
        (score_recall_candidate, "lexical_score is None"),  # the chapter's, not yours
        (_replace(scorer="mine"), "scorer: the contract has 'idf_coverage', yours 'mine'"),
        (_replace(scorer="coverage"), "the scorer is not named"),
        (_chapter_with_name, "plain coverage"),
        (_idf_over_term_count, "not by their number"),
        (_replace(lexical_score=None), "set it to the idf-weighted share"),
        (_replace(lexical_coverage=lambda b: b.lexical_score), "lexical_coverage stays"),
        (_replace(total=lambda b: b.lexical_contribution), "total: the contract has"),
        (_chapter_policy, "Use the policy you are given"),
        (_replace(lexical_contribution=lambda b: b.lexical_score), "lexical_contribution: the"),
        (_replace(matched_terms=()), "matched_terms"),
        (_replace(total=lambda b: b.total + 1e-9), "round every float to 6 places"),
        (_raises, "ZeroDivisionError"),
    ],
)
def test_the_checker_rejects_wrong_solutions_with_a_hint(answer, hint) -> None:
    result = check_my_score(answer)
    assert result.verdict is Verdict.WRONG, result.text
    assert hint in result.text


def test_a_scorer_that_returns_the_librarys_evidence_unchanged_is_refused() -> None:
    from memorylib.notebook.ranker_exercises import MY_SCORE

    def via_evidence(query, candidate, *, as_of, policy, corpus):
        good = reference(query, candidate, as_of=as_of, policy=policy, corpus=corpus)
        return dataclasses.replace(good, lexical_score=round(evidence(query, candidate, corpus), 6))

    # its numbers are the reference's: only the refusal tells it apart
    assert all(e(via_evidence) == e(reference) for e in MY_SCORE.examples.values())
    result = check_my_score(via_evidence)
    assert result.verdict is Verdict.WRONG, result.text
    assert "calls the library's evidence" in result.text


def test_a_fixed_window_is_caught_on_a_generated_case() -> None:
    def thirty_days(query, candidate, *, as_of, policy, corpus):
        fixed = dataclasses.replace(policy, recency_window_days=30.0)
        good = reference(query, candidate, as_of=as_of, policy=fixed, corpus=corpus)
        return dataclasses.replace(good, recency_window_days=policy.recency_window_days)

    result = check_my_score(thirty_days)
    assert result.verdict is Verdict.WRONG and "not 30" in result.message
    assert result.counterexample is not None and result.counterexample.stage == "generated"


def test_the_checker_never_shows_the_formula_before_an_attempt() -> None:
    text = check_my_score(...).text
    assert "idf(" not in text and "sum" not in text


def test_the_check_compares_every_field_of_the_breakdown_a_scorer_sets() -> None:
    # the fields the notebook lists before the template are the ones the check compares
    assert set(BREAKDOWN_FIELDS) <= {f.name for f in dataclasses.fields(RecallScoreBreakdown)}
    assert "scorer" in BREAKDOWN_FIELDS and "lexical_score" in BREAKDOWN_FIELDS


# -- the notebook: the exercise is committed unanswered, and no output hands it over ----------

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "10_beyond_the_teaching_ranker.ipynb"


def _outputs(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts += [str(v) for k, v in output.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


def test_the_notebooks_exercise_is_committed_unanswered_and_never_answered_on_screen() -> None:
    import nbformat

    from memorylib.notebook.ranker_exercises import MY_SCORE

    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    (template,) = [c for c in cells if c.cell_type == "code" and "def my_score(" in c.source]
    assert template.source.rstrip().endswith('"""\n    ...')  # the body is the placeholder
    shown = "\n".join(_outputs(c) for c in cells if c.cell_type == "code")
    assert "⏳ Not answered yet" in shown and "✅" not in shown and "❌" not in shown
    # the answer's one new number, the idf share, of each worked example: never printed
    # (a share of 0 or 1, every term or none, gives nothing away)
    shares = [call(reference).lexical_score for call in MY_SCORE.examples.values()]
    assert any(0 < share < 1 for share in shares)
    for share in shares:
        if 0 < share < 1:
            assert f"{share:.6f}".rstrip("0") not in shown, share
