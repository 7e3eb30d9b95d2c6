"""What several notebooks draw, drawn here once: the candidate funnel (03, and the
playground's live SVG in 08), and the colours that mean one thing in every chart.

A chart that one notebook draws is written in that notebook's cells (04's recency curves
and contribution bars, 05's bump chart), with these colours. Plain matplotlib, in the
style ``common.setup_notebook()`` sets, drawn inside ``common.chart_fonts()``.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from memorylib.notebook.common import with_chart_fonts

__all__ = ["COLOURS", "funnel"]

COLOURS = {
    "lexical": "#3182bd",  # the lexical contribution, everywhere
    "recency": "#fd8d3c",  # the recency contribution, everywhere
    "searched": "#c6dbef",
    "candidates": "#9ecae1",
    "hits": "#3182bd",
    "other": "#c7c7c7",  # what a chart shows for context only
    "guide": "grey",  # reference lines and their notes
    "highlight": "#fff2b2",  # the step or band a chart is about
    "mark": "black",  # the one point a chart is about
}


@with_chart_fonts
def funnel(counts: Mapping[str, int], *, title: str = "") -> Figure:
    """The funnel: one bar per stage (searched, candidates, hits: the keys, in order),
    each labelled with its count. An empty stage is an explained empty result."""
    stages = list(counts)
    fig, ax = plt.subplots(figsize=(6.0, 0.45 * len(stages) + 1.1))
    values = [counts[stage] for stage in stages]
    bars = ax.barh(stages, values, color=[COLOURS.get(s, COLOURS["other"]) for s in stages])
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], padding=3, fontsize=9)
    ax.invert_yaxis()  # searched on top
    ax.set_xlim(0, max([*values, 1]) * 1.15)
    ax.set_xlabel("records")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
