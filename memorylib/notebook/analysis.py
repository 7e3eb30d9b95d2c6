"""Analysis helpers for the course data: languages, label outcomes, labelled recalls.

They describe the data for the notebooks and tests; the library itself never needs
them (``memorylib.datasets`` only loads and validates the files).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memorylib import RecallEngine, RecallResult, user_scope_for
from memorylib.datasets import CourseEntry, LabelledQuery
from memorylib.errors import RemoteMemoryValidationError
from memorylib.interface import MemoryStore

__all__ = ["entry_language", "label_outcome", "recall_labelled", "text_language"]

_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")


def text_language(text: str) -> str:
    """``"en"``, ``"zh"`` or ``"mixed"``: a documented heuristic, not a language detector.

    Han share = Han characters / (Han characters + 2 x Latin words), counting a
    Chinese word as about two characters. No Han character or a share under 0.15
    is ``en``; a share of 0.8 or more is ``zh`` (Chinese prose that names a few
    identifiers such as ``recall`` or ``TTL``); anything between is ``mixed``.
    """
    han = len(_HAN.findall(text))
    words = len(_LATIN_WORD.findall(text))
    if han == 0:
        return "en"
    share = han / (han + 2 * words)
    if share < 0.15:
        return "en"
    return "zh" if share >= 0.8 else "mixed"


def entry_language(entry: CourseEntry) -> str:
    """``text_language`` of an entry's ``summary + " " + content``."""
    return text_language(entry.summary + " " + entry.content)


def recall_labelled(query: LabelledQuery, store: MemoryStore, *, limit: int = 5) -> RecallResult:
    """Run a labelled query the way the labels were checked: its text, as_of and query_id."""
    if user_scope_for(query.user_id) != store.user_scope:
        raise RemoteMemoryValidationError(
            f"{query.query_id} belongs to {query.user_id!r}; the store is another user's"
        )
    return RecallEngine(store).recall(
        query.text, limit=limit, as_of=query.as_of, query_id=query.query_id
    )


def label_outcome(relevant: Sequence[str], hit_ids: Sequence[str]) -> str:
    """Where the first relevant id lands among ``hit_ids``: ``top1``, ``top5`` or ``miss``.

    ``top1``: it is the first hit; ``top5``: it is another hit (a recall of limit 5);
    ``miss``: it is not among the hits (always ``miss`` when ``relevant`` is empty).
    """
    if not relevant or relevant[0] not in hit_ids:
        return "miss"
    return "top1" if hit_ids[0] == relevant[0] else "top5"
