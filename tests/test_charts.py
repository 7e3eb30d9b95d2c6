"""The colours every chart shares: 03's funnel (code in its cell, run here since nbval does not
compare images) draws each count in its stage's colour; and the font list is set in one place.
The other charts one notebook draws (04's recency curves and bars, 05's bump chart) are code in
that notebook's cells, compared by nbval. Every chart a notebook saves is sized for a slide:
its smallest text, the course font, reaches 14 pt in the deck's figure box (issue 23)."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import nbformat
from matplotlib.colors import to_hex

from memorylib.notebook import charts
from memorylib.notebook.common import CHART_FONTS, setup_notebook
from memorylib.notebook.messages import say

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_candidates.ipynb"


def test_the_funnel_of_03_shows_each_stage_count() -> None:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    source = next(c.source for c in cells if c.get("id") == "nb03-topk")
    drawing = source[source.index("fig, ax = ") : source.index("plt.show()")]
    counts = {"searched": 69, "candidates": 26, "hits": 5}
    namespace = {"plt": plt, "charts": charts, "funnel": counts, "NOISY": "q", "say": say}
    exec(drawing, namespace)
    fig = namespace["fig"]
    bars = fig.axes[0].patches
    assert [b.get_width() for b in bars] == [69, 26, 5]
    assert [to_hex(b.get_facecolor()) for b in bars] == [
        charts.COLOURS["searched"],
        charts.COLOURS["candidates"],
        charts.COLOURS["hits"],
    ]
    assert [t.get_text() for t in fig.axes[0].texts] == ["69", "26", "5"]


def test_the_font_family_list_is_set_in_one_place() -> None:
    """The installed families of CHART_FONTS, in its order: one not installed is left out
    (matplotlib would log a warning into the cell's output for it)."""
    setup_notebook(fonts=("Some Font Nobody Has", *CHART_FONTS))  # registers a CJK font file
    installed = {font.name for font in matplotlib.font_manager.fontManager.ttflist}
    assert matplotlib.rcParams["font.family"] == [f for f in CHART_FONTS if f in installed]
    assert matplotlib.rcParams["font.family"][0] == "DejaVu Sans"
    setup_notebook(fonts=("Some Font Nobody Has",))
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans"]
    setup_notebook()


# A deck shows each figure alone, scaled (aspect kept) into a 1200 x 560 px box of a 1280x720
# slide; a PNG's labels are font.size pt at 100 dpi, so on the slide they are font.size * s pt.
SLIDE_BOX = (1200, 560)
SLIDE_LABEL_PT = 14.0
SMALLER_FONT = re.compile(
    r"\b(?:fontsize|labelsize|title_fontsize)\s*=\s*(?P<value>[\d.]+|[\"'][\w-]+[\"'])"
)


def saved_pngs() -> list[tuple[str, str, int, int]]:
    found = []
    for path in sorted(NOTEBOOK.parent.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                if png := output.get("data", {}).get("image/png"):
                    width, height = struct.unpack(">II", base64.b64decode(png)[16:24])
                    found.append((path.stem, cell.get("id"), width, height))
    return found


def test_every_saved_chart_has_slide_sized_labels() -> None:
    setup_notebook()
    font_pt = float(matplotlib.rcParams["font.size"])
    pngs = saved_pngs()
    assert len(pngs) >= 10  # the course's charts are there to be measured
    small = {
        (notebook, cell, width, height): round(font_pt * scale, 2)
        for notebook, cell, width, height in pngs
        if font_pt * (scale := min(SLIDE_BOX[0] / width, SLIDE_BOX[1] / height)) < SLIDE_LABEL_PT
    }
    assert small == {}


def test_no_chart_text_is_set_smaller_than_the_course_font() -> None:
    # the slide estimate above holds only if font.size is the smallest text of every chart
    setup_notebook()
    font_pt = float(matplotlib.rcParams["font.size"])
    smaller = []
    for path in sorted(NOTEBOOK.parent.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for match in SMALLER_FONT.finditer(cell.source):
                value = match["value"].strip("\"'")
                named = value in ("xx-small", "x-small", "small", "smaller")
                if named or (value[0].isdigit() and float(value) < font_pt):
                    smaller.append((path.stem, cell.get("id"), match[0]))
    assert smaller == []


def test_a_chart_draws_chinese_without_a_missing_glyph() -> None:
    """Both editions' charts carry Chinese (records, terms, the zh edition's labels): with the
    course's set-up every glyph of this text is found; a missing one warns, and fails here."""
    import warnings

    from memorylib.notebook.common import register_fonts

    setup_notebook()
    register_fonts()  # a second call adds nothing: the files are known now
    assert register_fonts() == []
    text = "存储记录不等于召回结果：分层记忆 recall"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        fig, ax = plt.subplots()
        ax.set_title(text)
        ax.bar(["召回", "候选", "评分"], [3, 2, 1])
        fig.canvas.draw()
    plt.close(fig)
    installed = {font.name for font in matplotlib.font_manager.fontManager.ttflist}
    assert installed & set(CHART_FONTS[1:]), "no CJK family: run scripts/ensure-fonts.sh"


def test_a_chart_without_a_cjk_font_would_fail_the_check() -> None:
    """The check above can fail: DejaVu Sans alone has no Chinese glyph and warns."""
    import warnings

    with matplotlib.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, ax = plt.subplots()
        ax.set_title("召回")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig.canvas.draw()
        plt.close(fig)
    assert any("missing from font" in str(w.message) for w in caught)
