"""The charts several notebooks share: each draws its data, and a colour means one thing in
every chart (the review found the 7- and 30-day curves swapping colours, and a record's
colour changing between two bump charts of the same replay)."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from memorylib.notebook import charts
from memorylib.notebook.common import CHART_FONTS, setup_notebook
from memorylib.scoring import recency_score


def _curves(fig) -> dict[str, str]:
    return {
        line.get_label(): to_hex(line.get_color())
        for line in fig.axes[0].get_lines()
        if not line.get_label().startswith("_")
    }


def test_a_recency_window_keeps_its_colour_whatever_else_is_drawn() -> None:
    three = _curves(charts.recency_curves((7, 30, 90), highlight_window=30))
    explorer = _curves(charts.recency_curves((7, 30), highlight_window=7, mark_age=45))
    assert three["window 7 d"] == explorer["window 7 d"] == charts.window_colour(7)
    assert three["window 30 d"] == explorer["window 30 d"] == charts.window_colour(30)
    assert len(set(three.values())) == 3


def test_the_recency_curves_are_the_formula() -> None:
    fig = charts.recency_curves((30,), max_age_days=120)
    (curve,) = [line for line in fig.axes[0].get_lines() if line.get_label() == "window 30 d"]
    for age, value in zip(curve.get_xdata()[::60], curve.get_ydata()[::60], strict=True):
        assert value == pytest.approx(recency_score(age, 30))


def test_contribution_bars_stack_lexical_and_recency_in_their_colours() -> None:
    frame = pd.DataFrame(
        {
            "memory_id": ["a", "b"],
            "lexical_contribution": [0.85, 0.425],
            "recency_contribution": [0.1, 0.15],
            "total": [0.95, 0.575],
            "matched": ["2/2", "1/2"],
        }
    )
    bars = charts.contribution_bars(frame).axes[0].patches
    lexical = [b for b in bars if to_hex(b.get_facecolor()) == charts.COLOURS["lexical"]]
    recency = [b for b in bars if to_hex(b.get_facecolor()) == charts.COLOURS["recency"]]
    assert sorted(b.get_width() for b in lexical) == [0.425, 0.85]
    placed = sorted((b.get_x(), b.get_width()) for b in recency)  # each starts where lexical ends
    assert placed == [(0.425, pytest.approx(0.15)), (0.85, pytest.approx(0.1))]


def _trajectory() -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    rows = [
        ("s1", 1, "old"),
        ("s1", 2, "mid"),
        ("s2", 1, "new"),
        ("s2", 2, "old"),
        ("s2", 3, "mid"),
    ]
    frame = pd.DataFrame(rows, columns=["step", "rank", "memory_id"])
    return frame, [("s1", "first"), ("s2", "second")]


def test_a_record_keeps_its_colour_whichever_step_is_highlighted() -> None:
    frame, steps = _trajectory()
    first = _curves(charts.bump_chart(frame, steps, top=2, highlight="s1"))
    last = _curves(charts.bump_chart(frame, steps, top=2))
    assert (
        first["1 · old"] == last["2 · old"] == charts.record_colours(["new", "mid", "old"])["old"]
    )
    assert "other records" in first and "1 · new" in last


def test_the_bump_chart_draws_ranks_and_the_out_row() -> None:
    frame, steps = _trajectory()
    ax = charts.bump_chart(frame, steps, top=2, title="t").axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "out"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["first", "second"]
    (mid,) = [line for line in ax.get_lines() if line.get_label() == "other records"]
    assert list(mid.get_ydata()) == [2, 3]  # rank 3 is drawn on the "out" row


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
