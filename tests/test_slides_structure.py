"""Slide metadata of the course notebooks (scripts/slide_metadata.py) and the offline export.

Every course notebook has slide metadata and keeps the rules of
scripts/slide_metadata.py (first cell a slide, plumbing skipped, no slide over the line
budget, a live widget on a slide of its own). The exporter's output must not load anything
remote. The browser checks (real heights in RISE, the deck opened with the network off)
are in tests/test_slides_browser.py.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str):
    """A module from scripts/ (author tools, not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


slides = load_script("slide_metadata")
PATHS = slides.notebook_paths()
ZH_PATHS = sorted((slides.NOTEBOOKS / "zh").glob("[0-9][0-9]*_*.ipynb"))  # same slide specs
BOTH = PATHS + ZH_PATHS
BOTH_IDS = [p.relative_to(slides.NOTEBOOKS).with_suffix("").as_posix() for p in BOTH]
PLAYGROUND = "08_query_playground"  # its widget is driven on its slide (test_slides_browser)


@pytest.mark.parametrize("path", BOTH, ids=BOTH_IDS)
def test_slide_metadata_keeps_the_rules(path: Path) -> None:
    nb = slides.read(path)
    assert slides.has_slide_metadata(nb), f"{path.name} has no slide metadata"
    problems = slides.check(nb)
    assert not problems, "\n".join(problems)


VISIBLE_WORDS_MAX = 80  # what a markdown cell shows on a slide, headings and nav aside
WORDS = re.compile(r"[^\W\u3400-\u9fff]+")  # a run of letters or digits, CJK apart
CJK = re.compile(r"[\u3400-\u9fff]")


def slide_words(text: str) -> int:
    """Latin words, plus one word per two Chinese characters (a Chinese word is about two)."""
    return len(WORDS.findall(text)) + (len(CJK.findall(text)) + 1) // 2


def aside_problems(source: str) -> list[str]:
    """How a cell's speaker notes are malformed: every ``<aside class="notes">`` is closed,
    not nested, and has a blank line inside each end (else markdown inside it is not
    rendered in JupyterLab)."""
    problems, depth = [], 0
    for match in re.finditer(r'<aside class="notes">|</aside>', source):
        opening = match.group() != "</aside>"
        depth += 1 if opening else -1
        if depth not in (0, 1):
            problems.append(f"{'nested' if opening else 'unopened'} aside at {match.start()}")
        # (inside a list item the tags are indented: the blank line may hold spaces)
        after = source[match.end() :].lstrip(" ")[:2] if opening else ""
        before = "" if opening else source[: match.start()].rstrip(" ")
        if (opening and after != "\n\n") or (not opening and not before.endswith("\n\n")):
            problems.append(f"no blank line inside {match.group()} at {match.start()}")
    if depth:
        problems.append("an aside is not closed")
    return problems


@pytest.mark.parametrize("path", BOTH, ids=BOTH_IDS)
def test_reading_prose_is_in_speaker_notes(path: Path) -> None:
    """A slide shows a heading and a short lead; the prose a student reads is in notes."""
    problems = []
    for cell in slides.read(path).cells:
        if cell.cell_type != "markdown":
            continue
        problems += [f"{cell.id}: {p}" for p in aside_problems(cell.source)]
        shown = [
            line
            for line in slides.on_slide(cell.source).splitlines()
            if not line.lstrip().startswith(("#", "←"))
        ]
        words = slide_words(" ".join(shown))
        if words > VISIBLE_WORDS_MAX:
            problems.append(f"{cell.id}: {words} words on the slide > {VISIBLE_WORDS_MAX}")
    assert not problems, "\n".join(problems)


def test_speaker_notes_are_off_the_slide_and_well_formed() -> None:
    cell = '## Title\n\nLead.\n\n<aside class="notes">\n\nThe `rest`.\n\n</aside>'
    assert slides.on_slide(cell).split() == ["##", "Title", "Lead."]
    assert slides.markdown_lines(cell) == slides.markdown_lines("## Title\n\nLead.\n\n")
    assert aside_problems(cell) == []
    assert aside_problems('<aside class="notes">\nx\n\n</aside>') == [
        'no blank line inside <aside class="notes"> at 0'
    ]
    assert aside_problems('<aside class="notes">\n\nx') == ["an aside is not closed"]
    assert "nested" in aside_problems('<aside class="notes">\n\n<aside class="notes">\n\n')[0]


# --- the tooling itself, on small notebooks ---------------------------------------------


def notebook(*cells):
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    return nb


def typed(cell, slide_type: str):
    cell.metadata["slideshow"] = {"slide_type": slide_type}
    return cell


def test_plumbing_is_imports_or_the_set_up_cell() -> None:
    assert slides.is_plumbing(new_code_cell("import pandas\nfrom x import y"))
    set_up = "import x\nfrom m import common\ncommon.setup_notebook()\nc = 1"
    assert slides.is_plumbing(new_code_cell(set_up))
    assert slides.is_plumbing(new_code_cell("%matplotlib inline\nimport matplotlib"))
    assert not slides.is_plumbing(new_code_cell("common.setup_notebook()"))  # no imports
    assert not slides.is_plumbing(new_code_cell("import x\nprint(x.frame())"))
    assert not slides.is_plumbing(new_markdown_cell("import x"))
    assert not slides.is_plumbing(new_code_cell("def broken(:"))


def test_slides_follow_reveal_nesting() -> None:
    nb = notebook(
        typed(new_markdown_cell("# Title"), "slide"),
        typed(new_code_cell("import x"), "skip"),
        typed(new_markdown_cell("## A"), "slide"),
        typed(new_code_cell("a"), "-"),
        typed(new_markdown_cell("more"), "subslide"),
        typed(new_markdown_cell("then"), "fragment"),
        typed(new_markdown_cell("say this"), "notes"),
        typed(new_markdown_cell("## B"), "slide"),
    )
    found = slides.slides(nb)
    assert [s.label for s in found] == ["0.0", "1.0", "1.1", "2.0"]
    assert [s.cells for s in found] == [[0], [2, 3], [4, 5], [7]]
    assert slides.shape(found) == [1, 2, 1]
    assert found[2].fragments == 1
    assert slides.check(nb) == []


def test_check_reports_each_rule() -> None:
    widget = new_code_cell(
        "app.widget",
        outputs=[
            new_output(
                "execute_result",
                data={slides.WIDGET_MIME: {"model_id": "x"}, "text/plain": "VBox()"},
                execution_count=1,
            )
        ],
    )
    long_text = "\n\n".join(f"paragraph {i}" for i in range(40))
    nb = notebook(
        typed(new_markdown_cell("intro"), "-"),
        typed(new_code_cell("import pandas"), "-"),
        typed(new_markdown_cell(long_text), "slide"),
        typed(widget, "-"),
        typed(new_markdown_cell("x"), "sideways"),
    )
    problems = "\n".join(slides.check(nb))
    assert "cell 0: the first cell must be a 'slide'" in problems
    assert "cell 1: plumbing" in problems
    assert "cell 3: a live widget must start its own slide" in problems
    assert "unknown slide_type 'sideways'" in problems
    assert "lines > 32" in problems


def test_no_metadata_means_no_check_and_a_provisional_structure() -> None:
    nb = notebook(
        new_markdown_cell("# Title\n\ntext"),
        new_code_cell("import x\ncommon.setup_notebook()"),
        new_markdown_cell("prose first\n\n## 1. Section"),
        new_code_cell("x"),
        new_code_cell("\n".join(f"line_{i} = {i}" for i in range(40))),
    )
    assert slides.check(nb) == []
    assert slides.provisional_types(nb) == ["slide", "skip", "slide", "-", "subslide"]


def test_markdown_estimate_reflows_paragraphs() -> None:
    hard_wrapped = "\n".join(["word " * 19] * 4)  # one paragraph, 4 source lines of ~95 chars
    assert slides.markdown_lines(hard_wrapped) == 3  # 380 chars at 150 a line
    assert slides.markdown_lines("- a\n- b\n- c") == 3
    assert slides.markdown_lines("## Heading") == slides.HEADING_LINES[2]


# --- the offline export ------------------------------------------------------------------


def test_export_is_self_contained(tmp_path: Path) -> None:
    export = load_script("export_slides")
    written = export.export(PATHS, tmp_path)  # what `make slides` does: every notebook
    assert [deck.stem for deck, _ in written] == [p.stem for p in PATHS]
    for (deck, page), source in zip(written, PATHS, strict=True):
        for path in (deck, page):
            text = path.read_text(encoding="utf-8")
            assert export.remote_loads(text) == [], path
            assert "cdnjs" not in text and "unpkg" not in text, path
        text = deck.read_text(encoding="utf-8")
        assert "data:text/javascript;base64," in text
        # the deck's slides are those of the export's in-memory deck copy
        deck_copy = export.prepared(
            nbformat.read(source, as_version=4), link_suffix=".html", slides=True
        )
        shape = slides.slides(deck_copy)
        assert text.count("<section") == len(slides.shape(shape)) + len(shape), deck.name
    deck = tmp_path / "slides" / f"{PLAYGROUND}.html"
    text = deck.read_text(encoding="utf-8")
    assert "memorylib-widget-fallback" in text and "VBox(" not in text
    assert 'href="09_live_agent.html"' in text  # links point at the sibling export
    playground = nbformat.read(slides.NOTEBOOKS / f"{PLAYGROUND}.ipynb", as_version=4)
    expected = slides.slides(export.prepared(playground, link_suffix=".html", slides=True))
    # nbconvert nests every slide: one outer <section> per horizontal slide, one per leaf
    assert text.count("<section") == len(slides.shape(expected)) + len(expected)
    assert (tmp_path / "index.html").is_file()


def test_remote_loads_are_found() -> None:
    export = load_script("export_slides")
    assert export.remote_loads('<script src="https://cdn.example/x.js"></script>')
    assert export.remote_loads('<link rel="stylesheet" href="//cdn.example/x.css">')
    assert export.remote_loads("@import url(https://fonts.example/css);")
    assert export.remote_loads('<style>a{background:url("http://x/y.png")}</style>')
    assert export.remote_loads('import("https://cdn.example/mermaid.mjs")')
    assert not export.remote_loads('<a href="https://voila.readthedocs.io">docs</a>')
    assert not export.remote_loads('<img src="data:image/png;base64,AAAA">')


SPECS = sorted(slides.SPECS.glob("*.json"))


@pytest.mark.parametrize("spec_file", SPECS, ids=[p.stem for p in SPECS])
def test_each_spec_matches_its_notebook(spec_file: Path) -> None:
    """The committed slide types are the spec's: applying it would change nothing."""
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    assert spec["notebook"] == spec_file.stem
    nb = slides.read(slides.NOTEBOOKS / f"{spec_file.stem}.ipynb")
    planned = slides.planned_types(nb, spec)
    current = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in nb.cells]
    differ = [
        (c.id, now, want)
        for c, now, want in zip(nb.cells, current, planned, strict=True)
        if now != want
    ]
    assert not differ, (
        f"cells whose slide type is not the spec's (new cells need a choice: "
        f"scripts/slide_metadata.py {spec_file.stem[:2]} --apply, or --save-spec): {differ}"
    )


def test_apply_spec_never_overwrites_silently(tmp_path: Path) -> None:
    nb = notebook(typed(new_markdown_cell("# title"), "slide"), new_markdown_cell("text"))
    nb.cells[0].id, nb.cells[1].id = "title", "text"
    path = tmp_path / "99_x.ipynb"
    nbformat.write(nb, path)
    before = path.read_text()
    # a cell without a type gets the spec's; a cell with another type is a conflict
    with pytest.raises(slides.SpecError, match=r"cell 0 \(title\): 'slide' -> 'skip'"):
        slides.apply_spec(path, {"slide_types": {"title": "skip", "text": "fragment"}})
    assert path.read_text() == before, "a refused spec must not write anything"
    with pytest.raises(slides.SpecError, match="does not have"):
        slides.apply_spec(path, {"slide_types": {"gone": "slide"}})
    with pytest.raises(slides.SpecError, match="unknown slide types"):
        slides.apply_spec(path, {"slide_types": {"text": "sideways"}})
    changes = slides.apply_spec(path, {"slide_types": {"title": "slide", "text": "fragment"}})
    assert changes == ["cell 1 (text): none -> fragment"]
    assert [slides.slide_type(c) for c in slides.read(path).cells] == ["slide", "fragment"]
    forced = slides.apply_spec(path, {"slide_types": {"title": "slide"}}, force=True)
    assert forced == ["cell 1 (text): fragment -> -"]


def test_tall_single_cell_is_a_note_not_a_broken_rule() -> None:
    tall = "\n".join(f"line {i}" for i in range(60))
    nb = notebook(typed(new_markdown_cell("# t"), "slide"), typed(new_code_cell(tall), "subslide"))
    assert slides.check(nb) == []
    assert slides.tall_single_cells(nb) == ["slide 0.1 is one cell (cell 1) of about 61 lines"]


def test_a_chinese_slide_counts_two_characters_as_a_word() -> None:
    assert slide_words("分层记忆 recall of 3 records") == 2 + 4
    assert slide_words("召回") == 1 and slide_words("召回结") == 2 and slide_words("") == 0
