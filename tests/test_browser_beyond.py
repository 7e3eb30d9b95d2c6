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

from .browser_support import BROWSER_MARKS, ROOT, cleared_copy, jupyter_lab, launched_chromium

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
STEP_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as chromium:
        yield chromium


@pytest.mark.parametrize("stem", list(SHOWN))
def test_runs_top_to_bottom_in_jupyterlab(browser, tmp_path: Path, stem: str) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    copy = cleared_copy(ROOT / "notebooks" / f"{stem}.ipynb", root)
    with jupyter_lab(root, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(STEP_TIMEOUT_MS)
            url = f"{lab.base}/lab/workspaces/{stem}/tree/{copy.name}?reset&token={lab.token}"
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            # the last code cell prints the self-check placeholder: every cell has run
            page.locator(".jp-OutputArea-output", has_text="Not answered yet").wait_for(
                state="attached", timeout=180_000
            )
            status.get_by_text("Idle").wait_for(timeout=60_000)
            # textContent: JupyterLab does not lay out cells scrolled out of view
            shown = "\n".join(page.locator(".jp-OutputArea-output").all_text_contents())
            errors = page.locator('.jp-OutputArea-output[data-mime-type*="stderr"]')
            assert errors.count() == 0, errors.all_text_contents()
            assert "Traceback" not in shown
            for text in SHOWN[stem]:
                assert text in shown, f"{stem}: {text!r} is not in the outputs"
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()
