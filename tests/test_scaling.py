"""The scaling notebook views: frame shape and columns, chart axes (no timing assertions)."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from memorylib.notebook.scaling import PATHS, scaling_chart, scaling_frame  # noqa: E402


def test_scaling_frame_has_one_row_per_size_and_path() -> None:
    frame = scaling_frame((60, 150), queries=3, seed=1)
    assert list(frame.columns) == ["records", "path", "p50_ms", "p95_ms"]
    assert len(frame) == 4
    assert sorted(set(frame["records"])) == [60, 150]
    assert set(frame["path"]) == set(PATHS)
    assert (frame["p50_ms"] > 0).all()
    assert (frame["p95_ms"] >= frame["p50_ms"]).all()


def test_scaling_chart_labels_and_log_scale() -> None:
    frame = pd.DataFrame(
        {
            "records": [100, 1000, 100, 1000],
            "path": ["teaching", "teaching", "indexed", "indexed"],
            "p50_ms": [10.0, 100.0, 0.1, 0.12],
            "p95_ms": [12.0, 130.0, 0.2, 0.3],
        }
    )
    fig = scaling_chart(frame)
    (ax,) = fig.axes
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert [line.get_label() for line in ax.get_lines()] == ["teaching (p50)", "indexed (p50)"]
