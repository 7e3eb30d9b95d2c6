"""The chapter reference module's names over memorylib.

Code written against the chapter's reference module (``s12_cloud_memory/code.py``)
can import this module in its place: every name below is a memorylib object under
the name the reference gives it, nothing is re-implemented here::

    from memorylib import s12                     # or: from memorylib.s12 import *

    store = s12.RemoteMemoryStore("records.jsonl", user_id="alice")
    result = s12.RecallEngine(store).recall("layered memory", as_of=s12._iso(moment))

Where the reference's name differs from memorylib's: ``_iso`` is
``timestamps.format_timestamp``, ``_scope_id`` is ``user_scope_for``,
``MAX_RECALL_LIMIT`` is ``checks.MAX_LIMIT``, ``MAX_RECORD_CHARS`` is
``interface.MAX_CONTENT_CHARS``, the three scoring constants are the defaults of
``ScoringPolicy``. ``os`` is the standard module, as in the reference (its tests patch
``s12.os.write``; memorylib writes through ``os.write`` too).

``client``, ``MODEL``, ``DEFAULT_STORE``, ``DEFAULT_RECALL`` and ``SYSTEM`` are the
reference's lazy module globals: ``None`` after import, because importing creates no
client, reads no environment and opens no store. memorylib keeps that state in
``runtime`` instead (``default_runtime()``, ``runtime_client()``), so assigning these
globals changes nothing: pass ``engine=`` to ``recall_history`` or call
``memorylib.tool.set_default_engine`` to choose the store it searches.

Not carried over: the reference's shell and file tools (``run_bash``, ``run_read``,
``TOOLS``: memorylib offers the model ``recall_history`` alone), its interactive
``main`` (``python -m memorylib``) and its seeding helpers (``seed_teaching_store``).
``build_recall_candidates`` returns a ``CandidateSet`` (the candidates and the counts
that explain them), ``default_runtime`` a ``Runtime`` rather than a tuple.
"""

from __future__ import annotations

import os

from . import (
    MemoryKind,
    MemorySource,
    RecallCandidate,
    RecallEngine,
    RecallHit,
    RecallQuery,
    RecallResult,
    RecallScope,
    RecallScoreBreakdown,
    RemoteMemoryCorruptionError,
    RemoteMemoryDuplicateError,
    RemoteMemoryError,
    RemoteMemoryScopeError,
    RemoteMemoryStore,
    RemoteMemoryValidationError,
    StoredMemory,
    build_recall_candidates,
    build_system_prompt,
    default_runtime,
    normalize_recall_query,
    recall_history,
    render_recall_context,
    runtime_client,
    score_recall_candidate,
    stable_rank_recall_candidates,
    user_scope_for,
)
from .checks import MAX_LIMIT
from .interface import MAX_CONTENT_CHARS
from .records import (
    DEFAULT_LEXICAL_WEIGHT,
    DEFAULT_RECENCY_WEIGHT,
    DEFAULT_RECENCY_WINDOW_DAYS,
    SCHEMA_VERSION,
)
from .timestamps import format_timestamp

__all__ = [
    "DEFAULT_RECALL",
    "DEFAULT_STORE",
    "LEXICAL_WEIGHT",
    "MAX_RECALL_LIMIT",
    "MAX_RECORD_CHARS",
    "MODEL",
    "RECENCY_WEIGHT",
    "RECENCY_WINDOW_DAYS",
    "SCHEMA_VERSION",
    "SYSTEM",
    "MemoryKind",
    "MemorySource",
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
    "RemoteMemoryScopeError",
    "RemoteMemoryStore",
    "RemoteMemoryValidationError",
    "StoredMemory",
    "build_recall_candidates",
    "build_system_prompt",
    "client",
    "default_runtime",
    "normalize_recall_query",
    "os",
    "recall_history",
    "render_recall_context",
    "runtime_client",
    "score_recall_candidate",
    "stable_rank_recall_candidates",
]

# The reference's private helpers that its callers (and its tests) use.
_iso = format_timestamp
_scope_id = user_scope_for

MAX_RECALL_LIMIT = MAX_LIMIT
MAX_RECORD_CHARS = MAX_CONTENT_CHARS
LEXICAL_WEIGHT = DEFAULT_LEXICAL_WEIGHT
RECENCY_WEIGHT = DEFAULT_RECENCY_WEIGHT
RECENCY_WINDOW_DAYS = DEFAULT_RECENCY_WINDOW_DAYS

# The reference's lazy globals: nothing is created at import (see the docstring).
client: object | None = None
MODEL: str | None = None
DEFAULT_STORE: RemoteMemoryStore | None = None
DEFAULT_RECALL: RecallEngine | None = None
SYSTEM: str | None = None
