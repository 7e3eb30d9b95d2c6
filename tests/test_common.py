"""The shared notebook helpers: styled tables with a text form, typed outcomes, navigation."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from memorylib import RemoteMemoryValidationError
from memorylib.notebook.common import NO_ERROR, StyledTable, styled_table, typed_attempt

from .course import COURSE, course_notebook, navigation_line


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"memory_id": ["a", "<b>"], "total": [0.995161, 0.5]})


def formatted(obj: object) -> dict[str, str]:
    """What a notebook stores for ``obj`` as a cell's value (IPython's formatters)."""
    from IPython.core.interactiveshell import InteractiveShell

    data, _ = InteractiveShell.instance().display_formatter.format(obj)
    return data


def test_a_bare_styler_stores_a_memory_address(frame: pd.DataFrame) -> None:
    # The problem StyledTable solves: the Styler's text/plain is its default repr.
    assert re.match(
        r"<pandas\.io\.formats\.style\.Styler at 0x",
        formatted(styled_table(frame, uuid="t").styler)["text/plain"],
    )


def test_styled_table_keeps_the_html_and_adds_the_frame_as_text(frame: pd.DataFrame) -> None:
    table = styled_table(frame, uuid="t-table", gradient="total")
    data = formatted(table)
    assert data["text/html"] == table.styler.to_html()
    assert 'id="T_t-table"' in data["text/html"] and "&lt;b&gt;" in data["text/html"]
    text = data["text/plain"]
    assert "Styler" not in text and "0x" not in text
    assert text.splitlines()[0].split() == ["memory_id", "total"]  # index hidden, as styled
    assert "0.995161" in text and "<b>" in text  # text is text: nothing to escape
    assert repr(table) == str(table.text) == text
    assert table.data is table.styler.data


def test_a_styler_that_shows_its_index_keeps_it_in_the_text(frame: pd.DataFrame) -> None:
    text = StyledTable(frame.style.set_uuid("t-index")).text
    assert text.splitlines()[1].startswith("0")


def test_typed_attempt() -> None:
    assert typed_attempt(lambda: 42) == (str(NO_ERROR), "42")

    def rejected() -> None:
        raise RemoteMemoryValidationError("limit must be between 1 and 10, got 0")

    assert typed_attempt(rejected) == (
        "RemoteMemoryValidationError",
        "limit must be between 1 and 10, got 0",
    )
    with pytest.raises(ZeroDivisionError):  # a bug is not a lesson: it propagates
        typed_attempt(lambda: 1 / 0)


def test_navigation_lines_follow_the_course_order() -> None:
    assert navigation_line("00_index") == "Index · [01 · Stored records](01_stored_records.ipynb) →"
    assert navigation_line("01_stored_records") == (
        "← [Index](00_index.ipynb) · [02 · Normalize](02_normalize.ipynb) →"
    )
    assert navigation_line("06c_capstone") == (
        "← [06b · Profile](06b_profile.ipynb) · [Index](00_index.ipynb)"
        " · [07 · Failures and recovery](07_failures_and_recovery.ipynb) →"
    )
    last = COURSE[-1]
    assert navigation_line(last.stem).endswith("· [Index](00_index.ipynb)")
    with pytest.raises(ValueError, match="not in COURSE"):
        navigation_line("99_missing")


def test_course_labels_and_files() -> None:
    stems = [n.stem for n in COURSE]
    assert len(set(stems)) == len(stems) and stems[0] == "00_index"
    for notebook in COURSE[1:]:
        number = notebook.stem.split("_", 1)[0]
        assert notebook.label.startswith(f"{number} · "), notebook
    assert course_notebook("07b_retraction").file == "07b_retraction.ipynb"
