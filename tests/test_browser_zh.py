"""Every Chinese twin (notebooks/zh/) in a real browser: JupyterLab runs a cleared copy top
to bottom (Run All), no cell writes to stderr (where matplotlib warns of a glyph no font has)
or raises, and the outputs carry the edition's own words (its quiz ends "尚未作答：1, 2, 3").
The twin of 04 is also driven and its glyphs checked, in test_browser_score_rank.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from .browser_support import BROWSER_MARKS, ROOT, run_all_outputs

pytestmark = BROWSER_MARKS

TWINS = sorted(p.stem for p in (ROOT / "notebooks" / "zh").glob("[0-9][0-9]*_*.ipynb"))


@pytest.fixture(scope="module")
def browser():
    from .browser_support import launched_chromium

    with launched_chromium() as chromium:
        yield chromium


@pytest.mark.parametrize("stem", [s for s in TWINS if s != "04_scoring"])
def test_the_chinese_twin_runs_top_to_bottom_in_jupyterlab(browser, tmp_path: Path, stem) -> None:
    shown = run_all_outputs(browser, tmp_path, stem, edition="zh")
    assert "尚未作答" in shown
