"""Your pipeline in the playground: the stage functions you wrote, beside the library's.

``use_pipeline(app, pipeline)`` registers a ``buildit.Pipeline`` (from notebook 06's
capstone: ``Pipeline.from_notebooks(".")``) with a running ``PlaygroundApp``. A panel
under the app's outputs then shows, after every refresh, your pipeline's hits beside the
library's for the same query, dataset, user, limit and as_of, and names the first stage
where the two differ. Both pipelines read every record on every query (the taught path):
the panel compares automatically on stores of up to ``AUTO_RECORDS`` records (the
chapter's and the course corpus) and, on larger ones (the generated 10,000 records, a
second or two), when you press "compare now". A checkbox turns the panel off.

* ``yours_view(state, catalog, pipeline)`` is the model: pure, testable without widgets;
* ``yours_html(view)`` renders it (everything from a query or a record is escaped);
* ``YoursPanel`` is the widget, wired to the app through ``app.after_refresh``.

Your scorer implements the chapter's formula, so BOTH columns use the chapter's policy
(weights 0.85 / 0.15, a 30-day window) whatever the app's sliders say; the panel says so
when they say something else.
"""

from __future__ import annotations

import html
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memorylib.errors import RemoteMemoryError
from memorylib.interface import user_scope_for
from memorylib.notebook.buildit import Comparison, Pipeline
from memorylib.notebook.playground.catalog import PlaygroundCatalog
from memorylib.notebook.playground.model import PlaygroundState
from memorylib.records import (
    DEFAULT_LEXICAL_WEIGHT,
    DEFAULT_RECENCY_WEIGHT,
    DEFAULT_RECENCY_WINDOW_DAYS,
    StoredMemory,
)

if TYPE_CHECKING:
    from memorylib.notebook.playground.app import PlaygroundApp

__all__ = ["AUTO_RECORDS", "YoursPanel", "YoursView", "use_pipeline", "yours_html", "yours_view"]

AUTO_RECORDS = 2_000  # larger stores are compared on request only


@dataclass(frozen=True)
class YoursView:
    """Your run and the library's for one playground state (``error``: query rejected)."""

    state: PlaygroundState
    yours: tuple[str, ...]  # the contract names of the functions that are yours
    comparison: Comparison | None
    error: str | None = None
    note: str | None = None  # the sliders' policy is not the chapter's

    @property
    def difference(self) -> tuple[str, str] | None:
        return None if self.comparison is None else self.comparison.difference


_RECORDS: weakref.WeakKeyDictionary[
    PlaygroundCatalog, dict[tuple[str, str], tuple[StoredMemory, ...]]
] = weakref.WeakKeyDictionary()


def _records(catalog: PlaygroundCatalog, dataset: str, user: str) -> tuple[StoredMemory, ...]:
    # the catalog's stores are read-only: read each once per catalog
    read = _RECORDS.setdefault(catalog, {})
    if (dataset, user) not in read:
        read[dataset, user] = tuple(catalog.store(dataset, user).read_all())
    return read[dataset, user]


def _policy_note(state: PlaygroundState) -> str | None:
    chapter = (DEFAULT_LEXICAL_WEIGHT, DEFAULT_RECENCY_WEIGHT, DEFAULT_RECENCY_WINDOW_DAYS)
    sliders = (state.lexical_weight, state.recency_weight, state.recency_window_days)
    scorer = getattr(state, "scorer", "coverage")  # a scorer selector, if the app has one
    if sliders == chapter and scorer == "coverage":
        return None
    return (
        "both columns use the chapter's scorer (0.85 / 0.15, 30 days), as your "
        "score_recall_candidate does; the playground above uses the sliders' policy"
    )


def yours_view(state: PlaygroundState, catalog: PlaygroundCatalog, pipeline: Pipeline) -> YoursView:
    """Run ``pipeline`` and the library's pipeline on ``state``'s query and records."""
    try:
        comparison = pipeline.compare(
            state.query,
            _records(catalog, state.dataset, state.user),
            user_scope=user_scope_for(state.user),
            as_of=state.as_of,
            limit=state.limit,
            query_id=state.query_id,
        )
    except RemoteMemoryError as exc:
        return YoursView(state, pipeline.yours, None, f"{type(exc).__name__}: {exc}")
    return YoursView(state, pipeline.yours, comparison, note=_policy_note(state))


def _hit_cell(hit: Any) -> str:
    if hit is None:
        return "<td></td>"
    return (
        f'<td class="memory-id">{html.escape(hit.memory_id)}</td>'
        f'<td class="total">{hit.score_breakdown.total:.6f}</td>'
    )


def yours_html(view: YoursView) -> str:
    """The panel: whose functions run, both hit lists side by side, the first difference."""
    whose = ", ".join(view.yours) if view.yours else "none yet (every stage is the library's)"
    parts = [
        '<div class="playground-yours-view" '
        f'data-query="{html.escape(view.state.query)}" data-limit="{view.state.limit}" '
        f'data-same="{"yes" if view.comparison is not None and view.difference is None else "no"}"'
        ' style="font-size:12px;line-height:1.35">',
        f"<b>your pipeline</b> · your functions: {html.escape(whose)}",
    ]
    if view.error is not None:
        parts.append(
            f'<div style="color:#a61b1b">Query rejected — {html.escape(view.error)}</div></div>'
        )
        return "".join(parts)
    assert view.comparison is not None
    if view.note:
        parts.append(f'<div style="color:#8a6d00">{html.escape(view.note)}</div>')
    reference, yours = view.comparison.reference, view.comparison.yours
    ours = reference.result.hits if reference.result else ()
    theirs = yours.result.hits if yours.result else ()
    rows = []
    for position in range(max(len(ours), len(theirs))):
        a = ours[position] if position < len(ours) else None
        b = theirs[position] if position < len(theirs) else None
        same = a is not None and b is not None and a == b
        rows.append(
            f'<tr class="{"same" if same else "differs"}"><td>{position + 1}</td>'
            f"{_hit_cell(a) if a else '<td></td><td></td>'}"
            f"{_hit_cell(b) if b else '<td></td><td></td>'}"
            f"<td>{'=' if same else '≠'}</td></tr>"
        )
    parts.append(
        '<table class="playground-yours-hits" style="border-collapse:collapse">'
        "<thead><tr><th>rank</th><th>library</th><th>total</th><th>yours</th><th>total</th>"
        f"<th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    difference = view.difference
    if difference is None:
        parts.append(
            '<div class="playground-yours-verdict" style="color:#1b7a3a">the same at '
            "every stage: normalize, candidate, score, stable rank, render</div>"
        )
    else:
        parts.append(
            '<div class="playground-yours-verdict" style="color:#a61b1b">first difference at '
            f"stage <b>{html.escape(difference[0])}</b>: {html.escape(difference[1])}</div>"
        )
    parts.append("</div>")
    return "".join(parts)


class YoursPanel:
    """A checkbox, a button and an HTML box under a ``PlaygroundApp``, refreshed with it."""

    def __init__(self, app: PlaygroundApp, pipeline: Pipeline) -> None:
        import ipywidgets as w

        self.app = app
        self.pipeline = pipeline
        self.view: YoursView | None = None
        self.toggle = w.Checkbox(value=True, description="compare with your pipeline", indent=False)
        self.button = w.Button(description="compare now")
        self.output = w.HTML()
        self.toggle.add_class("playground-yours-toggle")
        self.button.add_class("playground-yours-now")
        self.output.add_class("playground-yours")
        self.widget = w.VBox([w.HBox([self.toggle, self.button]), self.output])
        self.toggle.observe(lambda change: self.refresh(app), names="value")
        self.button.on_click(lambda button: self.refresh(app, force=True))

    def refresh(self, app: PlaygroundApp, *, force: bool = False) -> None:
        if not self.toggle.value:
            self.view, self.output.value = None, ""
            return
        state = app.state
        size = len(_records(app.catalog, state.dataset, state.user))
        if size > AUTO_RECORDS and not force:
            self.view = None
            self.output.value = (
                '<div class="playground-yours-paused" style="font-size:12px;color:#8a6d00">'
                f"your pipeline reads all {size:,} records on every query: press "
                "<i>compare now</i> to compare it with the library's for this state</div>"
            )
            return
        try:
            self.view = yours_view(state, app.catalog, self.pipeline)
            self.output.value = yours_html(self.view)
        except Exception as exc:  # a bug must not break the playground above it
            self.view = None
            self.output.value = (
                f'<div class="playground-error">Internal error in the comparison — '
                f"{type(exc).__name__}: {html.escape(str(exc))}</div>"
            )


_PANELS: weakref.WeakKeyDictionary[Any, YoursPanel] = weakref.WeakKeyDictionary()


def use_pipeline(app: PlaygroundApp, pipeline: Pipeline) -> YoursPanel:
    """Show ``pipeline`` beside the library's under ``app`` (a second call replaces it)."""
    previous = _PANELS.pop(app, None)
    if previous is not None:
        app.after_refresh.remove(previous.refresh)
        app.widget.children = tuple(c for c in app.widget.children if c is not previous.widget)
    panel = YoursPanel(app, pipeline)
    _PANELS[app] = panel
    app.after_refresh.append(panel.refresh)
    app.widget.children = (*app.widget.children, panel.widget)
    panel.refresh(app)
    return panel
