"""Every course notebook: valid, executed in order, no errors, no secrets or paths, small,
with objectives / exercise / recap, and links that resolve. For the notebooks listed below
(the others join as they are brought up to date): the navigation line, styled tables with
a text form, and exercises that show no answer before the attempt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from .course import COURSE, course_notebook, navigation_line

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = [notebook.stem for notebook in COURSE]  # the course order, in one place
PATHS = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))  # 07b_retraction too
ZH_PATHS = sorted((NOTEBOOKS / "zh").glob("[0-9][0-9]*_*.ipynb"))  # the Chinese twins
ABSOLUTE_PATH = re.compile(r"(/work/|/home/|/root/|/tmp/|/private/var/|/Users/|[A-Z]:\\\\Users)")
SECRET = re.compile(r"sk-ant-[A-Za-z0-9_-]{8,}|x-api-key|ANTHROPIC_API_KEY=\S+")
LINK = re.compile(r"\]\(([^)#]+\.ipynb)(#[^)]*)?\)")


def ids(paths):
    return [p.relative_to(NOTEBOOKS).with_suffix("").as_posix() for p in paths]


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


@pytest.mark.parametrize("path", PATHS + ZH_PATHS, ids=ids(PATHS + ZH_PATHS))
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
        chinese = path.parent.name == "zh"  # its headings: docs/glossary.md
        assert ("## 学习目标" if chinese else "learning objectives") in text
        if path.stem != "00_index":
            assert ("## 轮到你了" if chinese else "your turn") in text
            assert ("## 小结" if chinese else "recap") in text

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


# -- the conventions fixed in issue 10 --

# The navigation line (notebooks/AUTHORING.md): under the title and as the last line.
NAVIGATION_CHECKED = EXPECTED  # every notebook of the course
# Styled tables store their frame as text/plain (common.styled_table), never "Styler at 0x".
STYLER_TEXT_CHECKED = NAVIGATION_CHECKED
# "Your turn" is committed unanswered, and nothing in it shows an answer.
EXERCISE_CHECKED = [
    "01_stored_records",
    "02_normalize",
    "03_candidates",
    "07_failures_and_recovery",
    "07b_retraction",
    "08_query_playground",
    "09_live_agent",
    "04_scoring",
    "05_stable_rank",
    "06_render",
    "06b_profile",
    "06c_capstone",
    "11_from_file_to_service",
]
SOLUTIONS = NOTEBOOKS / "solutions"


def _notebook(stem: str):
    return nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)


def _lines(source: str) -> list[str]:
    return [line for line in source.splitlines() if line.strip()]


def test_the_course_order_has_one_source() -> None:
    # COURSE (memorylib.notebook.common) orders the course and labels the links; every
    # numbered notebook on disk must be in it.
    on_disk = {p.stem for p in PATHS}
    assert on_disk == set(EXPECTED), f"not in COURSE: {sorted(on_disk - set(EXPECTED))}"


@pytest.mark.parametrize("stem", NAVIGATION_CHECKED)
def test_navigation_line_under_the_title_and_at_the_end(stem: str) -> None:
    nb = _notebook(stem)
    line = navigation_line(stem)
    first, last = nb.cells[0], nb.cells[-1]
    assert first.cell_type == "markdown" and last.cell_type == "markdown"
    title, under = _lines(first.source)[:2]
    label = course_notebook(stem).label
    if stem != "00_index":
        assert title == f"# {label}" or title.startswith(f"# {label}: "), title
    assert under == line, f"first cell: {under!r}\nexpected:   {line!r}"
    assert _lines(last.source)[-1] == line, f"last cell ends with {_lines(last.source)[-1]!r}"
    # the old formats are gone, and no other navigation line is left in between
    text = markdown(nb)
    assert "[previous](" not in text and "[next →](" not in text
    arrows = [
        ln
        for c in nb.cells[1:-1]
        if c.cell_type == "markdown"
        for ln in c.source.splitlines()
        if ln.startswith("← ") or ln.endswith(" →")
    ]
    assert not arrows, arrows


@pytest.mark.parametrize("stem", STYLER_TEXT_CHECKED)
def test_styled_tables_have_a_text_form(stem: str) -> None:
    for index, cell in enumerate(_notebook(stem).cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            plain = data.get("text/plain", "")
            assert "Styler at 0x" not in plain, f"cell {index}: use common.styled_table"
            if '<table id="T_' in data.get("text/html", ""):  # a Styler's table
                assert plain.strip() and not plain.startswith("<"), f"cell {index}: {plain!r}"


def _your_turn(nb) -> list:
    start = next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and "## Your turn" in c.source
    )
    end = next(
        i
        for i, c in enumerate(nb.cells)
        if i > start and c.cell_type == "markdown" and "## Recap" in c.source
    )
    return nb.cells[start:end]


ANSWER = re.compile(r"^(my_\w+)\s*=\s*(.*?)\s*(#.*)?$", re.M)


@pytest.mark.parametrize("stem", EXERCISE_CHECKED)
def test_your_turn_is_committed_unanswered(stem: str) -> None:
    section = _your_turn(_notebook(stem))
    answers = [m for c in section if c.cell_type == "code" for m in ANSWER.finditer(c.source)]
    assert answers, "no my_... = ... answer cell"
    for match in answers:  # `...`, or a template holding only keys, each still `...`
        value = match.group(2)
        template = re.fullmatch(r'\{\s*(?:"\w+":\s*\.\.\.,?\s*)+\}', value)
        assert value == "..." or template, f"{match.group(1)} is committed answered"
    shown = "\n".join(output_text(c) for c in section if c.cell_type == "code")
    assert "⏳ Not answered yet" in shown
    assert "✅" not in shown and "❌" not in shown


def _template_values(stem: str, variable: str = "my_prediction") -> dict[str, object]:
    """The values of the dict in the comment that shows the answer's shape."""
    import memorylib

    (cell,) = [
        c
        for c in _your_turn(_notebook(stem))
        if c.cell_type == "code" and f"{variable} = ..." in c.source
    ]
    comment = " ".join(line for line in cell.source.splitlines() if line.startswith("#"))
    shape = re.search(r"\{.*\}", comment)
    assert shape, "the answer cell's comment shows no shape"
    names = {name: getattr(memorylib, name) for name in memorylib.__all__}
    pairs = re.findall(r'"(\w+)":\s*("[^"]*"|[\w.-]+)', shape.group())
    return {key: eval(value, {"__builtins__": {}}, {**names, "None": None}) for key, value in pairs}


# 01's shape comment carries no values at all (tests/test_records_exercises.py), and the
# templates of 07 and 06c hold only their keys (tests/test_failure_views.py,
# tests/test_capstone.py): even wrong values tell a student, by elimination, what an answer
# is not.
TEMPLATES = [
    ("04_scoring", "buildit.scoring", "check_q11_note", "04_scoring.py"),
    ("07b_retraction", "retraction_views", "check_retraction_predictions", "07b_retraction.py"),
    ("06_render", "buildit.render", "check_render_predictions", "06_render.py"),
    ("06b_profile", "buildit.profile", "check_profile_predictions", "06b_profile.py"),
]


@pytest.mark.parametrize(
    ("stem", "module", "name", "solution"), TEMPLATES, ids=[t[0] for t in TEMPLATES]
)
def test_the_shape_comment_holds_only_wrong_values(stem, module, name, solution) -> None:
    import importlib
    import runpy

    check = getattr(importlib.import_module(f"memorylib.notebook.{module}"), name)
    answers = runpy.run_path(str(SOLUTIONS / solution))
    variable = "my_breakdown" if "my_breakdown" in answers else "my_prediction"
    right = answers[variable]
    assert check(right).is_right
    shown = _template_values(stem, variable)
    assert len(shown) >= 3, shown
    for key, value in shown.items():
        assert not check({**right, key: value}).is_right, f"the comment gives away {key}={value!r}"


def test_no_accepted_answer_of_08_is_on_screen_before_the_exercise(tmp_path: Path) -> None:
    """Notebook 08 asks for a query Mei gets hits for and Omar none. No query the notebook
    runs before the exercise may be such a query (nor any of its terms), and no accepted
    answer of the reference solution may appear before it, in prose, code or output."""
    import ast
    import runpy

    from memorylib import RemoteMemoryError, normalize_recall_query
    from memorylib.notebook.playground import PlaygroundCatalog, check_isolation_query

    nb = _notebook("08_query_playground")
    cut = next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and "## Your turn" in c.source
    )
    before = nb.cells[:cut]
    solution = runpy.run_path(str(SOLUTIONS / "08_query_playground.py"))
    accepted = [solution["my_isolation_query"], *solution["ALSO_ACCEPTED"]]
    catalog = PlaygroundCatalog(tmp_path)
    for answer in accepted:  # the solution's claims hold
        assert check_isolation_query(answer, catalog).is_right, answer
    shown = "\n".join(
        c.source + "\n" + output_text(c) for c in _course_cells_before_08_exercise()
    ).casefold()
    for answer in accepted:
        assert answer.casefold() not in shown, f"{answer!r} is on screen before the exercise"

    queries: set[str] = set()
    for cell in before:
        if cell.cell_type == "markdown":  # a query the prose names: query `x`, typing `x`
            queries |= set(re.findall(r"(?:query|typing|types|type)\s+`([^`]+)`", cell.source))
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.keyword) and node.arg == "query":  # query="..."
                values = [node.value]
            elif (  # engine.recall("...", ...)
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "recall"
                and node.args
            ):
                values = [node.args[0]]
            elif isinstance(node, ast.Dict):  # {"query": "..."} and {"course": ["...", ...]}
                values = []
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "query":
                        values.append(value)
                    elif isinstance(value, ast.List):
                        values.extend(value.elts)
            else:
                continue
            queries |= {
                v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
            }
    # the walker sees them: keyword, section 6's timing lists, the prose's, a recall call's
    assert {"recall eval queries rank", "index latency", "记忆 用户", "!!!"} <= queries
    assert "memory agent" in queries and "recall cache" in queries
    for query in sorted(queries):
        try:
            terms = normalize_recall_query(
                query, user_scope="x", limit=5, query_id="q", issued_at="2026-01-01T00:00:00Z"
            ).terms
        except RemoteMemoryError:
            continue  # a rejected query answers nothing
        for candidate in (query, *terms):
            assert not check_isolation_query(candidate, catalog).is_right, (
                f"{candidate!r} (from the query {query!r}) answers the exercise"
            )


def _course_cells_before_08_exercise() -> list:
    """Every cell a student has read before 08's "Your turn": the notebooks before 08 in
    the course order, then 08's cells above the exercise."""
    cells = []
    for notebook in COURSE:
        nb = _notebook(notebook.stem)
        if notebook.stem == "08_query_playground":
            cut = next(
                i
                for i, c in enumerate(nb.cells)
                if c.cell_type == "markdown" and "## Your turn" in c.source
            )
            return cells + nb.cells[:cut]
        cells.extend(nb.cells)
    raise AssertionError("08_query_playground is not in COURSE")


def test_08_refuses_the_words_of_every_record_it_prints(tmp_path: Path) -> None:
    """Notebook 08's exercise refuses a word of a record the course shows before it
    (``printed_records``): 08's own hits and ``SHOWN_BEFORE``. Every course record whose id
    is named, or whose summary, content or (long) title is on screen, in a notebook before
    08 or in 08 above "Your turn", must be one of them, so a new cell that shows another
    record fails here until the checker knows it."""
    from memorylib.datasets import COURSE_USERS
    from memorylib.notebook.playground import SHOWN_BEFORE, PlaygroundCatalog, printed_records

    cells = _course_cells_before_08_exercise()
    fold = lambda text: re.sub(r"\s+", " ", text)  # noqa: E731 (textwrap breaks lines)
    shown = fold("\n".join(c.source + "\n" + output_text(c) for c in cells))
    catalog = PlaygroundCatalog(tmp_path)
    known = {record.memory_id for record in printed_records(catalog)}
    records = [r for user in COURSE_USERS for r in catalog.records("course", user)]
    named = set(re.findall(r"\b(?:mei|omar|sam|wen)-(?:conv|prof|retr)-\d+", shown))
    on_screen = {
        r.memory_id
        for r in records
        if fold(r.summary) in shown
        or fold(r.content)[:80] in shown
        or (len(r.source.title) > 15 and r.source.title in shown)
    }
    assert {"mei-conv-041", "mei-conv-053", "mei-retr-01"} <= named  # 06b and 07b's story
    assert len(on_screen) >= 30, on_screen  # the search sees the printed records
    assert named | on_screen <= known, (
        f"shown but not refused: {sorted((named | on_screen) - known)}"
    )
    ids = {r.memory_id for r in records}
    listed = [memory_id for shown_ids in SHOWN_BEFORE.values() for memory_id in shown_ids]
    assert set(listed) <= ids and len(listed) == len(set(listed))  # real ids, each once
