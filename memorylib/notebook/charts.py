"""The charts several notebooks draw, each drawn here once.

* ``contribution_bars``: each candidate's total as lexical + recency contribution (04, 05, 10);
* ``recency_curves``: recency = 1 / (1 + age / window), one curve per window (04, 05);
* ``bump_chart``: each record's rank across steps (as_of moving, weights changing) (05, 10);
* ``funnel``: searched -> candidates -> hits (03, 08).

Plain matplotlib, in the one style ``common.setup_notebook()`` sets (figure size, dpi,
fonts: its font family list is where a CJK font goes). Every chart is drawn inside
``common.chart_fonts()``. A colour means one thing in every chart: ``COLOURS`` by
meaning, ``window_colour`` by recency window (7 days is always the same green, whatever
else is drawn), ``record_colours`` by memory_id (a record keeps its colour in every
chart of one trajectory). The playground's live SVG (notebook 08) uses the same colours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from memorylib.notebook.common import with_chart_fonts
from memorylib.scoring import recency_score

__all__ = [
    "COLOURS",
    "bump_chart",
    "contribution_bars",
    "funnel",
    "recency_curves",
    "record_colours",
    "window_colour",
]

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
_WINDOWS = {7.0: "#2ca02c", 14.0: "#9467bd", 30.0: "#d62728", 90.0: "#1f77b4", 365.0: "#8c564b"}
_RECORDS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
_RECORDS += ("#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173")


def window_colour(window_days: float) -> str:
    """The colour of a recency window: fixed per window, the same in every chart."""
    return _WINDOWS.get(float(window_days), "#e377c2")


def record_colours(memory_ids: Iterable[str]) -> dict[str, str]:
    """One colour per memory_id, by sorted id: the same ids always get the same colours."""
    return {m: _RECORDS[n % len(_RECORDS)] for n, m in enumerate(sorted(set(memory_ids)))}


@with_chart_fonts
def contribution_bars(frame: pd.DataFrame, *, title: str = "", top: int | None = None) -> Figure:
    """Stacked horizontal bars: lexical + recency contribution per candidate.

    ``frame`` has memory_id, lexical_contribution, recency_contribution, total and
    matched (a label such as "2/3"). Highest total at the top (only the ``top`` highest
    when given); each bar is labelled with its total and matched count.
    """
    data = frame.sort_values(["total", "memory_id"], ascending=[False, True])
    data = (data if top is None else data.head(top)).iloc[::-1]  # barh draws row 0 lowest
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * max(len(data), 3) + 1.3))
    labels, lexical = list(data["memory_id"]), list(data["lexical_contribution"])
    ax.barh(labels, lexical, color=COLOURS["lexical"], label="lexical contribution")
    ax.barh(
        labels,
        list(data["recency_contribution"]),
        left=lexical,
        color=COLOURS["recency"],
        label="recency contribution",
    )
    for y, (total, matched) in enumerate(zip(data["total"], data["matched"], strict=True)):
        ax.text(total + 0.01, y, f"{total:.3f}  ({matched})", va="center", fontsize=8)
    ax.set_xlim(0, max(1.18, 1.18 * max(data["total"], default=1.0)))
    ax.set_xlabel("score (total = lexical + recency)")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


@with_chart_fonts
def recency_curves(
    windows: Sequence[float] = (7, 30, 90),
    *,
    max_age_days: float = 180,
    highlight_window: float | None = 30,
    mark_age: float | None = None,
    title: str = "recency = 1 / (1 + age / window)",
) -> Figure:
    """The decay curve of each window, with its half-life point (age = window, recency 0.5).

    ``highlight_window`` is drawn thicker; ``mark_age`` adds a point on that curve.
    """
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    ages = [max_age_days * i / 360 for i in range(361)]
    for window in windows:
        colour = window_colour(window)
        bold = highlight_window is not None and float(window) == float(highlight_window)
        ax.plot(
            ages,
            [recency_score(a, window) for a in ages],
            color=colour,
            linewidth=2.4 if bold else 1.4,
            label=f"window {window:g} d",
        )
        if window <= max_age_days:  # the half-life: recency is 0.5 when age equals window
            ax.plot([window, window], [0, 0.5], color=colour, linewidth=0.8, linestyle=":")
            ax.plot([window], [0.5], "o", color=colour, markersize=5)
            ax.annotate(
                f"{window:g} d",
                (window, 0),
                textcoords="offset points",
                xytext=(3, 4),
                fontsize=8,
                color=colour,
            )
    ax.axhline(0.5, color=COLOURS["guide"], linewidth=0.6, linestyle=":")
    ax.text(
        max_age_days,
        0.51,
        "half-life: recency 0.5 at age = window",
        ha="right",
        va="bottom",
        fontsize=8,
        color=COLOURS["guide"],
    )
    if mark_age is not None and highlight_window is not None:
        value = recency_score(mark_age, highlight_window)
        ax.plot([mark_age], [value], "s", color=COLOURS["mark"], markersize=6, zorder=5)
        ax.annotate(
            f"age {mark_age:g} d -> {value:.3f}",
            (mark_age, value),
            textcoords="offset points",
            xytext=(6, 8),
            fontsize=8,
        )
    ax.set_xlim(0, max_age_days)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("age_days = as_of - captured_at")
    ax.set_ylabel("recency")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _kept_points(ranks: Mapping[int, int], top: int) -> list[int]:
    """Steps to draw for one record: its top-``top`` steps and the "out" steps right next
    to them (where it drops out or climbs in); long out runs are not drawn."""
    return [
        x
        for x, rank in sorted(ranks.items())
        if rank <= top or any(ranks.get(n, top + 1) <= top for n in (x - 1, x + 1))
    ]


def _runs(points: list[int]) -> list[list[int]]:
    """Consecutive steps as one line each."""
    runs: list[list[int]] = []
    for x in points:
        if runs and x == runs[-1][-1] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    return runs


@with_chart_fonts
def bump_chart(
    trajectory: pd.DataFrame,
    steps: Sequence[tuple[Any, str]],
    *,
    top: int = 5,
    highlight: Any = None,
    title: str = "",
    xlabel: str = "as_of",
) -> Figure:
    """Rank (1 on top) of every record that reaches the top ``top`` at some ``step``.

    ``trajectory`` has one row per step and ranked record (step, rank, memory_id);
    ``steps`` are the (step, label) pairs in order. The records in the top ``top`` at
    the ``highlight`` step (the last step when None) are coloured (``record_colours``,
    so a record keeps its colour whichever step is highlighted) and listed by their rank
    there; the others are grey. A line drops to the "out" row where a record leaves the
    top and climbs from it where it enters; a record not yet stored has no point there.
    """
    position = {step: i for i, (step, _) in enumerate(steps)}
    labels = [label for _, label in steps]
    focus_step = highlight if highlight in position else steps[-1][0]
    at_focus = trajectory[(trajectory["step"] == focus_step) & (trajectory["rank"] <= top)]
    focus = list(at_focus.sort_values("rank")["memory_id"])
    shown = sorted(set(trajectory.loc[trajectory["rank"] <= top, "memory_id"]))
    colours = record_colours(shown)
    out_row = top + 1
    fig, ax = plt.subplots(figsize=(8.6, 0.45 * (top + 1) + 2.2))
    others_labelled = False
    for memory_id in [m for m in shown if m not in focus] + focus:  # focus drawn on top
        rows = trajectory[trajectory["memory_id"] == memory_id]
        ranks = {
            position[s]: min(int(r), out_row)
            for s, r in zip(rows["step"], rows["rank"], strict=True)
        }
        if memory_id in focus:
            rank = focus.index(memory_id) + 1
            style = {"color": colours[memory_id], "linewidth": 2.2, "markersize": 6, "zorder": 3}
            label = f"{rank} · {memory_id}"
        else:
            style = {"color": COLOURS["other"], "linewidth": 1.2, "markersize": 4, "zorder": 2}
            label = "_" if others_labelled else "other records"
            others_labelled = True
        for number, run in enumerate(_runs(_kept_points(ranks, top))):
            ax.plot(
                run, [ranks[x] for x in run], "-o", label=label if number == 0 else "_", **style
            )
    if highlight in position:
        x = position[highlight]
        ax.axvspan(x - 0.4, x + 0.4, color=COLOURS["highlight"], zorder=0)
    ax.set_yticks(range(1, out_row + 1), [str(r) for r in range(1, top + 1)] + ["out"])
    ax.set_ylim(out_row + 0.5, 0.5)
    rotate = len(steps) > 6
    ax.set_xticks(
        range(len(steps)), labels, rotation=45 if rotate else 0, ha="right" if rotate else "center"
    )
    ax.set_xlim(-0.5, len(steps) - 0.5)
    ax.set_ylabel("rank")
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, fontsize=10)
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda i: (names[i] == "other records", names[i]))
    ax.legend(
        [handles[i] for i in order],
        [names[i] for i in order],
        fontsize=8,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        title=f"top {top} at {labels[position[focus_step]]}",
        title_fontsize=8,
    )
    ax.grid(axis="y", color="#eeeeee")
    fig.tight_layout()
    return fig


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
