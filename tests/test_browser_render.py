"""Notebooks 06, 06b and 06c in a real browser: JupyterLab runs each top to bottom (Run
All) on a cleared copy, every code cell gets its execution count, and no cell shows an
error. 06c reads the build-it cells of 02-06 from its folder, so they are served beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from .browser_support import BROWSER_MARKS, ROOT, cleared_copy, jupyter_lab, launched_chromium

pytestmark = BROWSER_MARKS

NOTEBOOKS = ROOT / "notebooks"
STAGE_NOTEBOOKS = ("02_normalize", "03_candidates", "04_scoring", "05_stable_rank", "06_render")
RUN_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as chromium:
        yield chromium


def prompts(page) -> list[str]:
    # textContent: JupyterLab may leave off-screen cells unrendered (content-visibility)
    return page.evaluate(
        "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
        ".map(e => e.textContent.trim())"
    )


@pytest.mark.parametrize("stem", ["06_render", "06b_profile", "06c_capstone"])
def test_runs_top_to_bottom_in_jupyterlab(browser, tmp_path: Path, stem: str) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    for name in dict.fromkeys([*STAGE_NOTEBOOKS, stem]):
        cleared_copy(NOTEBOOKS / f"{name}.ipynb", root)
    code_cells = sum(
        cell.cell_type == "code"
        for cell in nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4).cells
    )
    with jupyter_lab(root, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.goto(
                f"{lab.base}/lab/workspaces/{stem}/tree/{stem}.ipynb?reset&token={lab.token}",
                wait_until="domcontentloaded",
                timeout=60_000,
            )
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            expected = [f"[{n}]:" for n in range(1, code_cells + 1)]
            page.wait_for_function(
                "n => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                ".filter(e => /^\\[\\d+\\]:$/.test(e.textContent.trim())).length >= n",
                arg=code_cells,
                timeout=RUN_TIMEOUT_MS,
            )
            status.get_by_text("Idle").wait_for(timeout=30_000)
            assert prompts(page) == expected
            errors = page.locator(".jp-OutputArea-output[data-mime-type*='stderr']")
            texts = [t for t in errors.all_text_contents() if re.search(r"Error|Traceback", t)]
            assert not texts, texts
            outputs = " ".join(page.locator(".jp-OutputArea-output").all_text_contents())
            assert "Not answered yet" in outputs and "✅" not in outputs
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()
