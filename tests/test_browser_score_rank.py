"""Notebooks 04 (score) and 05 (stable rank) in a real browser: JupyterLab runs a CLEARED
copy top to bottom (Run All), no cell writes to stderr or raises, and each notebook's
widget answers a key press the way a student moves it: 04's record-age slider from 1 to 2
days redraws the breakdown (recency 1 / (1 + 2/30) = 0.9375), 05's as_of slider from the
end of November to the end of October shows that month's five hits (omar-conv-042 first).
Screenshots go to ``artifacts/screenshots/``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .browser_support import (
    BROWSER_MARKS,
    ROOT,
    SCREENSHOTS,
    cleared_copy,
    jupyter_lab,
    launched_chromium,
)

pytestmark = BROWSER_MARKS

STEP_TIMEOUT_MS = 20_000
LAST_OUTPUT = re.compile("See the reference|The reference is not shown yet|参考实现暂不显示")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as chromium:
        yield chromium


def run_all(browser, notebook: Path, tmp_path: Path, drive) -> None:
    """Serve a cleared copy of ``notebook``, Run All, wait for the last cell, then ``drive``.

    ``drive`` reads ``textContent``, never ``innerText``: JupyterLab does not render cells
    scrolled off screen, and the innerText of an unrendered node is ""."""
    root = tmp_path / "root"
    root.mkdir()
    served = cleared_copy(notebook, root)
    home = tmp_path / "home"
    home.mkdir()
    with jupyter_lab(root, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(STEP_TIMEOUT_MS)
            workspace = f"{lab.base}/lab/workspaces/{served.stem}"
            url = f"{workspace}/tree/{served.name}?reset&token={lab.token}"
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            # the last code cell names the closed reference source, or (05: gated until the
            # build-it check passes) says it is not shown yet: every cell has run
            page.locator(".jp-OutputArea-output", has_text=LAST_OUTPUT).wait_for(
                state="attached", timeout=120_000
            )
            status.get_by_text("Idle").wait_for(timeout=30_000)
            stderr = page.locator(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
            )
            assert stderr.count() == 0, stderr.all_text_contents()
            errors = page.locator(".jp-OutputArea-output", has_text="Traceback")
            assert errors.count() == 0, errors.all_text_contents()
            pending = [p for p in page.locator(".jp-InputPrompt").all_text_contents() if "*" in p]
            assert not pending, pending
            drive(page)
            status.get_by_text("Idle").wait_for(timeout=30_000)  # the chart is redrawn too
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"{served.stem}-widget.png"))
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()


def test_04_runs_in_jupyterlab_and_its_explorer_rescores(browser, tmp_path) -> None:
    def drive(page) -> None:
        box = page.locator(".widget-vbox", has=page.locator(".widget-hslider")).first
        box.scroll_into_view_if_needed()
        table = box.locator(".widget-html")
        page.wait_for_function(
            "el => el.textContent.includes('0.995161')", arg=table.element_handle()
        )
        age = box.locator(".widget-hslider").nth(3)  # lexical, recency, window, age
        age.locator(".noUi-handle").focus()
        page.keyboard.press("ArrowRight")
        assert age.locator(".widget-readout").text_content().strip() == "2.00"
        page.wait_for_function(
            "el => el.textContent.includes('0.9375')", arg=table.element_handle()
        )

    run_all(browser, ROOT / "notebooks" / "04_scoring.ipynb", tmp_path, drive)


def test_05_runs_in_jupyterlab_and_its_as_of_slider_replays(browser, tmp_path) -> None:
    def drive(page) -> None:
        box = page.locator(".widget-vbox", has=page.locator(".widget-hslider")).first
        box.scroll_into_view_if_needed()
        table = box.locator(".widget-html")
        slider = box.locator(".widget-hslider").first
        assert slider.locator(".widget-readout").text_content().strip() == "2026-11-30"
        slider.locator(".noUi-handle").focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            "el => el.textContent.trim() === '2026-10-31'",
            arg=slider.locator(".widget-readout").element_handle(),
        )
        # the end of October: omar-conv-042 (300 s, 30 days old) first with 0.925235
        page.wait_for_function(
            "el => el.textContent.includes('0.925235')", arg=table.element_handle()
        )
        assert table.locator("tbody tr").first.text_content().split()[:2] == ["1", "omar-conv-042"]

    run_all(browser, ROOT / "notebooks" / "05_stable_rank.ipynb", tmp_path, drive)


CJK = re.compile(r"[\u4e00-\u9fff]")
CJK_FONT = re.compile(r"CJK|WenQuanYi|Hei|Noto Sans SC|Fallback|PingFang|YaHei", re.IGNORECASE)


def platform_fonts(page, selector: str) -> dict[str, int]:
    """The fonts Chromium drew the first node of ``selector`` with, and each one's glyph count
    (DevTools' CSS.getPlatformFontsForNode: what was rendered, not what CSS asked for)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return {font["familyName"]: font["glyphCount"] for font in fonts}


def chart_pngs(page) -> list[bytes]:
    """Every chart image of the notebook's outputs, as PNG bytes."""
    import base64

    sources = page.locator(".jp-RenderedImage img").evaluate_all("els => els.map(e => e.src)")
    return [base64.b64decode(s.split(",", 1)[1]) for s in sources if s.startswith("data:image/png")]


def test_04_in_chinese_runs_and_draws_chinese_in_its_charts_and_widget(browser, tmp_path) -> None:
    """The Chinese twin: the same run and the same slider, its widget labels drawn in a CJK
    font by Chromium, its charts drawn with no missing-glyph warning (matplotlib writes one to
    stderr for each glyph no font has; run_all finds no stderr) and with Chinese in them: each
    chart of the English edition's committed run is redrawn differently here, where only the
    words differ."""
    import nbformat

    english = [
        base64_png
        for cell in nbformat.read(ROOT / "notebooks" / "04_scoring.ipynb", as_version=4).cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if (base64_png := output.get("data", {}).get("image/png"))
    ]

    def drive(page) -> None:
        import base64

        box = page.locator(".widget-vbox", has=page.locator(".widget-hslider")).first
        box.scroll_into_view_if_needed()
        label = box.locator(".widget-hslider .widget-label").first
        assert CJK.search(label.text_content()), label.text_content()  # "lexical 权重"
        fonts = platform_fonts(page, ".widget-hslider .widget-label")
        drawn = {name: n for name, n in fonts.items() if CJK_FONT.search(name) and n > 0}
        assert drawn, f"no CJK font drew the widget label: {fonts}"
        table = box.locator(".widget-html")
        page.wait_for_function(
            "el => el.textContent.includes('0.995161')", arg=table.element_handle()
        )
        charts = chart_pngs(page)
        assert len(charts) == len(english) >= 2, (len(charts), len(english))
        same = [i for i, png in enumerate(charts) if png == base64.b64decode(english[i])]
        assert not same, f"charts {same} have no Chinese: drawn as in the English edition"
        age = box.locator(".widget-hslider").nth(3)  # lexical, recency, window, age
        age.locator(".noUi-handle").focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "el => el.textContent.includes('0.9375')", arg=table.element_handle()
        )

    run_all(browser, ROOT / "notebooks" / "zh" / "04_scoring.ipynb", tmp_path, drive)
