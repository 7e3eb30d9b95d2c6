"""memorylib: a stored memory is not a recalled memory.

A ``StoredMemory`` is durable evidence (owner, source, time) in an append-only store.
A ``RecallHit`` is a query-scoped, ranked, explained view of one of them. The recall
pipeline has five pure stages, one module each, in the order data flows::

    query.normalize_recall_query      normalize
    candidates.build_recall_candidates candidate
    scoring.score_recall_candidate    score
    ranking.stable_rank_recall_candidates  stable rank
    render.render_recall_context      render

``RecallEngine`` only sequences them (and chooses between the taught path and the
indexed one in ``memorylib.fast``). Stores implement ``interface.MemoryStore``; the
chapter's is ``store.RemoteMemoryStore``. Importing this package reads no
environment, writes no file and imports neither numpy, anthropic, pandas nor
matplotlib.

Every public name below is imported on first use (PEP 562 ``__getattr__``): ``import
memorylib`` itself loads only this file and ``wiring``, so a command-line call or a
notebook cell pays for the stages it uses, not for all of them. ``from memorylib import
RecallEngine`` works as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import wiring

if TYPE_CHECKING:  # what the names are, for readers and type checkers; nothing runs here
    from .candidates import CandidateSet, build_recall_candidates, searchable_terms
    from .engine import RecallEngine
    from .errors import (
        RemoteMemoryCorruptionError,
        RemoteMemoryDuplicateError,
        RemoteMemoryError,
        RemoteMemoryFailedClosedError,
        RemoteMemoryScopeError,
        RemoteMemoryUnavailableError,
        RemoteMemoryValidationError,
        RemoteMemoryWriteError,
        UncommittedWriteWarning,
    )
    from .interface import MemoryStore, user_scope_for
    from .pipeline import recall_pipeline
    from .query import extract_terms, normalize_recall_query, normalize_text
    from .ranking import stable_rank_recall_candidates
    from .records import (
        NO_MATCHING_TERMS,
        MemoryKind,
        MemorySource,
        RecallCandidate,
        RecallHit,
        RecallQuery,
        RecallResult,
        RecallScope,
        RecallScoreBreakdown,
        StoredMemory,
    )
    from .render import render_profile_block, render_recall_context
    from .runtime import ConfigurationError, default_runtime, reset_runtime, runtime_client
    from .scoring import DEFAULT_POLICY, ScoringPolicy, recency_score, score_recall_candidate
    from .seed import seed_teaching_store
    from .store import RemoteMemoryStore
    from .timestamps import TEACHING_AS_OF
    from .tool import RECALL_HISTORY_TOOL, build_system_prompt, recall_history, set_default_engine

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {  # public name -> the module that defines it
    "DEFAULT_POLICY": "scoring",
    "NO_MATCHING_TERMS": "records",
    "RECALL_HISTORY_TOOL": "tool",
    "TEACHING_AS_OF": "timestamps",
    "CandidateSet": "candidates",
    "ConfigurationError": "runtime",
    "MemoryKind": "records",
    "MemorySource": "records",
    "MemoryStore": "interface",
    "RecallCandidate": "records",
    "RecallEngine": "engine",
    "RecallHit": "records",
    "RecallQuery": "records",
    "RecallResult": "records",
    "RecallScope": "records",
    "RecallScoreBreakdown": "records",
    "RemoteMemoryCorruptionError": "errors",
    "RemoteMemoryDuplicateError": "errors",
    "RemoteMemoryError": "errors",
    "RemoteMemoryFailedClosedError": "errors",
    "RemoteMemoryScopeError": "errors",
    "RemoteMemoryStore": "store",
    "RemoteMemoryUnavailableError": "errors",
    "RemoteMemoryValidationError": "errors",
    "RemoteMemoryWriteError": "errors",
    "ScoringPolicy": "scoring",
    "StoredMemory": "records",
    "UncommittedWriteWarning": "errors",
    "build_recall_candidates": "candidates",
    "build_system_prompt": "tool",
    "default_runtime": "runtime",
    "extract_terms": "query",
    "normalize_recall_query": "query",
    "normalize_text": "query",
    "recall_history": "tool",
    "recall_pipeline": "pipeline",
    "recency_score": "scoring",
    "render_profile_block": "render",
    "render_recall_context": "render",
    "reset_runtime": "runtime",
    "runtime_client": "runtime",
    "score_recall_candidate": "scoring",
    "searchable_terms": "candidates",
    "seed_teaching_store": "seed",
    "stable_rank_recall_candidates": "ranking",
    "user_scope_for": "interface",
    "set_default_engine": "tool",
}

__all__ = [
    "DEFAULT_POLICY",
    "NO_MATCHING_TERMS",
    "RECALL_HISTORY_TOOL",
    "TEACHING_AS_OF",
    "CandidateSet",
    "ConfigurationError",
    "MemoryKind",
    "MemorySource",
    "MemoryStore",
    "RecallCandidate",
    "RecallEngine",
    "RecallHit",
    "RecallQuery",
    "RecallResult",
    "RecallScope",
    "RecallScoreBreakdown",
    "RemoteMemoryCorruptionError",
    "RemoteMemoryDuplicateError",
    "RemoteMemoryError",
    "RemoteMemoryFailedClosedError",
    "RemoteMemoryScopeError",
    "RemoteMemoryStore",
    "RemoteMemoryUnavailableError",
    "RemoteMemoryValidationError",
    "RemoteMemoryWriteError",
    "ScoringPolicy",
    "StoredMemory",
    "UncommittedWriteWarning",
    "build_recall_candidates",
    "build_system_prompt",
    "default_runtime",
    "extract_terms",
    "normalize_recall_query",
    "normalize_text",
    "recall_history",
    "recall_pipeline",
    "recency_score",
    "render_profile_block",
    "render_recall_context",
    "reset_runtime",
    "runtime_client",
    "score_recall_candidate",
    "searchable_terms",
    "seed_teaching_store",
    "set_default_engine",
    "stable_rank_recall_candidates",
    "user_scope_for",
]


def _teaching_engine() -> Any:
    """The engine ``recall_history`` uses when it is given none: the lazy teaching
    runtime's (created, and its store seeded, on the first such call)."""
    from .runtime import default_runtime

    return default_runtime().engine


# The composition root: the tool's default engine is the lazy teaching runtime's (so
# ``tool`` never imports ``runtime``, which sits above it). Nothing is created here.
wiring.engine_factory = _teaching_engine


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use, then keep the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        try:  # a submodule: ``memorylib.store`` after a bare ``import memorylib``
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
