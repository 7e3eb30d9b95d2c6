"""The reference, shown after an attempt: the real source of a stage, closed by default.

``reference_source("normalize")`` holds the ``inspect.getsource`` of the library's stage
functions (and the helpers they call, in file order), after what they read from elsewhere
(a helper of another module, a module-level constant), each block under a comment naming
its file, so no name of memorylib the code calls is left unseen (the standard library's
names, such as ``unicodedata``, are the module's imports and are not shown). As a cell's
value it renders as an HTML ``<details>`` element, closed, so nothing of it is on screen
until the student opens it; its plain-text form only names what it holds (a front end
without HTML shows no answer either). The source is read from the installed package at
call time, so it is always the code that runs.
"""

from __future__ import annotations

import ast
import html
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from memorylib import candidates, checks, query, ranking, render, scoring, timestamps

__all__ = ["REFERENCE_FUNCTIONS", "ReferenceSource", "reference_source"]

# stage -> (module, the functions that make the stage, in file order). Helpers are named,
# not imported: this only reads their source, and a test checks every name resolves.
REFERENCE_FUNCTIONS: dict[str, tuple[ModuleType, tuple[str, ...]]] = {
    "normalize": (
        query,
        (
            "normalize_text",
            "is_cjk",
            "is_word_char",
            "char_class",
            "term_occurrences",
            "extract_terms",
        ),
    ),
    "candidate": (
        candidates,
        ("record_term_counts", "searchable_terms", "retracted_ids", "build_recall_candidates"),
    ),
    "score": (scoring, ("recency_score", "score_recall_candidate")),
    "stable rank": (ranking, ("rank_key", "hit_from", "stable_rank_recall_candidates")),
    "render": (
        render,
        ("escape_xml", "_element", "_score_attributes", "_match_lines", "render_recall_context"),
    ),
}
# stage -> what its functions read that is not one of them: (module, a function's or a
# module-level constant's name), shown first. Only where a stage reads one. What those
# read in turn is shown only where it is a constant (epoch_micros's _EPOCH): the checks'
# own helpers stay unseen, and score_recall_candidate's reads are stage 3's reference.
REFERENCE_READS: dict[str, tuple[tuple[ModuleType, str], ...]] = {
    "normalize": ((checks, "fold_whitespace"), (query, "CJK_FIRST")),
    "stable rank": (
        (checks, "require"),
        (checks, "require_items"),
        (timestamps, "_EPOCH"),
        (timestamps, "_MICROSECOND"),
        (timestamps, "parse_timestamp"),
        (timestamps, "epoch_micros"),
        (scoring, "DEFAULT_POLICY"),
        (scoring, "bm25_score"),
        (scoring, "query_weights"),
        (scoring, "explained"),
        (scoring, "score_recall_candidate"),
        (ranking, "ScoreFunction"),
    ),
    "render": (
        (checks, "XML_ILLEGAL"),
        (checks, "type_name"),
        (checks, "_a"),
        (checks, "require"),
        (render, "_TEXT_ENTITIES"),
        (render, "_ATTRIBUTE_ENTITIES"),
    ),
}
_MAIN = {
    "normalize": ("normalize_text", "extract_terms"),
    "candidate": ("build_recall_candidates",),
    "score": ("score_recall_candidate",),
    "stable rank": ("stable_rank_recall_candidates",),
    "render": ("render_recall_context",),
}


@dataclass(frozen=True)
class ReferenceSource:
    """The source of one stage's reference functions, rendered closed."""

    stage: str
    module: str  # e.g. "memorylib/query.py": relative, never a machine's path
    functions: tuple[str, ...]
    source: str
    reads: tuple[str, ...] = ()  # what they read from elsewhere, e.g. "fold_whitespace"

    @property
    def title(self) -> str:
        main = ", ".join(_MAIN[self.stage])
        helpers = len(self.functions) - len(_MAIN[self.stage])
        extra = f", with {helpers} helper{'s' if helpers > 1 else ''}" if helpers else ""
        read = f", and what they read: {'; '.join(self.reads)}" if self.reads else ""
        return f"See the reference: {main} in {self.module}{extra}{read}"

    def __str__(self) -> str:
        lines = self.source.count("\n") + 1
        return (
            f"{self.title} ({lines} lines, closed: open it in the notebook after your "
            "attempt, or print its .source)"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text/plain
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return (
            '<details class="memorylib-reference">'
            f"<summary>{html.escape(self.title)} (open it after your attempt)</summary>"
            '<pre style="font-size:12px;line-height:1.35;white-space:pre;overflow-x:auto">'
            f"{html.escape(self.source)}</pre></details>"
        )


def reference_source(stage: str) -> ReferenceSource:
    """The real source of ``stage`` ("normalize", "candidate", "score", "stable rank" or
    "render"), read with ``inspect.getsource``."""
    if stage not in REFERENCE_FUNCTIONS:
        raise ValueError(f"stage must be one of {list(REFERENCE_FUNCTIONS)}, got {stage!r}")
    module, names = REFERENCE_FUNCTIONS[stage]
    functions = "\n\n".join(inspect.getsource(getattr(module, name)).rstrip() for name in names)
    reads = REFERENCE_READS.get(stage, ())
    if not reads:
        source = functions
    else:  # each block under its file's name: the other modules', then this module's
        blocks: dict[str, list[str]] = {}
        for where, name in reads:
            blocks.setdefault(_path(where), []).append(_source_of(where, name))
        blocks.setdefault(_path(module), []).append(functions)
        source = "\n\n\n".join(f"# {path}\n" + "\n\n".join(parts) for path, parts in blocks.items())
    return ReferenceSource(
        stage=stage,
        module=_path(module),
        functions=names,
        source=source,
        reads=_reads_shown(module, reads),
    )


def _path(module: ModuleType) -> str:
    return module.__name__.replace(".", "/") + ".py"


def _assignment(module: ModuleType, name: str) -> tuple[str, ast.Assign]:
    source = inspect.getsource(module)
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and name in _targets(node):
            return source, node
    raise ValueError(f"{module.__name__} assigns no module-level {name!r}")


def _targets(node: ast.Assign) -> list[str]:
    names = []
    for target in node.targets:
        parts = target.elts if isinstance(target, ast.Tuple) else [target]
        names += [part.id for part in parts if isinstance(part, ast.Name)]
    return names


def _source_of(module: ModuleType, name: str) -> str:
    """A function's source, or the whole line(s) assigning a constant with the comment on
    them and the comment lines right above them."""
    if inspect.isfunction(getattr(module, name)):
        return inspect.getsource(getattr(module, name)).rstrip()
    source, node = _assignment(module, name)
    lines = source.splitlines()
    first = node.lineno - 1
    while first > 0 and lines[first - 1].lstrip().startswith("#"):
        first -= 1
    return "\n".join(lines[first : node.end_lineno])


def _reads_shown(module: ModuleType, reads: tuple[tuple[ModuleType, str], ...]) -> tuple[str, ...]:
    """One entry per file: "fold_whitespace from memorylib/checks.py", or, for what the
    stage's own module defines, only the names ("CJK_FIRST, CJK_LAST")."""
    names: dict[ModuleType, list[str]] = {}
    for where, name in reads:
        names.setdefault(where, []).append(_names_of(where, name))
    return tuple(
        ", ".join(shown) + ("" if where is module else f" from {_path(where)}")
        for where, shown in names.items()
    )


def _names_of(module: ModuleType, name: str) -> str:
    """A function's name, or every name a constant's line assigns ("CJK_FIRST, CJK_LAST")."""
    if inspect.isfunction(getattr(module, name)):
        return name
    return ", ".join(_targets(_assignment(module, name)[1]))
