"""The Chinese edition (notebooks/zh/) is a twin of the English one: the same cells in the same
order, with the same ids, types and slide metadata, and the same code except comments and the
one setting that chooses the language. A change to one edition without the other fails here."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
TWINS = sorted((NOTEBOOKS / "zh").glob("[0-9][0-9]*_*.ipynb"))
SETTING = re.compile(r"setup_notebook\((.*?)\)")
ZH_SETTING = 'language="zh"'


def docstring_starts(source: str) -> set[tuple[int, int]]:
    """Where each docstring of the cell's functions and classes begins (line, column)."""
    starts = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                starts.add((first.lineno, first.col_offset))
    return starts


def code_tokens(source: str) -> list[tuple[int, str]]:
    """The cell's Python tokens without comments and layout-only newlines, each docstring one
    placeholder token (so a comment or a docstring may be rewritten, a comment moved to its own
    line or dropped, and nothing else may change: a docstring is prose for the reader, never
    an output)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}
    docstrings = docstring_starts(source)
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [
        (t.type, "<docstring>" if t.type == tokenize.STRING and t.start in docstrings else t.string)
        for t in tokens
        if t.type not in skip
    ]


def english_setting(source: str) -> str:
    """A Chinese cell's code with its language setting taken out: ``setup_notebook(language="zh")``
    is the English ``setup_notebook()``, ``setup_notebook(x, language="zh")`` its ``(x)``."""

    def back(match: re.Match[str]) -> str:
        arguments = [a.strip() for a in match.group(1).split(",") if a.strip() != ZH_SETTING]
        return f"setup_notebook({', '.join(a for a in arguments if a)})"

    return SETTING.sub(back, source)


def test_comments_and_the_setting_are_the_only_freedom() -> None:
    english = "common.setup_notebook()\nx = 1  # one\n"
    assert code_tokens(english_setting('common.setup_notebook(language="zh")\nx = 1  # 一\n')) == (
        code_tokens(english)
    )
    assert code_tokens("# 说明\nx = 1\n") == code_tokens("x = 1  # note\n")
    assert code_tokens('x = "一"\n') != code_tokens('x = "one"\n')  # strings are code
    doc = 'def f():\n    """{}"""\n    return "{}"\n'
    assert code_tokens(doc.format("说明", "x")) == code_tokens(doc.format("note", "x"))  # prose
    assert code_tokens(doc.format("说明", "一")) != code_tokens(doc.format("note", "x"))
    assert code_tokens('def f():\n    return "一"\n') != code_tokens('def f():\n    return "x"\n')
    assert code_tokens("x = 2\n") != code_tokens("x = 1\n")


def test_every_english_notebook_has_a_chinese_twin() -> None:
    english = {p.name for p in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")}
    chinese = {p.name for p in TWINS}
    assert chinese <= english, sorted(chinese - english)
    assert chinese == english, f"no Chinese twin yet: {sorted(english - chinese)}"


@pytest.mark.parametrize("twin", TWINS, ids=[p.stem for p in TWINS])
def test_the_twin_has_the_same_cells_and_the_same_code(twin: Path) -> None:
    zh = nbformat.read(twin, as_version=4)
    en = nbformat.read(NOTEBOOKS / twin.name, as_version=4)
    assert [c.cell_type for c in zh.cells] == [c.cell_type for c in en.cells], "cell types"
    assert [c.id for c in zh.cells] == [c.id for c in en.cells], "cell ids"
    for index, (a, b) in enumerate(zip(zh.cells, en.cells, strict=True)):
        assert a.metadata.get("slideshow") == b.metadata.get("slideshow"), f"cell {index} slide"
        assert a.metadata.get("tags", []) == b.metadata.get("tags", []), f"cell {index} tags"
        if b.cell_type == "code":
            assert code_tokens(english_setting(a.source)) == code_tokens(b.source), (
                f"cell {index} ({b.id}): the code differs from the English twin"
            )
    settings = [
        c.source for c in zh.cells if c.cell_type == "code" and "setup_notebook(" in c.source
    ]
    assert settings and all(ZH_SETTING in s for s in settings), "setup_notebook(language='zh')"


@pytest.mark.parametrize("twin", TWINS, ids=[p.stem for p in TWINS])
def test_the_twin_is_written_in_chinese(twin: Path) -> None:
    """Every markdown cell of the English twin that has prose has Chinese prose here."""
    zh = nbformat.read(twin, as_version=4)
    en = nbformat.read(NOTEBOOKS / twin.name, as_version=4)
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for index, (a, b) in enumerate(zip(zh.cells, en.cells, strict=True)):
        if b.cell_type == "markdown" and len(re.findall(r"[A-Za-z]{3,}", b.source)) > 5:
            assert len(cjk.findall(a.source)) >= 5, f"cell {index} ({b.id}) is not translated"


@pytest.mark.parametrize("twin", TWINS, ids=[p.stem for p in TWINS])
def test_the_twin_has_its_title_and_navigation_in_chinese(twin: Path) -> None:
    """Title ``# NN · 标签：...`` and the navigation line (labels of the zh catalogue) under it
    and at the end; the two indexes link each other's edition."""
    from .course import course_notebook, in_language, navigation_line

    cells = nbformat.read(twin, as_version=4).cells
    with in_language("zh"):
        line, label = navigation_line(twin.stem), course_notebook(twin.stem).label
    lines = [ln for ln in cells[0].source.splitlines() if ln.strip()]
    if twin.stem != "00_index":
        assert lines[0] == f"# {label}" or lines[0].startswith(f"# {label}："), lines[0]
    assert lines[1] == line, f"{lines[1]!r}\nexpected {line!r}"
    last = [ln for ln in cells[-1].source.splitlines() if ln.strip()][-1]
    assert last == line, last
    if twin.stem == "00_index":
        assert "](../00_index.ipynb)" in cells[0].source, "the zh index links the English one"
        english = nbformat.read(NOTEBOOKS / "00_index.ipynb", as_version=4).cells[0].source
        assert "](zh/00_index.ipynb)" in english, "the English index links the zh one"
