"""Notebooks 02 and 03 in a real browser: JupyterLab runs each top to bottom, no cell
writes to stderr or raises, and the query box answers typing the way its static cell says.

Each test serves a CLEARED copy of the notebook from a temporary directory (so nothing
is saved into the repository), runs all cells through the Run menu, then types into the
widget's text box and waits for the widget's HTML to show what stage 1 / stage 2 give.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .browser_support import BROWSER_MARKS, ROOT, cleared_copy, jupyter_lab

pytestmark = BROWSER_MARKS

STEP_TIMEOUT_MS = 20_000
# notebook -> (typed text, what the widget then shows) steps, in order
STEPS = {
    "02_normalize": [("Straße  ＭＥＭＯＲＹ", "strasse memory"), ("?!...", "no searchable terms")],
    "03_candidates": [
        ("kubernetes operator helm chart", "no term overlap"),
        ("memory block budget tokens", "candidates 20"),
        ("?!", "rejected"),
    ],
}


@pytest.fixture(scope="module")
def browser():
    from .browser_support import launched_chromium

    with launched_chromium() as chromium:
        yield chromium


@pytest.mark.parametrize("stem", list(STEPS))
def test_runs_top_to_bottom_and_the_box_answers(browser, tmp_path: Path, stem: str) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    served = cleared_copy(ROOT / "notebooks" / f"{stem}.ipynb", root)
    with jupyter_lab(root, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(STEP_TIMEOUT_MS)
            url = f"{lab.base}/lab/workspaces/{stem}/tree/{served.name}?reset&token={lab.token}"
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            # the build-it check, near the end, prints its placeholder once every cell above ran
            page.locator(
                ".jp-OutputArea-output", has_text="still raises NotImplementedError"
            ).wait_for(state="attached", timeout=120_000)
            status.get_by_text("Idle").wait_for(timeout=60_000)
            stderr = page.locator(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
            )
            assert stderr.count() == 0, stderr.all_text_contents()
            pending = [p for p in page.locator(".jp-InputPrompt").all_text_contents() if "*" in p]
            assert not pending, pending
            field = page.locator(".widget-text input[type='text']").first
            field.scroll_into_view_if_needed()
            shown = page.locator(".widget-html").first
            for typed, expected in STEPS[stem]:
                field.fill(typed)
                shown.get_by_text(expected).first.wait_for(state="attached")
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()
