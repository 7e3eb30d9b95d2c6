"""Notebooks 10 and 11 in real JupyterLab: Run All on a cleared copy, and every cell runs.

10 loads the benchmark data, the analyzers (jieba, the Snowball stemmers) and runs one
LoCoMo conversation fresh; 11 starts a throwaway PostgreSQL when it can (and says so when it
cannot), races five processes against SQLite and draws its charts. Each must run top to
bottom in the browser, with no error output, and show the outputs its prose reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .browser_support import BROWSER_MARKS, launched_chromium, run_all_outputs

pytestmark = BROWSER_MARKS

# notebook -> texts its outputs must show once Run All has finished
SHOWN = {
    "10_beyond_the_teaching_ranker": [
        "conversation 30's 840 rankings equal the committed ones: True",
    ],
    "11_from_file_to_service": [
        "JSONL and SQLite return equal RecallResults: True",
        "SQLite's RecallResult equals the taught path's: True",
        "JSONL and SQLite hold equal records: True",
    ],
}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as chromium:
        yield chromium


@pytest.mark.parametrize("stem", list(SHOWN))
def test_runs_top_to_bottom_in_jupyterlab(browser, tmp_path: Path, stem: str) -> None:
    shown = run_all_outputs(browser, tmp_path, stem)
    for text in SHOWN[stem]:
        assert text in shown, f"{stem}: {text!r} is not in the outputs"
