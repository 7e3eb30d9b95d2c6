"""Notebooks 07 and 07b in real JupyterLab: Run All on a cleared copy, and every cell runs.

07 starts five contender processes with the ``spawn`` method from its kernel, runs
``python -m memorylib`` in subprocesses and breaks ``os`` calls on purpose; 07b draws its
chart. Each must run top to bottom in the browser, with no error output, and show the
outputs its prose reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .browser_support import BROWSER_MARKS, launched_chromium, run_all_outputs

pytestmark = BROWSER_MARKS

# notebook -> texts its outputs must show once Run All has finished
SHOWN = {
    "07_failures_and_recovery": [
        "outcomes: {'RemoteMemoryDuplicateError': 4, 'appended (won)': 1}",
        "lines with the raced id: 1",
        "the quarantined bytes are exactly the torn ones: True",
        "kept + quarantined bytes == the original file: True",
        "read_all() -> RemoteMemoryFailedClosedError",
        "retry      -> no error: conversation-008",
    ],
    "07b_retraction": [
        'injected after:  <remote_profile memory_id="profile-001"',
        "latest_profile() after: profile-001",
        "retracted_records: 1",
    ],
}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as chromium:
        yield chromium


@pytest.mark.parametrize("stem", list(SHOWN))
def test_runs_top_to_bottom_in_jupyterlab(browser, tmp_path: Path, stem: str) -> None:
    shown = run_all_outputs(browser, tmp_path, stem)
    for text in SHOWN[stem]:
        assert text in shown, f"{stem}: {text!r} is not in the outputs"
