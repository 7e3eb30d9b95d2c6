"""Notebook 05's "Your turn" (memorylib.notebook.buildit.ranking.check_tie_order): the six
rows make every one of the four keys decide, the reference answer passes, a list that skips
a key is caught with that key's hint, and the notebook never shows the order before the
check."""

from __future__ import annotations

import itertools
import re
import runpy
from pathlib import Path

import nbformat

from memorylib import build_recall_candidates, recall_pipeline, score_recall_candidate
from memorylib.notebook.buildit import ranking
from memorylib.notebook.exercises import Verdict

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "notebooks" / "solutions" / "05_stable_rank.py"
NOTEBOOK = ROOT / "notebooks" / "05_stable_rank.ipynb"


def library_order() -> list[str]:
    query, records = ranking.tie_exercise()
    return [hit.memory_id for hit in recall_pipeline(query, records, as_of=query.issued_at).hits]


def test_the_reference_solution_is_the_library_order_whatever_the_storage_order() -> None:
    answer = runpy.run_path(str(SOLUTION))["my_order"]
    assert ranking.check_tie_order(answer).is_right
    assert ranking.check_tie_order(tuple(answer)).is_right
    assert answer == library_order()
    query, records = ranking.tie_exercise()
    reversed_order = recall_pipeline(query, records[::-1], as_of=query.issued_at).hits
    assert [hit.memory_id for hit in reversed_order] == answer
    assert ranking.check_tie_order(...).verdict is Verdict.NOT_ANSWERED


def test_each_of_the_four_keys_decides_one_pair_of_neighbours() -> None:
    keys = ranking._tie_keys()
    order = library_order()
    deciding = []
    for above, below in itertools.pairwise(order):
        pair = zip(keys[above], keys[below], strict=True)
        deciding.append(next(n for n, (a, b) in enumerate(pair) if a != b))
    assert set(deciding) == {0, 1, 2, 3}, deciding  # total, coverage, captured_at, memory_id


def test_the_five_second_tie_exists_only_because_totals_are_rounded() -> None:
    query, records = ranking.tie_exercise()
    scored = {
        c.record.memory_id: score_recall_candidate(query, c, as_of=query.issued_at)
        for c in build_recall_candidates(query, records).candidates
    }
    assert scored["note-c"].total == scored["note-a"].total == scored["note-b"].total
    assert scored["note-c"].recency > scored["note-a"].recency  # 5 seconds fresher


def test_a_key_skipped_or_reversed_gets_that_keys_hint() -> None:
    cases = {
        "key 1": list(reversed(library_order())),  # lowest total first
        "key 2": ["note-d", "note-e", "note-f", "note-c", "note-a", "note-b"],  # no coverage key
        "key 3": ["note-d", "note-f", "note-e", "note-a", "note-b", "note-c"],  # older first
        "key 4": ["note-d", "note-f", "note-e", "note-c", "note-b", "note-a"],  # larger id first
    }
    for key, answer in cases.items():
        result = ranking.check_tie_order(answer)
        assert result.verdict is Verdict.WRONG and key in result.message, (key, result.message)


def test_the_storage_order_sort_and_malformed_answers_are_named() -> None:
    _query, records = ranking.tie_exercise()
    keys = ranking._tie_keys()
    naive = sorted((r.memory_id for r in records), key=lambda m: keys[m][0])
    assert naive != library_order()
    assert "sorted(..., key=total)" in ranking.check_tie_order(naive).message
    assert "exactly once" in ranking.check_tie_order(["note-d"]).message
    assert "exactly once" in ranking.check_tie_order([*library_order()[:5], "note-a"]).message
    assert ranking.check_tie_order("note-d").verdict is Verdict.WRONG
    assert ranking.check_tie_order([1, 2, 3, 4, 5, 6]).verdict is Verdict.WRONG


def test_the_notebook_never_shows_the_order_before_the_check() -> None:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    check = next(i for i, c in enumerate(cells) if "check_tie_order(my_order)" in c.source)
    shown = []
    for cell in cells[:check]:
        shown.append(cell.source)
        for output in cell.get("outputs", []):
            shown.append(output.get("text", ""))
            shown += [str(value) for value in output.get("data", {}).values()]
    in_order = r"\W+".join(re.escape(m) for m in library_order())
    assert not re.search(in_order, "\n".join(shown))
