"""The colours every chart shares: 03's funnel (code in its cell, run here since nbval does not
compare images) draws each count in its stage's colour; and the font list is set in one place.
The other charts one notebook draws (04's recency curves and bars, 05's bump chart) are code in
that notebook's cells, compared by nbval."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import nbformat
from matplotlib.colors import to_hex

from memorylib.notebook import charts
from memorylib.notebook.common import CHART_FONTS, setup_notebook

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_candidates.ipynb"


def test_the_funnel_of_03_shows_each_stage_count() -> None:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    source = next(c.source for c in cells if c.get("id") == "nb03-topk")
    drawing = source[source.index("fig, ax = ") : source.index("plt.show()")]
    counts = {"searched": 69, "candidates": 26, "hits": 5}
    namespace = {"plt": plt, "charts": charts, "funnel": counts, "NOISY": "q"}
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
    setup_notebook(fonts=("Some CJK Font", *CHART_FONTS))
    assert matplotlib.rcParams["font.family"] == ["Some CJK Font", *CHART_FONTS]
    setup_notebook()
    assert matplotlib.rcParams["font.family"] == list(CHART_FONTS)
