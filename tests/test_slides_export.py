"""The offline deck a lecturer projects (scripts/export_slides.py), on a tiny notebook.

The deck's code loses the test plumbing the notebook keeps, a ``notes`` cell and the
``<aside class="notes">`` prose of a markdown cell become reveal.js speaker notes (the
reading page keeps the prose), a live widget's place shows the next cell's picture, and
the deck's layout at 1280x720 (scale 1, 24 px text, 20 px code, a heading on every slide,
figures fitted to their box) is measured in Chromium by scripts/measure_slides.py (whose
limit check is tested here on made-up slide measurements too).
tests/test_slides_export_layout.py tests the layout itself (chunks, tables, title, recap).
"""

from __future__ import annotations

import base64
import html
import json
import re
import struct
import zlib
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from .browser_support import BROWSER_MARKS, block_remote, launched_chromium
from .test_slides_structure import load_script

export = load_script("export_slides")
measure_slides = load_script("measure_slides")
layout = load_script("deck_layout")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTE = "Say aloud why the weights sum to one."
PROSE = "The reading goes on here, for the student, while the room sees the lead alone."
MARKED = (
    "# NBVAL_IGNORE_OUTPUT\n"
    'table = styled(frame, uuid="tiny-hits", gradient="total")  # noqa: E501\n'
    "pairs = [(1, 2),  (3, 4)]  # fmt: skip\n"
    "print(len(pairs))"
)


def png(width: int, height: int) -> str:
    """A grey PNG of that size, base64 (what a matplotlib output holds)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    data += chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return base64.b64encode(data).decode("ascii")


def typed(cell, kind: str):
    cell.metadata["slideshow"] = {"slide_type": kind}
    return cell


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    stream = new_output("stream", name="stdout", text="2\n")
    widget = new_output(
        "display_data", data={WIDGET_MIME: {"model_id": "abc"}, "text/plain": "VBox(children=())"}
    )
    chart = new_output("display_data", data={"image/png": png(40, 20), "text/plain": "<Figure>"})
    cells = [
        typed(
            new_markdown_cell(
                "# Tiny deck\n\nA heading, a few lines.\n\n"
                f'<aside class="notes">\n\n{PROSE}\n\n</aside>'
            ),
            "slide",
        ),
        typed(new_code_cell(MARKED, outputs=[stream]), "subslide"),
        typed(new_markdown_cell(NOTE), "notes"),
        typed(new_markdown_cell("## The widget"), "slide"),
        typed(new_code_cell("# NBVAL_IGNORE_OUTPUT\nwidget", outputs=[widget]), "-"),
        typed(new_code_cell("figure_of(state)", outputs=[chart]), "subslide"),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    path = tmp_path_factory.mktemp("nb") / "99_tiny.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def exported(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    ((deck, page),) = export.export([tiny], tmp_path_factory.mktemp("out"))
    return deck, page


def shown_text(markup: str) -> str:
    """The text of an HTML file's body, tags and the inlined scripts removed."""
    body = markup[markup.index("<body") :]
    body = re.sub(r"<script\b.*?</script>|<style\b.*?</style>", "", body, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def test_deck_code_has_no_plumbing_and_the_notebook_keeps_it(tiny, exported) -> None:
    deck, page = exported
    shown = shown_text(deck.read_text(encoding="utf-8"))
    for marker in ("NBVAL_", "uuid=", "noqa", "fmt: skip"):
        assert marker not in shown, marker
    assert 'table = styled(frame, gradient="total")' in shown
    assert "pairs = [(1, 2),  (3, 4)]" in shown and "print(len(pairs))" in shown
    assert "# NBVAL_IGNORE_OUTPUT" in shown_text(page.read_text(encoding="utf-8"))
    assert nbformat.read(tiny, as_version=4).cells[1].source == MARKED


def asides(text: str) -> list[str]:
    return [html.unescape(a) for a in re.findall(r'<aside class="notes">(.*?)</aside>', text, re.S)]


def test_notes_cell_becomes_speaker_notes(exported) -> None:
    deck, page = exported
    text = deck.read_text(encoding="utf-8")
    assert sum(NOTE in aside for aside in asides(text)) == 1
    assert "RevealNotes" in text
    assert NOTE in page.read_text(encoding="utf-8")  # the reading page keeps the prose


def test_aside_prose_becomes_speaker_notes_and_leaves_the_slide(exported) -> None:
    """nbconvert renders a raw <aside> block alone (empty) and the prose after it on the
    slide: the export splits the cell, so the notes hold the prose and the slide does not."""
    deck, page = exported
    text = deck.read_text(encoding="utf-8")
    (notes,) = [a for a in asides(text) if PROSE in a]
    assert "<p>" in notes  # rendered as markdown, inside the notes
    assert all(aside.strip() for aside in asides(text))  # no empty notes
    outside = re.sub(r'<aside class="notes">.*?</aside>', "", text, flags=re.S)
    assert PROSE not in shown_text(outside)
    assert "A heading, a few lines." in shown_text(outside)  # the lead stays on the slide
    page_text = page.read_text(encoding="utf-8")
    assert PROSE in shown_text(page_text) and "<aside" not in page_text


def test_widget_place_shows_the_next_cells_picture(exported) -> None:
    deck, page = exported
    text = deck.read_text(encoding="utf-8")
    (static,) = re.findall(r'<div class="memorylib-widget-static">(.*?)</div>\s*</div>', text, re.S)
    assert f'src="data:image/png;base64,{png(40, 20)}"' in static
    assert "VBox(" not in text
    page_text = page.read_text(encoding="utf-8")
    assert "memorylib-widget-fallback" in page_text and "memorylib-widget-static" not in page_text


def test_widget_without_a_later_output_keeps_the_note() -> None:
    other = new_output("display_data", data={WIDGET_MIME: {"model_id": "b"}, "text/plain": "VBox"})
    cells = [new_code_cell("w", outputs=[]), new_code_cell("w2", outputs=[other])]
    assert export.static_state(cells, 0) is None
    stream = new_output("stream", name="stdout", text="hits: 3\n")
    cells.append(new_code_cell("view(state)", outputs=[stream]))
    assert export.static_state(cells, 0) == "<pre>hits: 3\n</pre>"


def slide(**changes) -> dict:
    measured = {
        "overflow": [],
        "words": 40,
        "prose_words": 10,
        "scale": 0.96,
        "body_px": 25.0,
        "code_px": 21.1,
        "charts": [],
        "headed": True,
        "plumbing": [],
        "widget": None,
    }
    return measured | changes


def test_limit_check_passes_within_limits_and_names_each_failure() -> None:
    fine = [
        slide(),
        slide(words=60),
        slide(charts=[{"kind": "png", "height_px": 300, "label_px": 19.0}]),
    ]
    assert measure_slides.failures(measure_slides.summary(fine)) == []
    bad = [
        *fine,
        slide(words=130, headed=False),
        slide(body_px=15.4, code_px=14.6, overflow=["bottom at 900 > 720"]),
        slide(plumbing=["NBVAL_"], widget={"drawn": 0, "blank": True}),
        slide(charts=[{"kind": "svg", "height_px": 90, "label_px": 8.4}]),
    ]
    total = measure_slides.summary(bad)
    assert total["over_120"] == 1 and total["overflow"] == 1 and total["blank_widgets"] == 1
    found = " | ".join(measure_slides.failures(total))
    for part in (
        "over 120 words",
        "body text 15.4",
        "code 14.6",
        "chart labels 6.3 pt",
        "1 slides overflow",
        "open with a heading",
        "test markers",
        "blank",
    ):
        assert part in found, part
    assert "median words" not in found  # the median is 60 here: at the limit, not over


@BROWSER_MARKS[0]
@BROWSER_MARKS[1]
def test_tiny_deck_measures_projector_sizes(exported) -> None:
    deck, _ = exported
    with launched_chromium() as browser:
        context = browser.new_context(viewport=measure_slides.VIEWPORT)
        block_remote(context, ("file:", "data:"))
        page = context.new_page()
        measured = measure_slides.measure(page, deck, chart_px=13.9)
        page.evaluate("() => Reveal.slide(0, 1)")  # reveal's notes plugin shows these (S)
        assert NOTE in page.evaluate("() => Reveal.getSlideNotes()")
        context.close()
    # the title slide; the code (its own heading injected); the widget's heading and code;
    # the widget's static state; the chart's code; the chart, alone on its slide
    assert list(measured) == ["0.0", "0.1", "1.0", "1.1", "1.2", "1.3"]
    assert all(m["headed"] for m in measured.values())
    assert all(m["overflow"] == [] for m in measured.values())
    # reveal shows its 1280x720 canvas at scale 1 on a 1280x720 screen: the CSS sizes
    assert export.WIDTH == 1280 and export.HEIGHT == 720
    assert {m["scale"] for m in measured.values()} == {1.0}
    assert measured["0.0"]["body_px"] == export.BODY_PX == 24
    assert measured["0.1"]["code_px"] == export.CODE_PX == 20
    assert measured["0.1"]["plumbing"] == []
    assert measured["0.1"]["words"] < 20  # the notes cell's sentence is not counted
    assert measured["0.0"]["words"] == 10  # title, lead, "Today" and the agenda's one line
    assert measured["1.1"]["widget"] == {"drawn": 1, "blank": False}
    (state,) = measured["1.1"]["charts"]
    assert state["kind"] == "png" and state["height_px"] == 560  # the whole figure box
    (picture,) = measured["1.3"]["charts"]  # 40x20 scaled into 1200x560: x28
    assert picture["height_px"] == 560 and picture["label_px"] == pytest.approx(13.9 * 28)


@BROWSER_MARKS[0]
@BROWSER_MARKS[1]
def test_check_over_a_relative_decks_folder_passes_on_the_tiny_deck(
    exported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `make test` runs (scripts/course.py): ``--check`` over a folder given relative
    to the repository; the tiny deck meets every limit."""
    deck, _ = exported
    monkeypatch.chdir(deck.parent.parent)
    out = tmp_path / "measured.json"
    code = measure_slides.main(["--decks", "slides", "--out", str(out), "--check"])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["overall"]["slides"] == 6
    assert report["failures"] == [] and code == 0
