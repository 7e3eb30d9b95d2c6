"""Views for notebook 03 (candidate): which stored records share a term with the query.

Stage 2 reads the store's records and keeps the CONVERSATION records that share at
least one query term, with no score and no rank. Its two counts explain an empty
result: ``searched_records`` (conversation records examined) and
``candidate_records`` (those that matched). Every function here calls the library's
own stage functions, so a number in the notebook is the number the pipeline uses.
``candidate_widget`` only wires a text box to ``candidate_view``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from memorylib import (
    MemoryKind,
    RecallEngine,
    RecallQuery,
    RemoteMemoryError,
    RemoteMemoryStore,
    StoredMemory,
    build_recall_candidates,
    normalize_recall_query,
)
from memorylib.candidates import CandidateSet
from memorylib.notebook.common import with_chart_fonts
from memorylib.notebook.exercises import CheckResult, check_value, right, wrong
from memorylib.query import CJK_FIRST, CJK_LAST

__all__ = [
    "COMMON_WORDS",
    "EXERCISE_NOISY_TEXT",
    "EXERCISE_TARGET",
    "candidate_counts",
    "candidate_frame",
    "candidate_view",
    "candidate_widget",
    "check_cache_query",
    "check_quiet_query",
    "counts_frame",
    "diagnose",
    "match_heatmap",
    "match_matrix",
    "matched_count_frame",
    "strategy_frame",
    "style_match_matrix",
    "term_candidate_chart",
    "term_candidate_frame",
]

VIEW_QUERY_ID = "q-03-view"

# The exercise: a question full of filler words, and the record it is really after.
EXERCISE_NOISY_TEXT = "what is the status of the recall index"
EXERCISE_TARGET = "mei-conv-056"
EXERCISE_MAX_CANDIDATES = 5

# The optional stretch: the same task for the result-cache record, whose summary is Chinese.
STRETCH_TARGET = "mei-conv-035"
STRETCH_MAX_CANDIDATES = 2

# Only for colouring charts: the pipeline itself never drops a word (the contract
# makes every term count), so this list changes no result.
_COMMON = """a an and are as at be by did do does for from how i in is it of on or our that
the this to was we were what when where which who why with you"""
COMMON_WORDS = frozenset(_COMMON.split())

GREEN = "#1b9e77"
GREY = "#a6a6a6"
ORANGE = "#d95f02"


def _query(text: object, user_scope: str, as_of: str, query_id: str = VIEW_QUERY_ID) -> RecallQuery:
    return normalize_recall_query(text, user_scope=user_scope, query_id=query_id, issued_at=as_of)


def candidate_counts(query: RecallQuery, records: Sequence[StoredMemory]) -> dict[str, Any]:
    """The counts that explain a candidate set, plus a one-line diagnosis.

    Keys: records (all lines), profiles, conversations, retracted (conversations hidden
    by a retraction), searched, candidates, diagnosis.
    """
    found = build_recall_candidates(query, records)
    counts: dict[str, Any] = {
        "records": len(records),
        "profiles": sum(r.kind is MemoryKind.PROFILE for r in records),
        "conversations": sum(r.kind is MemoryKind.CONVERSATION for r in records),
        "retracted": found.retracted_records,
        "searched": found.searched_records,
        "candidates": found.candidate_records,
    }
    counts["diagnosis"] = diagnose(counts)
    return counts


def diagnose(counts: dict[str, Any]) -> str:
    """Read the counts: empty store, nothing searchable, no overlap, or k of n matched."""
    if counts["records"] == 0:
        return "empty store: there is nothing to search"
    if counts["searched"] == 0:
        return "nothing searchable: no live conversation records (profiles are never searched)"
    if counts["candidates"] == 0:
        return f"no overlap: {counts['searched']} records searched, none shares a query term"
    return f"{counts['candidates']} of {counts['searched']} searched records share a query term"


def counts_frame(
    cases: Sequence[tuple[str, str, Sequence[StoredMemory], str]], *, as_of: str
) -> pd.DataFrame:
    """One row per (label, query text, records, user_scope): the counts and the diagnosis."""
    rows = []
    for label, text, records, user_scope in cases:
        counts = candidate_counts(_query(text, user_scope, as_of), records)
        rows.append({"case": label, "query": text, **counts})
    return pd.DataFrame(rows)


def candidate_frame(query: RecallQuery, records: Sequence[StoredMemory]) -> pd.DataFrame:
    """One row per candidate, in the order the records came (stage 2 does not sort).

    Columns: memory_id, captured_at, matched_terms, matched (count), of (query terms),
    summary. No score and no rank: those belong to later stages.
    """
    found = build_recall_candidates(query, records)
    rows = [
        {
            "memory_id": c.record.memory_id,
            "captured_at": c.record.source.captured_at,
            "matched_terms": " | ".join(c.matched_terms),
            "matched": len(c.matched_terms),
            "of": len(query.terms),
            "summary": c.record.summary,
        }
        for c in found.candidates
    ]
    columns = ["memory_id", "captured_at", "matched_terms", "matched", "of", "summary"]
    return pd.DataFrame(rows, columns=columns)


def _term_order(query: RecallQuery, found: CandidateSet) -> list[str]:
    """Query terms, most candidates first (ties in the query's sorted order)."""
    hits = {t: sum(t in c.matched_terms for c in found.candidates) for t in query.terms}
    return sorted(query.terms, key=lambda t: (-hits[t], query.terms.index(t)))


def match_matrix(query: RecallQuery, records: Sequence[StoredMemory]) -> pd.DataFrame:
    """Boolean frame: one row per candidate (index memory_id), one column per query term.

    Columns run from the term with the most candidates to the fewest; rows from the
    candidate with the most matched terms to the fewest, then by memory_id.
    """
    found = build_recall_candidates(query, records)
    columns = _term_order(query, found)
    ordered = sorted(found.candidates, key=lambda c: (-len(c.matched_terms), c.record.memory_id))
    data = [[t in c.matched_terms for t in columns] for c in ordered]
    frame = pd.DataFrame(data, columns=columns, index=[c.record.memory_id for c in ordered])
    frame.index.name = "memory_id"
    return frame.astype(bool)


def style_match_matrix(matrix: pd.DataFrame, uuid: str) -> Any:
    """A Styler of ``match_matrix``: ✓ on green where a record holds the term (fixed uuid)."""
    return (
        matrix.style.set_uuid(uuid)
        .format(lambda v: "✓" if v else "")
        .map(lambda v: f"background-color: {GREEN}; color: white" if v else "")
        .set_properties(**{"text-align": "center", "min-width": "3em"})
    )


def term_candidate_frame(query: RecallQuery, records: Sequence[StoredMemory]) -> pd.DataFrame:
    """Per query term: how many searched records contain it, and whether it is a common word.

    A record containing several terms counts once per term, so the column can add up
    to more than ``candidate_records``.
    """
    found = build_recall_candidates(query, records)
    rows = [
        {
            "term": term,
            "candidates": sum(term in c.matched_terms for c in found.candidates),
            "searched": found.searched_records,
            "common_word": term in COMMON_WORDS,
        }
        for term in _term_order(query, found)
    ]
    return pd.DataFrame(rows, columns=["term", "candidates", "searched", "common_word"])


def matched_count_frame(query: RecallQuery, records: Sequence[StoredMemory]) -> pd.DataFrame:
    """How many candidates matched 1, 2, ... of the query's terms."""
    found = build_recall_candidates(query, records)
    levels = range(1, len(query.terms) + 1)
    counts = [sum(len(c.matched_terms) == k for c in found.candidates) for k in levels]
    return pd.DataFrame({"matched_terms": list(levels), "candidates": counts})


def _has_cjk(text: str) -> bool:
    return any(CJK_FIRST <= ch <= CJK_LAST for ch in text)


def _cjk_font_in_use() -> bool:
    """True when a CJK font is both configured in ``font.family`` and installed."""
    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    return any(
        "CJK" in family and family in installed for family in matplotlib.rcParams["font.family"]
    )


def _axis_labels(terms: Sequence[str]) -> list[str]:
    """Terms as chart labels; Chinese terms become ``zh-1``... unless a CJK font is in use."""
    if _cjk_font_in_use():
        return list(terms)
    labels, n = [], 0
    for term in terms:
        if _has_cjk(term):
            n += 1
            labels.append(f"zh-{n}")
        else:
            labels.append(term)
    return labels


@with_chart_fonts
def term_candidate_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Horizontal bars: candidates each query term brings in; common words in grey."""
    fig, ax = plt.subplots(figsize=(7.0, 0.45 * len(frame) + 1.3))
    colours = [GREY if common else GREEN for common in frame["common_word"]]
    bars = ax.barh(_axis_labels(list(frame["term"])), frame["candidates"], color=colours)
    ax.bar_label(bars, padding=2, fontsize=9)
    ax.invert_yaxis()
    searched = int(frame["searched"].iloc[0]) if len(frame) else 0
    ax.set_xlim(0, max(searched, 1))
    ax.set_xlabel(f"records containing the term (of {searched} searched)")
    ax.set_title(title or "Candidates per query term (grey: common words)", loc="left")
    fig.tight_layout()
    return fig


@with_chart_fonts
def match_heatmap(
    matrix: pd.DataFrame, *, highlight: Sequence[str] = (), title: str | None = None
) -> Figure:
    """The records x terms matrix as a picture; ``highlight`` memory_ids get orange labels.

    A match on a common word is grey, on any other term green (as in
    ``term_candidate_chart``).
    """
    rows, cols = matrix.shape
    fig, ax = plt.subplots(figsize=(max(4.0, 0.75 * cols + 2.6), 0.2 * rows + 1.6))
    weight = np.array([1.0 if term in COMMON_WORDS else 2.0 for term in matrix.columns])
    ax.imshow(
        matrix.to_numpy(dtype=float) * weight,
        aspect="auto",
        cmap=ListedColormap(["#f2f2f2", GREY, GREEN]),
        vmin=0,
        vmax=2,
        interpolation="nearest",
    )
    ax.set_xticks(np.arange(cols), _axis_labels(list(matrix.columns)), rotation=0)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(rows), list(matrix.index), fontsize=7)
    for label in ax.get_yticklabels():
        if label.get_text() in highlight:
            label.set_color(ORANGE)
            label.set_fontweight("bold")
    ax.set_xticks(np.arange(-0.5, cols), minor=True)
    ax.set_yticks(np.arange(-0.5, rows), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.0)
    ax.tick_params(which="minor", length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title or "Which candidate holds which query term", loc="left", pad=24)
    fig.tight_layout()
    return fig


def strategy_frame(
    store: RemoteMemoryStore, texts: Sequence[str], *, as_of: str, limit: int = 5
) -> pd.DataFrame:
    """The taught path and the indexed path on the same queries: are the results identical?

    Each query runs once per strategy with the same query_id and ``as_of``; ``identical``
    compares the two whole RecallResults (hits, ranks, breakdowns, counts).
    """
    teaching = RecallEngine(store, strategy="teaching")
    indexed = RecallEngine(store)  # the default strategy is "indexed"
    rows = []
    for n, text in enumerate(texts, start=1):
        query_id = f"q-03-s{n}"
        taught = teaching.recall(text, limit=limit, query_id=query_id, as_of=as_of)
        fast = indexed.recall(text, limit=limit, query_id=query_id, as_of=as_of)
        rows.append(
            {
                "query": text,
                "searched": taught.searched_records,
                "candidates": taught.candidate_records,
                "hits (teaching)": " ".join(h.memory_id for h in taught.hits) or "—",
                "identical": taught.to_dict() == fast.to_dict(),
            }
        )
    return pd.DataFrame(rows)


def candidate_view(
    text: object, records: Sequence[StoredMemory], *, user_scope: str, as_of: str
) -> dict[str, Any]:
    """Stage 2 for one text; never raises: a rejected query comes back as data.

    Keys: accepted, error (``"<Type>: message"`` or None), terms, counts (see
    ``candidate_counts``; None when rejected) and frame (``candidate_frame``, most
    matched terms first; None when rejected).
    """
    try:
        query = _query(text, user_scope, as_of)
    except RemoteMemoryError as exc:
        return {
            "accepted": False,
            "error": f"{type(exc).__name__}: {exc}",
            "terms": (),
            "counts": None,
            "frame": None,
        }
    frame = candidate_frame(query, records)
    frame = frame.sort_values(["matched", "memory_id"], ascending=[False, True], kind="stable")
    return {
        "accepted": True,
        "error": None,
        "terms": query.terms,
        "counts": candidate_counts(query, records),
        "frame": frame.reset_index(drop=True),
    }


def candidate_widget(
    records: Sequence[StoredMemory],
    *,
    user_scope: str,
    as_of: str,
    initial: str = EXERCISE_NOISY_TEXT,
    max_rows: int = 12,
) -> Any:
    """A query box driving the counts, the diagnosis and the candidate table."""
    import ipywidgets as widgets

    box = widgets.Text(value=initial, description="query", layout=widgets.Layout(width="95%"))
    shown = widgets.HTML()

    def render(text: str) -> str:
        view = candidate_view(text, records, user_scope=user_scope, as_of=as_of)
        if not view["accepted"]:
            return f"<b>rejected</b>: {html.escape(view['error'])}"
        counts = view["counts"]
        frame = view["frame"]
        more = len(frame) - max_rows
        table = frame.head(max_rows).to_html(index=False)
        tail = f"<i>… and {more} more candidates</i>" if more > 0 else ""
        return (
            f"terms: <code>{html.escape(' | '.join(view['terms']))}</code><br>"
            f"searched_records = <b>{counts['searched']}</b>, "
            f"candidate_records = <b>{counts['candidates']}</b> "
            f"({html.escape(counts['diagnosis'])}){table}{tail}"
        )

    def update(change: dict[str, Any]) -> None:
        shown.value = render(change["new"])

    box.observe(update, names="value")
    shown.value = render(initial)
    return widgets.VBox([box, shown])


def check_quiet_query(
    answer: object,
    records: Sequence[StoredMemory],
    *,
    user_scope: str,
    as_of: str,
    target: str = EXERCISE_TARGET,
    max_candidates: int = EXERCISE_MAX_CANDIDATES,
    min_terms: int = 2,
    placeholder: str = "your rewritten query (a str)",
) -> CheckResult:
    """Grade a rewritten query: ``target`` stays a candidate among few candidates.

    Right when the query keeps at least ``min_terms`` terms (one word, ``status``, is a
    lucky guess the notebook's per-term table shows, not a rewritten question) and
    ``target`` is among at most ``max_candidates`` candidates; wrong with a hint
    otherwise; not answered for the placeholder.
    """

    def judge(text: str) -> CheckResult:
        view = candidate_view(text, records, user_scope=user_scope, as_of=as_of)
        if not view["accepted"]:
            return wrong(f"Stage 1 rejects that query: {view['error']}")
        if len(view["terms"]) < min_terms:
            return wrong(
                f"Not yet: {text!r} is one term. One word is a lucky guess, not a rewritten "
                "question: keep at least two words that say what the record is about, and drop "
                "the ones that many records share."
            )
        found = list(view["frame"]["memory_id"])
        if target not in found:
            return wrong(
                f"Not yet: {target} is no longer a candidate, so no later stage can rank it. "
                "Keep at least one word that its summary or content contains."
            )
        if len(found) > max_candidates:
            per_term = term_candidate_frame(_query(text, user_scope, as_of), records)
            noisy = ", ".join(
                f"{row.term!r} ({row.candidates})" for row in per_term.head(3).itertuples()
            )
            return wrong(
                f"Not yet: {len(found)} candidates (at most {max_candidates} wanted). "
                f"The terms that bring in the most records: {noisy}."
            )
        return right(
            f"Right: {len(found)} candidate(s) out of {view['counts']['searched']} searched, "
            f"and {target} is one of them."
        )

    return check_value(
        answer, judge, placeholder=placeholder, kind=str, described="a str (a query)"
    )


def check_cache_query(
    answer: object, records: Sequence[StoredMemory], *, user_scope: str, as_of: str
) -> CheckResult:
    """The optional stretch: ``check_quiet_query`` for the result-cache record
    (``STRETCH_TARGET``) among at most ``STRETCH_MAX_CANDIDATES`` candidates."""
    return check_quiet_query(
        answer,
        records,
        user_scope=user_scope,
        as_of=as_of,
        target=STRETCH_TARGET,
        max_candidates=STRETCH_MAX_CANDIDATES,
        min_terms=1,  # a rarer word of the record's own is the find here
        placeholder="your query (a str)",
    )
