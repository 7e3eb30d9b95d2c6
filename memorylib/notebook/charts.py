"""What several notebooks draw, drawn once: the candidate funnel (03; 08's playground SVG uses
its colours), and the colours that mean one thing in every chart. A chart one notebook draws
is code in that notebook's cells, with these colours."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from memorylib.notebook.common import with_chart_fonts
from memorylib.notebook.messages import say

__all__ = ["COLOURS", "funnel"]

COLOURS = {
    "lexical": "#3182bd",  # the lexical contribution, everywhere
    "recency": "#fd8d3c",  # the recency contribution, everywhere
    "searched": "#c6dbef",
    "candidates": "#9ecae1",
    "hits": "#3182bd",
    "other": "#c7c7c7",  # what a chart shows for context only
}


@with_chart_fonts
def funnel(counts: Mapping[str, int], *, title: str = "") -> Figure:
    """One bar per stage (the keys, in order: searched, candidates, hits), with its count."""
    stages = list(counts)
    fig, ax = plt.subplots(figsize=(6.0, 0.45 * len(stages) + 1.1))
    values = [counts[stage] for stage in stages]
    bars = ax.barh(stages, values, color=[COLOURS.get(s, COLOURS["other"]) for s in stages])
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], padding=3, fontsize=9)
    ax.invert_yaxis()  # searched on top
    ax.set_xlim(0, max([*values, 1]) * 1.15)
    ax.set_xlabel(say("charts.records"))
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
