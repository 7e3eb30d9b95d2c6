"""The reference, shown after an attempt: the real source of a stage, closed by default.

``reference_source("normalize")`` holds the ``inspect.getsource`` of the library's stage
functions (and the helpers they call, in file order). As a cell's value it renders as an
HTML ``<details>`` element, closed, so nothing of it is on screen until the student opens
it; its plain-text form only names what it holds (a front end without HTML shows no
answer either). The source is read from the installed package at call time, so it is
always the code that runs.
"""

from __future__ import annotations

import html
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from memorylib import candidates, query, ranking, render, scoring

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
    "render": (render, ("escape_xml", "_element", "_score_attributes", "render_recall_context")),
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

    @property
    def title(self) -> str:
        main = ", ".join(_MAIN[self.stage])
        helpers = len(self.functions) - len(_MAIN[self.stage])
        extra = f", with {helpers} helper{'s' if helpers > 1 else ''}" if helpers else ""
        return f"See the reference: {main} in {self.module}{extra}"

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
    source = "\n\n".join(inspect.getsource(getattr(module, name)).rstrip() for name in names)
    return ReferenceSource(
        stage=stage,
        module=module.__name__.replace(".", "/") + ".py",
        functions=names,
        source=source,
    )
