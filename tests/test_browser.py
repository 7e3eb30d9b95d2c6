"""The query playground in a real browser: JupyterLab (Run All) and the Voila app.

Each test serves a CLEARED copy of notebook 08 from a temporary directory, drives the
widgets the way a student does (type a query, move the limit slider with the keyboard,
pick another user, then the bm25 scorer) and, after every step, checks that the hits
table shows exactly the memory ids that ``playground_view`` computes for the same state
in this process.
Screenshots go to ``artifacts/screenshots/``; step latencies (input to redrawn table, as
the browser sees it) to ``artifacts/browser_timings.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from memorylib.datasets import COURSE_USERS
from memorylib.notebook.playground import (
    DEFAULT_STATE,
    PlaygroundCatalog,
    check_isolation_why,
    playground_view,
)
from memorylib.store import user_scope_for

from .browser_support import (
    BROWSER_MARKS,
    ROOT,
    SCREENSHOTS,
    cleared_copy,
    jupyter_lab,
    launched_chromium,
    voila,
)

pytestmark = BROWSER_MARKS

NOTEBOOK = ROOT / "notebooks" / "08_query_playground.ipynb"
TIMINGS = ROOT / "artifacts" / "browser_timings.json"
OMAR = COURSE_USERS[1]
TYPED = "memory recall"
STEP_TIMEOUT_MS = 20_000
# what the last cell prints, the quiz's placeholder (the first self-check, two cells
# earlier, says "Not answered yet" too)
LAST_OUTPUT = check_isolation_why(...).message


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory):
    """The ids ``playground_view`` gives for a state, computed here with memorylib."""
    catalog = PlaygroundCatalog(tmp_path_factory.mktemp("expected"))

    def ids(**changes: object) -> list[str]:
        view = playground_view(replace(DEFAULT_STATE, **changes), catalog)
        assert view.error is None and view.hit_ids, f"the test needs hits for {changes}"
        return view.hit_ids

    return ids


@pytest.fixture(scope="module")
def timings() -> Iterator[dict[str, dict[str, float]]]:
    measured: dict[str, dict[str, float]] = {}
    yield measured
    if measured:
        TIMINGS.parent.mkdir(parents=True, exist_ok=True)
        TIMINGS.write_text(json.dumps(measured, indent=2) + "\n")


def shown_ids(page) -> list[str]:
    cells = page.locator("table.playground-hits td.memory-id")
    # textContent, not innerText: JupyterLab renders off-screen cells with
    # content-visibility hidden, and innerText of an unrendered node is "".
    return [text.strip() for text in cells.all_text_contents()]


def wait_for_table(page, *, query: str, limit: int, user: str, scorer: str = "coverage") -> float:
    """Wait until the hits table shows exactly this state; return when it did."""
    selector = (
        f'table.playground-hits[data-query="{query}"][data-limit="{limit}"]'
        f'[data-user-scope="{user_scope_for(user)}"][data-scorer="{scorer}"]'
    )
    page.wait_for_selector(selector, state="attached", timeout=STEP_TIMEOUT_MS)
    return time.perf_counter()


def shoot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.locator(".memorylib-playground").scroll_into_view_if_needed()
    page.screenshot(path=str(path))
    return path


def drive_playground(page, name: str, expected, timings) -> None:
    """Type, slide, switch user and scorer; after each step the table must match memorylib."""
    mei = COURSE_USERS[0]
    wait_for_table(page, query=DEFAULT_STATE.query, limit=5, user=mei)
    assert shown_ids(page) == expected()
    shoot(page, f"{name}-0-opening")
    steps: dict[str, float] = {}

    field = page.locator(".playground-query input[type='text']")
    field.click()
    field.press("Control+A")
    start = time.perf_counter()
    field.press_sequentially(TYPED, delay=25)
    typed_at = time.perf_counter()
    steps["type query (last key -> table)"] = (
        wait_for_table(page, query=TYPED, limit=5, user=mei) - typed_at
    )
    steps["type query (first key -> table)"] = time.perf_counter() - start
    assert shown_ids(page) == expected(query=TYPED)
    shoot(page, f"{name}-1-typed")

    handle = page.locator(".playground-limit .noUi-handle")
    handle.focus()
    start = time.perf_counter()
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    steps["limit 5 -> 2 (keys -> table)"] = (
        wait_for_table(page, query=TYPED, limit=2, user=mei) - start
    )
    assert page.locator(".playground-limit .widget-readout").inner_text().strip() == "2"
    assert shown_ids(page) == expected(query=TYPED, limit=2)
    shoot(page, f"{name}-2-limit")

    start = time.perf_counter()
    # ipywidgets' <select> carries the option labels: "user id · user_scope"
    page.locator(".playground-user select").select_option(label=f"{OMAR} · {user_scope_for(OMAR)}")
    steps["user -> omar (select -> table)"] = (
        wait_for_table(page, query=TYPED, limit=2, user=OMAR) - start
    )
    assert shown_ids(page) == expected(query=TYPED, limit=2, user=OMAR)
    assert all(i.startswith("omar-") for i in shown_ids(page))
    shoot(page, f"{name}-3-user")

    start = time.perf_counter()
    page.locator(".playground-scorer select").select_option(label="bm25")
    steps["scorer -> bm25 (select -> table)"] = (
        wait_for_table(page, query=TYPED, limit=2, user=OMAR, scorer="bm25") - start
    )
    # picking a scorer loads its weights: BM25 alone is lexical 1.0, recency 0.0
    bm25 = {"scorer": "bm25", "lexical_weight": 1.0, "recency_weight": 0.0}
    assert shown_ids(page) == expected(query=TYPED, limit=2, user=OMAR, **bm25)
    shoot(page, f"{name}-4-scorer")

    page.locator(".playground-query input[type='text']").fill("!!!")
    page.wait_for_selector('.playground-error[data-query="!!!"]', timeout=STEP_TIMEOUT_MS)
    error = page.locator(".playground-table").inner_text()
    assert "RemoteMemoryValidationError" in error and "Traceback" not in error
    timings[name] = {step: round(seconds * 1000, 1) for step, seconds in steps.items()}


@pytest.fixture
def served_copy(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    return cleared_copy(NOTEBOOK, root)


def test_playground_in_jupyterlab(browser, served_copy, tmp_path, expected, timings) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with jupyter_lab(served_copy.parent, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(STEP_TIMEOUT_MS)
            url = (
                f"{lab.base}/lab/workspaces/playground-test/tree/{served_copy.name}"
                f"?reset&token={lab.token}"
            )
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            # the last cell prints the quiz placeholder: every cell has run
            page.locator(".jp-OutputArea-output", has_text=LAST_OUTPUT).wait_for(
                state="attached", timeout=120_000
            )
            status.get_by_text("Idle").wait_for(timeout=30_000)
            page.locator(".memorylib-playground").scroll_into_view_if_needed()
            drive_playground(page, "lab", expected, timings)
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()


def test_playground_as_a_voila_app(browser, served_copy, tmp_path, expected, timings) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with voila(served_copy, home) as app:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(STEP_TIMEOUT_MS)
            # Voila runs the whole notebook before it shows the page
            page.goto(f"{app.base}/", wait_until="domcontentloaded", timeout=120_000)
            page.wait_for_selector("table.playground-hits", state="attached", timeout=120_000)
            assert "JupyterLab" not in page.title()
            drive_playground(page, "voila", expected, timings)
        except Exception:
            print(app.log_tail())
            raise
        finally:
            context.close()
