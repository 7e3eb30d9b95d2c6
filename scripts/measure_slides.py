"""Measure every exported deck in a real browser against the slide limits of issue 23.

    .venv/bin/python scripts/export_slides.py          # writes exports/slides/*.html
    .venv/bin/python scripts/measure_slides.py         # every deck: a table + JSON
    .venv/bin/python scripts/measure_slides.py 06 10   # decks whose name starts so
    .venv/bin/python scripts/measure_slides.py --check # exit 1 when a limit fails

Opens every deck of ``exports/slides/`` (or ``--decks DIR``) from file:// in headless
Chromium at 1280x720, with every request that is not file: or data: aborted, walks every
slide with reveal's own API (every fragment shown) and measures in the page, per slide:

- words: the slide's visible text, code and outputs included (speaker notes,
  ``<aside class="notes">``, are hidden and not counted); a run of letters or digits is
  one word, two CJK characters are one (as tests/test_slides_structure.py counts); "prose"
  words are those of markdown cells alone (what moves into speaker notes);
- body px and code px: the smallest computed font size of markdown text (p, li, td) and
  of code (every ``pre``) on the slide, times the deck's scale (``Reveal.getScale()``);
- chart labels: an SVG chart's smallest text, in rendered px; a PNG chart's labels are
  estimated as the course's chart font (``setup_notebook``: font.size at savefig.dpi)
  times the image's rendered/natural size, and its rendered height is recorded;
- overflow: the bounding box of everything on the slide past the screen, or an element
  that scrolls (the measurement of tests/test_slides_browser.py);
- headed: the slide's first cell is markdown that starts with a heading;
- plumbing: test markers in the visible text (``NBVAL_``, ``uuid=``, ``# noqa``,
  ``fmt: skip``);
- widget slides: a slide with a live widget's place in it, blank when nothing but the
  widget note is drawn there (no picture, table or output text).

Prints a table per deck and overall, writes everything to ``artifacts/slides_measured.json``
and, with ``--check``, exits 1 when any limit in ``LIMITS`` fails. ``make test`` (the test
steps of scripts/course.py) runs ``--check`` over every deck, exported afresh into
``artifacts/slide_check/``, after the test suite. Needs Chromium
(scripts/ensure-chromium.sh). The live RISE view is measured by tests/test_slides_browser.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from slide_metadata import shown  # noqa: E402  (a sibling script: scripts/ is on sys.path when run)

from tests.browser_support import block_remote, launched_chromium  # noqa: E402
from tests.test_slides_browser import MEASURE_JS, VIEWPORT, overflows  # noqa: E402

DECKS = ROOT / "exports" / "slides"
OUT = ROOT / "artifacts" / "slides_measured.json"
PT_PER_PX = 0.75  # CSS: 96 px per inch, 72 pt per inch
# after each Reveal.slide(): the measurements force a synchronous layout (transitions off,
# pictures are inline data), so a short settle suffices: 10 ms gave the same JSON as 60 ms
# over 383 slides (05, 08, 10) in 25 s instead of 43 s
SETTLE_MS = 10
LIMITS = {
    "median_words_max": 60,
    "words_max": 120,
    "body_px_min": 24.0,
    "code_px_min": 20.0,
    "chart_label_pt_min": 14.0,
    "overflow_max": 0,
    "headed_share_min": 1.0,
    "plumbing_max": 0,
    "blank_widgets_max": 0,
}
PLUMBING = r"NBVAL_|uuid=|# ?noqa|fmt: ?skip"

STATS_JS = """
([chartFontPx, plumbing]) => {
  const slide = document.querySelector('.reveal .slides > section.present > section.present')
    || document.querySelector('.reveal .slides > section.present');
  const scale = Reveal.getScale();
  const visible = el => el.getClientRects().length > 0 && el.closest('aside.notes') === null;
  const px = el => parseFloat(getComputedStyle(el).fontSize) * scale;
  const smallest = selector => {
    const sizes = [...slide.querySelectorAll(selector)]
      .filter(el => visible(el) && el.innerText.trim()).map(px);
    return sizes.length ? Math.round(Math.min(...sizes) * 10) / 10 : null;
  };
  const text = slide.innerText;
  const count = t => {  // a run of letters or digits is one word, two CJK characters are one
    let cjk = 0;
    const rest = t.replace(/[\\u3400-\\u9fff\\uf900-\\ufaff]+/g, run => {
      cjk += Math.ceil(run.length / 2);
      return ' ';
    });
    return cjk + (rest.match(/[\\p{L}\\p{N}_]+/gu) || []).length;
  };
  const words = count(text);
  const prose = [...slide.querySelectorAll('.jp-MarkdownCell')].filter(visible)
    .reduce((n, cell) => n + count(cell.innerText), 0);
  const charts = [];
  for (const svg of slide.querySelectorAll('svg')) {
    if (!visible(svg)) continue;
    const box = svg.getBoundingClientRect(), view = svg.viewBox.baseVal;
    const ratio = view && view.width ? box.width / view.width : 1;
    const sizes = [...svg.querySelectorAll('text')]
      .map(t => parseFloat(getComputedStyle(t).fontSize) * ratio);
    if (sizes.length) charts.push({kind: 'svg', height_px: Math.round(box.height),
      label_px: Math.round(Math.min(...sizes) * 10) / 10});
  }
  for (const img of slide.querySelectorAll('img')) {
    if (!visible(img) || !img.naturalWidth) continue;
    const box = img.getBoundingClientRect();
    charts.push({kind: 'png', height_px: Math.round(box.height),
      label_px: Math.round(chartFontPx * box.width / img.naturalWidth * 10) / 10});
  }
  const first = [...slide.querySelectorAll('.jp-Cell')].find(visible);
  const lead = first && first.querySelector('.jp-RenderedMarkdown > *');
  const headed = !!(first && first.classList.contains('jp-MarkdownCell') && lead
    && /^H[1-6]$/.test(lead.tagName));
  const places = slide.querySelectorAll(
    '.memorylib-widget-fallback, .memorylib-widget-static, .jupyter-widgets');
  let widget = null;
  if (places.length) {
    const rest = out => {  // the output's text without the export's widget notes
      const copy = out.cloneNode(true);
      copy.querySelectorAll('.memorylib-widget-fallback, .memorylib-widget-caption, style')
        .forEach(el => el.remove());
      return copy.textContent.trim();
    };
    const drawn = [...slide.querySelectorAll('.jp-OutputArea-output')].filter(out =>
      visible(out) && (out.querySelector('img, svg, table') || rest(out)));
    widget = {drawn: drawn.length, blank: drawn.length === 0};
  }
  return {scale: Math.round(scale * 1000) / 1000, words, prose_words: prose,
          body_px: smallest('.jp-RenderedMarkdown p, .jp-RenderedMarkdown li, '
                            + '.jp-RenderedMarkdown td'),
          code_px: smallest('pre'), charts, headed,
          plumbing: [...new Set(text.match(new RegExp(plumbing, 'g')) || [])], widget};
}
"""


def chart_font_px() -> float:
    """The course's chart text size in a PNG's own pixels (the style every notebook sets)."""
    import matplotlib

    from memorylib.notebook.common import setup_notebook

    setup_notebook()
    return float(matplotlib.rcParams["font.size"]) * matplotlib.rcParams["savefig.dpi"] / 72


def measure(page, deck: Path, chart_px: float) -> dict[str, dict]:
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
        page.wait_for_timeout(SETTLE_MS)
        measured = page.evaluate(MEASURE_JS)
        stats = page.evaluate(STATS_JS, [chart_px, PLUMBING])
        slides[f"{h}.{v}"] = {
            "overflow": overflows(measured),
            "content": measured["content"],
            **stats,
        }
    return slides


def summary(slides: Sequence[dict]) -> dict:
    """One deck's (or all decks') numbers, from its slides' measurements."""
    words = [s["words"] for s in slides]
    body = [s["body_px"] for s in slides if s["body_px"] is not None]
    code = [s["code_px"] for s in slides if s["code_px"] is not None]
    labels = [c["label_px"] for s in slides for c in s["charts"]]
    widgets = [s["widget"] for s in slides if s["widget"] is not None]
    return {
        "slides": len(slides),
        "median_words": statistics.median(words) if words else 0,
        "median_prose_words": statistics.median(s["prose_words"] for s in slides) if slides else 0,
        "max_words": max(words, default=0),
        "over_60": sum(w > 60 for w in words),
        "over_120": sum(w > 120 for w in words),
        "scale": min((s["scale"] for s in slides), default=None),
        "body_px_min": min(body, default=None),
        "body_px_median": statistics.median(body) if body else None,
        "code_px_min": min(code, default=None),
        "code_px_median": statistics.median(code) if code else None,
        "charts": len(labels),
        "chart_label_pt_min": round(min(labels) * PT_PER_PX, 1) if labels else None,
        "chart_height_px_max": max(
            (c["height_px"] for s in slides for c in s["charts"]), default=0
        ),
        "overflow": sum(bool(s["overflow"]) for s in slides),
        "headed_share": round(sum(s["headed"] for s in slides) / len(slides), 3) if slides else 0,
        "plumbing": sum(bool(s["plumbing"]) for s in slides),
        "widget_slides": len(widgets),
        "blank_widgets": sum(w["blank"] for w in widgets),
    }


def failures(total: dict) -> list[str]:
    """The issue-23 limits that ``total`` (a :func:`summary`) breaks, as messages."""
    found = []

    def low(value: float | None, limit: float) -> bool:
        return value is not None and value < limit

    if total["median_words"] > LIMITS["median_words_max"]:
        found.append(f"median words {total['median_words']} > {LIMITS['median_words_max']}")
    if total["max_words"] > LIMITS["words_max"]:
        found.append(f"{total['over_120']} slides over {LIMITS['words_max']} words")
    if low(total["body_px_min"], LIMITS["body_px_min"]):
        found.append(f"body text {total['body_px_min']} px < {LIMITS['body_px_min']}")
    if low(total["code_px_min"], LIMITS["code_px_min"]):
        found.append(f"code {total['code_px_min']} px < {LIMITS['code_px_min']}")
    if low(total["chart_label_pt_min"], LIMITS["chart_label_pt_min"]):
        found.append(
            f"chart labels {total['chart_label_pt_min']} pt < {LIMITS['chart_label_pt_min']}"
        )
    if total["overflow"] > LIMITS["overflow_max"]:
        found.append(f"{total['overflow']} slides overflow")
    if total["headed_share"] < LIMITS["headed_share_min"]:
        found.append(f"{total['headed_share']:.0%} of slides open with a heading")
    if total["plumbing"] > LIMITS["plumbing_max"]:
        found.append(f"{total['plumbing']} slides show test markers")
    if total["blank_widgets"] > LIMITS["blank_widgets_max"]:
        found.append(f"{total['blank_widgets']} widget slides are blank")
    return found


COLUMNS = (
    ("slides", "slides", "{}"),
    ("median_words", "med w", "{:g}"),
    ("median_prose_words", "med prose", "{:g}"),
    ("max_words", "max w", "{}"),
    ("over_60", ">60", "{}"),
    ("over_120", ">120", "{}"),
    ("body_px_min", "body px", "{}"),
    ("code_px_min", "code px", "{}"),
    ("chart_label_pt_min", "chart pt", "{}"),
    ("overflow", "overfl", "{}"),
    ("headed_share", "headed", "{:.0%}"),
    ("plumbing", "markers", "{}"),
    ("blank_widgets", "blank wdg", "{}"),
)


def table(rows: dict[str, dict]) -> str:
    head = f"{'deck':32}" + "".join(f"{title:>10}" for _, title, _ in COLUMNS)
    lines = [head]
    for name, row in rows.items():
        cells = "".join(
            f"{'-' if row[key] is None else form.format(row[key]):>10}" for key, _, form in COLUMNS
        )
        lines.append(f"{name:32}{cells}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", help="deck name prefixes, e.g. 08")
    parser.add_argument("--decks", type=Path, default=DECKS, help="default: exports/slides")
    parser.add_argument("--out", type=Path, default=OUT, help="default: " + str(OUT))
    parser.add_argument("--check", action="store_true", help="exit 1 when a limit fails")
    args = parser.parse_args(argv)
    found = [*args.decks.resolve().glob("*.html"), *args.decks.resolve().glob("zh/*.html")]
    wanted = tuple(args.prefixes)
    decks = sorted(d for d in found if not wanted or shown(d).startswith(wanted))
    if not decks:
        print("no deck found: run scripts/export_slides.py first", file=sys.stderr)
        return 1
    chart_px = chart_font_px()
    measured: dict[str, dict] = {}
    with launched_chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        block_remote(context, ("file:", "data:"))
        page = context.new_page()
        for deck in decks:
            measured[shown(deck)] = measure(page, deck, chart_px)
    rows = {stem: summary(list(slides.values())) for stem, slides in measured.items()}
    rows["overall"] = total = summary([s for slides in measured.values() for s in slides.values()])
    problems = failures(total)
    report = {"limits": LIMITS, "summary": rows, "failures": problems, "slides": measured}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(table(rows))
    for stem, slides in measured.items():
        for label, m in slides.items():
            blank = ["blank widget"] if (m["widget"] or {}).get("blank") else []
            if found := m["overflow"] + m["plumbing"] + blank:
                print(f"  {stem} {label}: {'; '.join(found)}")
    print(f"limits failed: {'; '.join(problems) if problems else 'none'}  ({args.out})")
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
