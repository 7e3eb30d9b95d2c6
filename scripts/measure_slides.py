"""Measure, in a real browser, which exported slides do not fit a 1280x720 screen.

    make slides                                        # writes exports/slides/*.html
    .venv/bin/python scripts/measure_slides.py         # every deck; prints a table
    .venv/bin/python scripts/measure_slides.py 06 10   # decks whose name starts so

Opens every deck of ``exports/slides/`` from file:// in headless Chromium at 1280x720 (as
tests/test_slides_browser.py does for one deck), walks every slide with reveal's own
API, and measures in the page, per slide, the bounding box of everything on it and every
element that scrolls (the same measurement as the browser test). Prints, per notebook,
the number of slides and the slides that overflow, and writes everything to
``artifacts/slides_measured.json``. The live RISE view in JupyterLab lays slides out a
little differently (tests/test_slides_browser.py measures notebook 08 there); this is
the view students get after class. Needs Chromium (scripts/ensure-chromium.sh).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.browser_support import block_remote, launched_chromium  # noqa: E402
from tests.test_slides_browser import MEASURE_JS, VIEWPORT, overflows  # noqa: E402

DECKS = ROOT / "exports" / "slides"
OUT = ROOT / "artifacts" / "slides_measured.json"


def measure(page, deck: Path) -> dict:
    page.goto(deck.as_uri())
    page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=15_000)
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    labels = page.evaluate(
        "() => Reveal.getHorizontalSlides().flatMap((s, h) => {"
        " const v = s.querySelectorAll(':scope > section').length;"
        " return v ? [...Array(v).keys()].map(i => [h, i]) : [[h, 0]]; })"
    )
    slides = {}
    for h, v in labels:
        page.evaluate(f"() => Reveal.slide({h}, {v}, 99)")  # every fragment shown
        page.wait_for_timeout(60)
        measured = page.evaluate(MEASURE_JS)
        slides[f"{h}.{v}"] = {"overflow": overflows(measured), "content": measured["content"]}
    return slides


def main(prefixes: list[str]) -> int:
    decks = sorted(
        d for d in DECKS.glob("*.html") if not prefixes or d.name.startswith(tuple(prefixes))
    )
    if not decks:
        print("no deck found: run `make slides` first", file=sys.stderr)
        return 1
    report = {}
    with launched_chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        block_remote(context, ("file:", "data:"))
        page = context.new_page()
        for deck in decks:
            report[deck.stem] = measure(page, deck)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    total = over = 0
    for stem, slides in report.items():
        bad = {label: m["overflow"] for label, m in slides.items() if m["overflow"]}
        total, over = total + len(slides), over + len(bad)
        listed = ", ".join(f"{label} ({'; '.join(found)})" for label, found in bad.items())
        print(f"{stem:38} {len(slides):3} slides, {len(bad):2} overflow  {listed}")
    print(f"{'total':38} {total:3} slides, {over:2} overflow")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
