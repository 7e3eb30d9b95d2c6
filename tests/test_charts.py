"""The chart several notebooks share (the funnel of 03, whose colours 08's playground SVG
uses too): it draws its counts in the stage colours, and the font list is set in one place.
The charts one notebook draws (04's recency curves and bars, 05's bump chart) are code in
that notebook's cells, compared by nbval."""

from __future__ import annotations

import matplotlib
from matplotlib.colors import to_hex

from memorylib.notebook import charts
from memorylib.notebook.common import CHART_FONTS, setup_notebook


def test_the_funnel_shows_each_stage_count() -> None:
    fig = charts.funnel({"searched": 69, "candidates": 26, "hits": 5})
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
