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
"""

from __future__ import annotations

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
from .seed import TEACHING_AS_OF, seed_teaching_store
from .store import RemoteMemoryStore
from .tool import RECALL_HISTORY_TOOL, build_system_prompt, recall_history, set_default_engine

# The composition root: the tool's default engine is the lazy teaching runtime's (so
# ``tool`` never imports ``runtime``, which sits above it). Nothing is created here.
set_default_engine(lambda: default_runtime().engine)

__version__ = "0.1.0"

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
    "stable_rank_recall_candidates",
    "user_scope_for",
]
