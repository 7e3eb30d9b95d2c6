"""Notebook 04's "Your turn" (memorylib.notebook.buildit.scoring.check_q11_note): the
breakdown of a note no store holds, for q-11, part by part, with its working (the matched
terms, the age). The reference answer passes, each part is graded on its own with the hint
of the mistake its value matches, the checker's numbers are the contract's, and no output
the notebook shows before the check gives a part away (the note is in no store)."""

from __future__ import annotations

import math
import runpy
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from memorylib import build_recall_candidates, recall_pipeline, score_recall_candidate
from memorylib.datasets import (
    COURSE_USERS,
    course_records,
    load_chapter_entries,
    load_course_entries,
)
from memorylib.notebook.buildit import scoring
from memorylib.notebook.exercises import Verdict

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "notebooks" / "solutions" / "04_scoring.py"
NOTEBOOK = ROOT / "notebooks" / "04_scoring.ipynb"
AS_OF = datetime.fromisoformat("2026-11-30T09:00:00Z")  # q-11's as_of
CAPTURED = datetime.fromisoformat(scoring.Q11_NOTE["captured_at"])
STORED = datetime.fromisoformat(scoring.Q11_NOTE["stored_at"])
AGE = (AS_OF - CAPTURED).total_seconds() / 86_400


def right_answer() -> dict[str, float]:
    return dict(runpy.run_path(str(SOLUTION))["my_breakdown"])


MATCHED = ("index", "recall")


def parts(age: float = AGE, coverage: float = 2 / 7, recency=None, matched=MATCHED) -> dict:
    """A student's breakdown worked forward from an age and a coverage."""
    recency = 1 / (1 + age / 30) if recency is None else recency
    return {
        "matched_terms": matched,
        "lexical_coverage": coverage,
        "age_days": age,
        "recency": recency,
        "lexical_contribution": 0.85 * coverage,
        "recency_contribution": 0.15 * recency,
        "total": 0.85 * coverage + 0.15 * recency,
    }


def wrong_lines(answer: object) -> dict[str, str]:
    """{part: its line} of a wrong verdict."""
    result = scoring.check_q11_note(answer)
    assert result.verdict is Verdict.WRONG, result
    return {line.split(":")[0]: line for line in result.details if "Hint:" in line}


def rounded(answer: dict) -> dict:
    return {k: v if k == "matched_terms" else round(v, 6) for k, v in answer.items()}


def test_the_reference_solution_passes_rounded_or_not() -> None:
    answer = right_answer()
    assert scoring.check_q11_note(answer).is_right
    assert scoring.check_q11_note(rounded(answer)).is_right
    assert scoring.check_q11_note(parts()).is_right  # worked forward the same way
    assert scoring.check_q11_note(parts(matched=["Recall", "index"])).is_right
    assert scoring.check_q11_note(parts(matched={"index", "recall"})).is_right
    message = scoring.check_q11_note(answer).message
    assert "15 of q-11's 40 candidates score higher" in message
    assert "would not be among its 5 hits" in message


def test_rounded_parts_added_pass_and_a_fraction_rounded_short_fails() -> None:
    r = rounded(right_answer())
    added = {**r, "total": r["lexical_contribution"] + r["recency_contribution"]}
    assert scoring.check_q11_note(added).is_right
    drifted = {**r, "lexical_contribution": 0.85 * round(2 / 7, 3)}  # 0.2431, not 0.242857
    assert list(wrong_lines(drifted)) == ["lexical_contribution"]


def test_the_matched_terms_are_graded_with_their_own_hints() -> None:
    assert (
        "not among the note's terms"
        in wrong_lines(parts(matched=(*MATCHED, "the")))["matched_terms"]
    )
    assert (
        "not among q-11's 7 terms"
        in wrong_lines(parts(matched=(*MATCHED, "green")))["matched_terms"]
    )
    assert (
        "not among the note's terms"
        in wrong_lines(parts(matched=(*MATCHED, "status"), coverage=3 / 7))["matched_terms"]
    )  # a "status note" that does not say "status"
    lines = wrong_lines(parts(matched=MATCHED[1:], coverage=1 / 7))
    assert "is missing" in lines["matched_terms"]
    assert "right for your matched_terms" in lines["lexical_coverage"]
    assert "a tuple of str" in wrong_lines(parts(matched="index recall"))["matched_terms"]


def test_the_checker_numbers_are_the_contracts() -> None:
    """The note matches index and recall; appended to Mei's store it is a candidate of
    q-11 with the checker's total, below 15 others, so not one of the five hits."""
    query, note = scoring._q11()[1], scoring._q11()[2]
    records = (*course_records(COURSE_USERS[0]), note)
    candidates = build_recall_candidates(query, records).candidates
    totals = {
        c.record.memory_id: score_recall_candidate(query, c, as_of=query.issued_at)
        for c in candidates
    }
    mine = totals.pop(note.memory_id)
    assert mine.matched_terms == ("index", "recall")
    truth = scoring._q11()[-1]
    assert math.isclose(truth["age_days"], AGE)
    assert mine.total == truth["total"]
    assert sum(b.total > mine.total for b in totals.values()) == 15
    hits = recall_pipeline(query, records, as_of=query.issued_at).hits
    assert note.memory_id not in {hit.memory_id for hit in hits}


def test_the_note_is_in_no_store() -> None:
    texts = {(e.summary, e.content) for e in (*load_course_entries(), *load_chapter_entries())}
    assert (scoring.Q11_NOTE["summary"], scoring.Q11_NOTE["content"]) not in texts
    assert not any(scoring.Q11_NOTE["summary"] in summary for summary, _ in texts)


def test_one_part_off_is_wrong_and_only_that_part_is_named() -> None:
    answer = right_answer()
    lines = wrong_lines({**answer, "recency": answer["recency"] + 0.01})
    assert list(lines) == ["recency"]
    assert list(wrong_lines({**answer, "recency": round(answer["recency"], 6) + 2e-6})) == [
        "recency"
    ]  # two units in the sixth place are wrong


@pytest.mark.parametrize("answer", [0.38032, "0.38", [0.5], True], ids=repr)
def test_an_answer_that_is_not_a_dict_is_wrong(answer) -> None:
    assert scoring.check_q11_note(answer).verdict is Verdict.WRONG


def test_unknown_keys_and_non_numbers_are_named() -> None:
    assert "Unknown key" in scoring.check_q11_note({"coverage": 2 / 7}).message
    assert "a number" in wrong_lines({"total": "0.62"})["total"]
    assert "a number" in wrong_lines({"total": True})["total"]
    assert "a number" in wrong_lines({"total": float("nan")})["total"]


def test_a_part_at_a_time() -> None:
    assert scoring.check_q11_note(...).verdict is Verdict.NOT_ANSWERED
    assert scoring.check_q11_note({}).verdict is Verdict.NOT_ANSWERED
    assert scoring.check_q11_note(dict.fromkeys(scoring.Q11_PARTS, ...)).verdict is (
        Verdict.NOT_ANSWERED
    )
    so_far = scoring.check_q11_note(
        {"matched_terms": MATCHED, "lexical_coverage": 2 / 7, "age_days": AGE}
    )
    assert so_far.verdict is Verdict.NOT_ANSWERED
    assert "Not answered yet for recency" in so_far.message and "Right so far" in so_far.message
    early = scoring.check_q11_note({"lexical_coverage": 2 / 2})
    assert early.verdict is Verdict.WRONG
    assert any("Not answered yet for matched_terms, age_days" in line for line in early.details)


def test_the_likely_mistakes_get_their_own_hints() -> None:
    whole = wrong_lines(parts(age=math.floor(AGE)))
    assert "the age has a fraction" in whole["age_days"]
    assert "right for your age_days" in whole["recency"]
    assert "fix it and this follows" in whole["recency_contribution"]
    assert "adds your two contributions" in whole["total"]
    assert "lexical_coverage" not in whole

    stored = wrong_lines(parts(age=(AS_OF - STORED).total_seconds() / 86_400))
    assert "not from stored_at" in stored["age_days"]

    for counted in (3, 4, 5, 6):  # what, is, the and/or of left out of the query's 7 terms
        lines = wrong_lines(parts(coverage=2 / counted))
        assert "not every query term was counted" in lines["lexical_coverage"]
        assert "right for your lexical_coverage" in lines["lexical_contribution"]
    assert "count the matches again" in wrong_lines(parts(coverage=3 / 7))["lexical_coverage"]
    assert "QUERY's terms" in wrong_lines(parts(coverage=2 / 16))["lexical_coverage"]

    exponential = wrong_lines(parts(recency=math.exp(-AGE / 30)))
    assert "not exp(-age_days / 30)" in exponential["recency"]
    halving = wrong_lines(parts(recency=0.5 ** (AGE / 30)))
    assert "does not halve every 30 days" in halving["recency"]
    assert (
        "divide the age by the 30-day window"
        in wrong_lines(parts(recency=1 / (1 + AGE)))["recency"]
    )

    right = right_answer()
    swapped = wrong_lines(
        {
            **right,
            "lexical_contribution": 0.15 * right["lexical_coverage"],
            "recency_contribution": 0.85 * right["recency"],
            "total": 0.15 * right["lexical_coverage"] + 0.85 * right["recency"],
        }
    )
    assert len(swapped) == 3
    assert (
        "swapped" in swapped["lexical_contribution"]
        and "swapped" in swapped["recency_contribution"]
    )
    assert "adds your two contributions" in swapped["total"]
    unweighted = wrong_lines({**right, "total": right["lexical_coverage"] + right["recency"]})
    assert "weight the parts" in unweighted["total"]


def test_a_total_copied_from_the_screen_is_named() -> None:
    query, candidate_id = scoring._q11()[1], scoring.Q11_RECORD
    records = course_records(COURSE_USERS[0])
    result = recall_pipeline(query, records, as_of=query.issued_at)
    shown = {hit.memory_id: hit.score_breakdown.total for hit in result.hits}
    assert candidate_id not in shown  # the record q-11 wants misses the top 5
    for memory_id, total in shown.items():
        line = wrong_lines({**right_answer(), "total": total})["total"]
        assert f"that is the total of {memory_id}" in line
    (wanted,) = [
        c
        for c in build_recall_candidates(query, records).candidates
        if c.record.memory_id == candidate_id
    ]
    total = score_recall_candidate(query, wanted, as_of=query.issued_at).total
    assert total < min(shown.values())
    line = wrong_lines({**right_answer(), "total": total})["total"]
    assert f"that is the total of {candidate_id}" in line


def test_no_cell_before_the_check_shows_a_part_of_the_answer() -> None:
    """No number of the answer (its coverage 2/7, age, recency, both contributions and
    total) is in any cell's source or output before the check, at 6 places, at 3 (the
    chart labels) or, for the age, the 2 of score_frame's age column: 2 of 7 terms is a
    count no record the notebook shows matches, for q-11 or its other 7-term query."""
    truth = scoring._q11()[-1]
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    check = next(i for i, c in enumerate(cells) if "check_q11_note(my_breakdown)" in c.source)
    shown = []
    for cell in cells[:check]:
        shown.append(cell.source)
        for output in cell.get("outputs", []):
            shown.append(output.get("text", ""))
            shown += [str(value) for value in output.get("data", {}).values()]
    screen = "\n".join(shown)
    for name in scoring.Q11_PARTS[1:]:
        assert f"{truth[name]:.6f}" not in screen, name
        assert f"{truth[name]:.3f}" not in screen, name
    assert f"{truth['age_days']:.2f}" not in screen
