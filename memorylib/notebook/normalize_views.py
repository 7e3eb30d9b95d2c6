"""Views for notebook 02 (normalize): raw recall text -> normalized text -> terms.

Pure functions from text to plain data, DataFrames and Figures; the ipywidgets layer
(``normalize_widget``) only wires a text box to ``normalize_view``. Nothing here
raises for a rejected query: the rejection itself is the lesson, so it comes back as
data (error type and message). The self-check ``check_predicted_terms`` grades the
notebook's exercise.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from memorylib import (
    RecallQuery,
    RemoteMemoryError,
    extract_terms,
    normalize_recall_query,
    normalize_text,
)
from memorylib.notebook.common import with_chart_fonts
from memorylib.notebook.exercises import CheckResult, check_value, expect_sequence, right, wrong
from memorylib.query import CJK_FIRST, CJK_LAST
from memorylib.timestamps import CHAPTER_CLOCK

__all__ = [
    "EXERCISE_TEXT",
    "TERM_COUNT_PAIRS",
    "check_predicted_terms",
    "normalization_frame",
    "normalize_view",
    "normalize_widget",
    "query_card",
    "rejection_frame",
    "term_count_chart",
    "term_count_frame",
    "term_kind",
    "term_table",
    "visible",
]

# Fixed values so every output of the notebook is the same on every run.
VIEW_SCOPE = "course-user-scope"
VIEW_QUERY_ID = "q-02-view"
VIEW_ISSUED_AT = CHAPTER_CLOCK

# The exercise: predict the terms of this query (fullwidth Latin, case, CJK run).
EXERCISE_TEXT = "ＳＱＬｉｔｅ  WAL 持久化方案"

# The same question asked in English and in Chinese: (label, English, Chinese).
TERM_COUNT_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("layered memory", "layered memory", "分层记忆"),
    ("context budget", "context budget", "上下文预算"),
    ("persistence choice", "which database did we pick for persistence", "持久化选了哪个数据库"),
    ("shell safety", "ask before deleting files", "删除文件前先确认"),
    ("recall provenance", "recall hits keep their provenance", "召回结果保留来源"),
)

_CJK_RUN = re.compile(f"[{CJK_FIRST}-{CJK_LAST}]+")
_INVISIBLE = {"\t": "⇥", "\n": "↵", "\r": "␍", "\u3000": "□", "\u00a0": "⍽"}


def visible(text: str) -> str:
    """``text`` with tabs, newlines, ideographic and no-break spaces made visible.

    ⇥ tab, ↵ newline, ␍ carriage return, □ ideographic space U+3000, ⍽ no-break space.
    """
    return "".join(_INVISIBLE.get(ch, ch) for ch in text)


def term_kind(term: str) -> str:
    """'Chinese bigram', 'Chinese single character' or 'word' (any other term)."""
    if _CJK_RUN.fullmatch(term):
        return "Chinese bigram" if len(term) == 2 else "Chinese single character"
    return "word"


def normalize_view(text: object, *, limit: object = 5) -> dict[str, Any]:
    """What stage 1 makes of ``text``: never raises, a rejection is returned as data.

    Keys: ``accepted`` (bool), ``text`` (readable, whitespace-folded),
    ``normalized_text``, ``terms`` (tuple), ``term_count``, ``error_type`` and
    ``error_message`` (``None`` when accepted). Rejected input keeps ``text`` as
    given (made visible) and empty terms.
    """
    try:
        query = normalize_recall_query(
            text,
            user_scope=VIEW_SCOPE,
            limit=limit,
            query_id=VIEW_QUERY_ID,
            issued_at=VIEW_ISSUED_AT,
        )
    except RemoteMemoryError as exc:
        return {
            "accepted": False,
            "text": visible(text) if isinstance(text, str) else repr(text),
            "normalized_text": None,
            "terms": (),
            "term_count": 0,
            "error_type": type(exc).__name__,
            "error_message": str(exc),
        }
    return {
        "accepted": True,
        "text": query.text,
        "normalized_text": query.normalized_text,
        "terms": query.terms,
        "term_count": len(query.terms),
        "error_type": None,
        "error_message": None,
    }


def normalization_frame(cases: Iterable[tuple[str, str]]) -> pd.DataFrame:
    """One row per (case label, raw text): input made visible -> normalized_text -> terms.

    ``input_chars`` counts the code points of the raw input, which tells apart inputs
    that look the same (a composed "é" is one code point, "e" + U+0301 two).
    """
    rows = []
    for label, text in cases:
        view = normalize_view(text)
        rows.append(
            {
                "case": label,
                "input": visible(text),
                "input_chars": len(text),
                "normalized_text": view["normalized_text"],
                "terms": " | ".join(view["terms"]),
                "term_count": view["term_count"],
            }
        )
    return pd.DataFrame(rows)


def query_card(query: RecallQuery) -> pd.DataFrame:
    """A two-column frame (field, value) of one RecallQuery, terms joined by " | "."""
    rows = []
    for key, value in query.to_dict().items():
        shown = " | ".join(value) if key == "terms" else value
        rows.append((key, repr(shown) if key == "text" else str(shown)))
    return pd.DataFrame(rows, columns=["field", "value"])


def term_table(text: str) -> pd.DataFrame:
    """Each term of ``text`` with its kind (word / Chinese bigram / single character)."""
    terms = extract_terms(normalize_text(text))
    return pd.DataFrame({"term": list(terms), "kind": [term_kind(t) for t in terms]})


def rejection_frame(cases: Iterable[tuple[str, object, object]]) -> pd.DataFrame:
    """One row per (label, text, limit): accepted or the error type and message."""
    rows = []
    for label, text, limit in cases:
        view = normalize_view(text, limit=limit)
        rows.append(
            {
                "case": label,
                "limit": repr(limit),
                "accepted": view["accepted"],
                "error_type": view["error_type"] or "",
                "message": view["error_message"] or "",
            }
        )
    return pd.DataFrame(rows)


def term_count_frame(
    pairs: Sequence[tuple[str, str, str]] = TERM_COUNT_PAIRS,
) -> pd.DataFrame:
    """Terms per phrasing of the same question: columns question, english/chinese terms."""
    rows = []
    for label, english, chinese in pairs:
        en = extract_terms(normalize_text(english))
        zh = extract_terms(normalize_text(chinese))
        rows.append(
            {
                "question": label,
                "english": english,
                "chinese": chinese,
                "english_terms": len(en),
                "chinese_terms": len(zh),
                "chinese_chars": sum(len(run) for run in _CJK_RUN.findall(chinese)),
            }
        )
    return pd.DataFrame(rows)


@with_chart_fonts
def term_count_chart(frame: pd.DataFrame) -> Figure:
    """Grouped horizontal bars: English words vs Chinese bigrams per question.

    Labels are the English question names only (the course has no CJK font).
    """
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    y = np.arange(len(frame))
    height = 0.38
    en = ax.barh(y - height / 2, frame["english_terms"], height, label="English words")
    zh = ax.barh(y + height / 2, frame["chinese_terms"], height, label="Chinese bigrams")
    for bars in (en, zh):
        ax.bar_label(bars, padding=2, fontsize=9)
    ax.set_yticks(y, frame["question"])
    ax.invert_yaxis()
    ax.set_xlabel("terms after normalization")
    ax.set_title("Same question, two phrasings: terms after normalization", loc="left")
    ax.legend(loc="lower right", frameon=True, framealpha=0.9)
    ax.set_xlim(0, max(frame["english_terms"].max(), frame["chinese_terms"].max()) * 1.45)
    fig.tight_layout()
    return fig


def check_predicted_terms(answer: object, text: str = EXERCISE_TEXT) -> CheckResult:
    """Grade predicted terms for ``text``: right, wrong with a hint, or not answered.

    The terms are a set: any order is right (the contract sorts them by code point, which
    nobody does by eye), but each term once.
    """

    def judge(answer: object) -> CheckResult:
        given = expect_sequence(answer, "a tuple (or list) of str, one per term", item=str)
        expected = extract_terms(normalize_text(text))
        if sorted(given) == list(expected):
            return right(
                f"Right: {expected} (NFKC, casefold, words + Chinese bigrams; the contract "
                "lists them sorted)."
            )
        if sorted(set(given)) == list(expected):
            return wrong("The right terms, but each term is listed once.")
        hints = []
        if any(t != t.casefold() for t in given):
            hints.append("casefold: every term is lower case")
        if any(any(0xFF01 <= ord(c) <= 0xFF5E for c in t) for t in given):
            hints.append("NFKC turns fullwidth letters like Ｓ into plain ASCII")
        if any(len(t) > 2 and _CJK_RUN.fullmatch(t) for t in given):
            hints.append("a run of Chinese characters becomes overlapping 2-character bigrams")
        missing = [t for t in expected if t not in given]
        extra = [t for t in given if t not in expected]
        if not hints:
            hints.append(f"{len(missing)} term(s) missing, {len(extra)} term(s) that are not terms")
        return wrong("Not yet: " + "; ".join(hints) + ".")

    return check_value(answer, judge, placeholder="a tuple of terms, e.g. ('a', 'b')")


def normalize_widget(initial: str = "  LAYERED   Memory  ") -> Any:
    """A text box; as you type, the normalized text and terms (or the rejection) update.

    Only wiring: all content comes from ``normalize_view`` and ``term_table``.
    """
    import ipywidgets as widgets

    box = widgets.Text(
        value=initial,
        description="query",
        continuous_update=True,
        layout=widgets.Layout(width="95%"),
    )
    shown = widgets.HTML()

    def render(text: str) -> str:
        view = normalize_view(text)
        if not view["accepted"]:
            return (
                f"<b>rejected</b>: <code>{html.escape(view['error_type'])}</code><br>"
                f"{html.escape(view['error_message'])}"
            )
        table = term_table(text).to_html(index=False)
        return (
            f"<b>text</b>: <code>{html.escape(view['text'])}</code><br>"
            f"<b>normalized_text</b>: <code>{html.escape(view['normalized_text'])}</code><br>"
            f"<b>{view['term_count']} terms</b>:{table}"
        )

    def update(change: dict[str, Any]) -> None:
        shown.value = render(change["new"])

    box.observe(update, names="value")
    shown.value = render(initial)
    return widgets.VBox([box, shown])
