"""Notebook 09 in a real browser: JupyterLab runs it top to bottom, and the stand-in box works.

The test serves a CLEARED copy of notebook 09, runs all cells, checks that no cell raised,
then asks the stand-in model a question the notebook never asks, on both tool-result paths,
and checks that the transcript shows the query and the hits that ``agent_loop`` with a
``StandInModel`` gives for the same question in this process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memorylib import TEACHING_AS_OF, RecallEngine, build_system_prompt
from memorylib.agent import agent_loop
from memorylib.datasets import build_chapter_store
from memorylib.replay import StandInModel, derive_query

from .browser_support import (
    BROWSER_MARKS,
    QUIZ_PLACEHOLDER,
    ROOT,
    SCREENSHOTS,
    cleared_copy,
    jupyter_lab,
)
from .browser_support import launched_chromium as chromium

pytestmark = BROWSER_MARKS

NOTEBOOK = ROOT / "notebooks" / "09_live_agent.ipynb"
QUESTION = "How do recall hits carry provenance and a score breakdown?"
STEP_TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


def expected_hits(tmp_path: Path, tool_result: str) -> list[str]:
    store = build_chapter_store(tmp_path / tool_result)
    events = []
    messages = agent_loop(
        [{"role": "user", "content": QUESTION}],
        client=StandInModel(),
        model=StandInModel.model,
        engine=RecallEngine(store),
        system=build_system_prompt(store, tool_result=tool_result),
        tool_result=tool_result,
        as_of=TEACHING_AS_OF,
        on_event=events.append,
    )
    hits = [e.payload["content"] for e in events if e.kind == "tool_result"]
    assert hits, "the test needs a tool call"
    (answer,) = [b["text"] for b in messages[-1]["content"] if b["type"] == "text"]
    return [line for line in answer.splitlines() if "memory_id" in line]


def test_live_agent_runs_in_jupyterlab_and_the_stand_in_answers(browser, tmp_path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    served = cleared_copy(NOTEBOOK, root)
    home = tmp_path / "home"
    home.mkdir()
    with jupyter_lab(root, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(STEP_TIMEOUT_MS)
            url = f"{lab.base}/lab/workspaces/agent-test/tree/{served.name}?reset&token={lab.token}"
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            page.locator(".jp-OutputArea-output", has_text=QUIZ_PLACEHOLDER).last.wait_for(
                state="attached", timeout=120_000
            )
            status.get_by_text("Idle").wait_for(timeout=30_000)
            assert page.locator(".jp-OutputArea-output", has_text="Traceback").count() == 0
            # the probe ran in a fresh process: no SDK after import, the store after runtime
            probe = page.locator(".jp-OutputArea-output", has_text="import memorylib:").first
            assert "anthropic loaded False · files []" in (probe.text_content() or "")

            box = page.locator(".widget-text input[type='text']").first
            box.scroll_into_view_if_needed()
            box.fill(QUESTION)
            box.press("Enter")
            transcript = page.locator(".widget-output").first
            query = derive_query(QUESTION)
            page.wait_for_function(
                "([el, q]) => el.innerText.includes(q)",
                arg=[transcript.element_handle(), f"[stand-in] user: {QUESTION}"],
            )
            text = transcript.inner_text()
            assert f'recall_history({{"query": "{query}", "limit": 3}})' in text
            assert "tool_result JSON" in text
            for line in expected_hits(tmp_path, "json"):
                assert line in text

            page.locator(".widget-toggle-buttons button", has_text="recalled_context").click()
            page.wait_for_function(
                "el => el.innerText.includes('tool_result <recalled_context>')",
                arg=transcript.element_handle(),
            )
            text = transcript.inner_text()
            for line in expected_hits(tmp_path, "recalled_context"):
                assert line in text
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "09-stand-in-lab.png"))
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()
