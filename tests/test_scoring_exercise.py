"""Notebook 04's "Your turn" (memorylib.notebook.buildit.scoring.check_q11_total): the
reference answer passes, each typical mistake gets its own hint, and nothing the notebook
shows before the check gives the answer away."""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest

from memorylib import recall_pipeline, score_recall_candidate
from memorylib.datasets import course_records
from memorylib.notebook.buildit import scoring
from memorylib.notebook.exercises import Verdict, same

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "notebooks" / "solutions" / "04_scoring.py"
NOTEBOOK = ROOT / "notebooks" / "04_scoring.ipynb"
GENERIC = "Not quite. coverage = matched / query terms"


def right_total() -> float:
    query, candidate, as_of = scoring.q11_inputs()
    return score_recall_candidate(query, candidate, as_of=as_of).total


def test_the_reference_solution_passes_and_a_near_miss_does_not() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_total"]
    assert scoring.check_q11_total(answer).is_right
    assert scoring.check_q11_total(round(answer, 6)).is_right
    assert scoring.check_q11_total(answer + 0.01).verdict is Verdict.WRONG
    assert scoring.check_q11_total(...).verdict is Verdict.NOT_ANSWERED


@pytest.mark.parametrize("answer", ["0.41", True, float("nan")], ids=repr)
def test_an_answer_that_is_not_a_number_is_wrong(answer) -> None:
    assert scoring.check_q11_total(answer).verdict is Verdict.WRONG


def test_every_catalogued_mistake_gets_its_own_hint() -> None:
    mistakes = scoring._q11_mistakes()
    totals = [round(value, 6) for value, _ in mistakes]
    assert len(set(totals)) == len(totals), "two mistakes give the same number"
    assert not any(same(right_total(), value) for value in totals), "a mistake is right"
    for value, hint in mistakes:
        result = scoring.check_q11_total(value)
        assert result.verdict is Verdict.WRONG and hint in result.message, (value, result)
        assert not result.message.startswith(GENERIC)


def test_the_likely_mistakes_are_recognised_as_a_student_computes_them() -> None:
    age = 68 + 2 / 24  # 2026-09-23T07:00 -> 2026-11-30T09:00
    all_of_them = "'what', 'is', 'the' and 'of' are terms too"
    assert all_of_them in scoring.check_q11_total(0.85 * 3 / 3 + 0.15 / (1 + age / 30)).message
    assert all_of_them in scoring.check_q11_total(0.85 * 3 / 4 + 0.15 / (1 + age / 30)).message
    assert "whole days" in scoring.check_q11_total(0.85 * 3 / 7 + 0.15 / (1 + 68 / 30)).message
    assert "swapped" in scoring.check_q11_total(0.15 * 3 / 7 + 0.85 / (1 + age / 30)).message


def test_the_notebook_shows_the_hits_but_not_the_answer() -> None:
    query, _candidate, as_of = scoring.q11_inputs()
    hits = recall_pipeline(query, course_records(), as_of=as_of).hits
    assert len(hits) == 5 and scoring.Q11_RECORD not in {hit.memory_id for hit in hits}
    assert min(hit.score_breakdown.total for hit in hits) > right_total()

    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    check = next(i for i, c in enumerate(cells) if "check_q11_total(my_total)" in c.source)
    shown = []
    for cell in cells[:check]:
        shown.append(cell.source)
        for output in cell.get("outputs", []):
            shown.append(output.get("text", ""))
            shown += [str(value) for value in output.get("data", {}).values()]
    assert f"{right_total():.6f}" not in "\n".join(shown)
