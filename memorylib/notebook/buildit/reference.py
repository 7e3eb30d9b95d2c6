"""The reference shown after an attempt: the real source of a stage, closed."""

from __future__ import annotations

import ast
import html
import inspect
from dataclasses import dataclass
from types import ModuleType

from memorylib import candidates, checks, query, ranking, render, scoring, timestamps
from memorylib.notebook.messages import joined, say

# stage -> (its module, the functions that make it in file order, its MAIN one last; the first
# of normalize's is main too). Named, not imported: a test checks every name resolves.
REFERENCE_FUNCTIONS: dict[str, tuple[ModuleType, str]] = {
    "normalize": (
        query,
        "normalize_text is_cjk is_word_char char_class term_occurrences extract_terms",
    ),
    "candidate": (
        candidates,
        "record_term_counts searchable_terms retracted_ids build_recall_candidates",
    ),
    "score": (scoring, "recency_score score_recall_candidate"),
    "stable rank": (ranking, "rank_key hit_from stable_rank_recall_candidates"),
    "render": (render, "escape_xml _element _score_attributes _match_lines render_recall_context"),
}
# stage -> what its functions read that is not one of them (a function, or a module-level
# constant), shown first; what those read in turn only where it is a constant.
REFERENCE_READS: dict[str, tuple[tuple[ModuleType, str], ...]] = {
    "normalize": ((checks, "fold_whitespace"), (query, "CJK_FIRST")),
    "stable rank": (
        (checks, "require require_items"),
        (timestamps, "_EPOCH _MICROSECOND parse_timestamp epoch_micros"),
        (scoring, "DEFAULT_POLICY bm25_score query_weights explained score_recall_candidate"),
        (ranking, "ScoreFunction"),
    ),
    "render": (
        (checks, "XML_ILLEGAL type_name _a require"),
        (render, "_TEXT_ENTITIES _ATTRIBUTE_ENTITIES"),
    ),
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
        first = self.functions[:1] if self.stage == "normalize" else ()  # normalize_text
        main = (*first, self.functions[-1])
        count = len(self.functions) - len(main)
        helpers = say("reference.helpers", count=count) if count > 1 else say("reference.helper")
        reads = say("reference.reads", reads=joined(self.reads)) if self.reads else ""
        where = dict(main=", ".join(main), module=self.module)
        return say("reference.title", **where, helpers=helpers if count else "", reads=reads)

    def __repr__(self) -> str:  # print's and IPython's text/plain
        return say("reference.closed", title=self.title, lines=self.source.count("\n") + 1)

    def _repr_html_(self) -> str:
        summary = say("reference.summary", title=self.title)
        return (
            '<details class="memorylib-reference">'
            f"<summary>{html.escape(summary)}</summary>"
            '<pre style="font-size:12px;line-height:1.35;white-space:pre;overflow-x:auto">'
            f"{html.escape(self.source)}</pre></details>"
        )


def _path(module: ModuleType) -> str:
    return module.__name__.replace(".", "/") + ".py"


def _piece(module: ModuleType, name: str) -> tuple[str, str]:
    """(names, source) of a function, or of a constant's assignment with the comments above it."""
    if inspect.isfunction(getattr(module, name)):
        return name, inspect.getsource(getattr(module, name)).rstrip()
    source = inspect.getsource(module)
    lines = source.splitlines()
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign):
            continue
        parts = [p for t in node.targets for p in (t.elts if isinstance(t, ast.Tuple) else [t])]
        names = [part.id for part in parts if isinstance(part, ast.Name)]
        if name in names:
            first = node.lineno - 1
            while first > 0 and lines[first - 1].lstrip().startswith("#"):
                first -= 1
            return ", ".join(names), "\n".join(lines[first : node.end_lineno])
    raise ValueError(f"{module.__name__} assigns no module-level {name!r}")


def reference_source(stage: str) -> ReferenceSource:
    """The real source of ``stage``, read from the installed package at call time."""
    if stage not in REFERENCE_FUNCTIONS:
        raise ValueError(say("reference.stage", stages=list(REFERENCE_FUNCTIONS), stage=stage))
    module, listed = REFERENCE_FUNCTIONS[stage]
    names = tuple(listed.split())
    functions = "\n\n".join(inspect.getsource(getattr(module, name)).rstrip() for name in names)
    blocks: dict[ModuleType, list[tuple[str, str]]] = {}
    for where, read in REFERENCE_READS.get(stage, ()):
        blocks.setdefault(where, []).extend(_piece(where, name) for name in read.split())
    names_read = {where: ", ".join(n for n, _ in pieces) for where, pieces in blocks.items()}
    reads = tuple(
        n if w is module else say("reference.from", names=n, path=_path(w))
        for w, n in names_read.items()
    )
    blocks.setdefault(module, []).append(("", functions))
    source = "\n\n\n".join(
        f"# {_path(where)}\n" + "\n\n".join(s for _, s in pieces)
        for where, pieces in blocks.items()
    )
    return ReferenceSource(
        stage, _path(module), names, source if stage in REFERENCE_READS else functions, reads
    )
