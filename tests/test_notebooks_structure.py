"""Every course notebook: valid, executed in order, no errors, no secrets or paths, small,
with objectives / exercise / recap, and links that resolve."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = [
    "00_index", "01_stored_records", "02_normalize", "03_candidates", "04_scoring",
    "05_stable_rank", "06_render_and_profile", "07_failures_and_retraction",
    "08_query_playground", "09_live_agent", "10_beyond_the_teaching_ranker",
]
PATHS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
ABSOLUTE_PATH = re.compile(r"(/work/|/home/|/root/|/tmp/|/private/var/|/Users/|[A-Z]:\\\\Users)")
SECRET = re.compile(r"sk-ant-[A-Za-z0-9_-]{8,}|x-api-key|ANTHROPIC_API_KEY=\S+")
LINK = re.compile(r"\]\(([^)#]+\.ipynb)(#[^)]*)?\)")


def ids(paths):
    return [p.stem for p in paths]


def output_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append(output["text"])
        for mime, value in output.get("data", {}).items():
            if mime.startswith("text/") or mime.endswith("json"):
                parts.append(value if isinstance(value, str) else json.dumps(value))
        if output.get("output_type") == "error":
            parts.append("\n".join(output.get("traceback", [])))
    return "\n".join(parts)


def markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_the_sequence_is_complete() -> None:
    present = [p.stem for p in PATHS]
    missing = [name for name in EXPECTED if name not in present]
    assert not missing, f"missing notebooks: {missing}"


@pytest.mark.parametrize("path", PATHS, ids=ids(PATHS))
class TestNotebook:
    def test_valid_and_small(self, path: Path) -> None:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert path.stat().st_size < 1_000_000, f"{path.name} is {path.stat().st_size} bytes"
        assert nb.metadata["kernelspec"]["name"] == "python3"
        assert "widgets" not in nb.metadata, "run scripts/run_notebooks.py to tidy widget state"

    def test_executed_top_to_bottom(self, path: Path) -> None:
        nb = nbformat.read(path, as_version=4)
        counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
        assert counts, "a notebook without code teaches nothing runnable"
        assert counts == list(range(1, len(counts) + 1)), counts

    def test_no_error_outputs(self, path: Path) -> None:
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            for output in cell.get("outputs", []):
                assert output.get("output_type") != "error", f"cell {index} raised"
                if output.get("name") == "stderr":
                    assert "Traceback" not in output.get("text", ""), f"cell {index}"
                    assert "Warning" not in output.get("text", ""), f"cell {index} warns"

    def test_no_secrets_or_absolute_paths(self, path: Path) -> None:
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            text = output_text(cell)
            assert not SECRET.search(text), f"cell {index} shows a secret"
            found = ABSOLUTE_PATH.search(text)
            assert not found, f"cell {index} shows an absolute path: {found.group()}"

    def test_objectives_exercise_recap(self, path: Path) -> None:
        text = markdown(nbformat.read(path, as_version=4)).lower()
        assert "learning objectives" in text
        if path.stem != "00_index":
            assert "your turn" in text
            assert "recap" in text

    def test_links_resolve_and_chain(self, path: Path) -> None:
        text = markdown(nbformat.read(path, as_version=4))
        targets = {m.group(1) for m in LINK.finditer(text)}
        for target in targets:
            assert (path.parent / target).exists(), f"broken link to {target}"
        position = EXPECTED.index(path.stem) if path.stem in EXPECTED else None
        if position is None:
            return
        if position > 0:
            assert f"{EXPECTED[position - 1]}.ipynb" in targets, "no link to the previous one"
        if position < len(EXPECTED) - 1:
            assert f"{EXPECTED[position + 1]}.ipynb" in targets, "no link to the next one"
