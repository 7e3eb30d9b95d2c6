"""Explanations, beyond the chapter: how an analyzer made a query's terms, and where a
candidate's matched terms were found.

Frozen records like those of ``records`` (``to_dict`` / ``from_dict``, round-tripping
exactly). They appear only with another analysis than the chapter's term rule
(``memorylib.analysis``): a ``RecallQuery.analysis`` (``QueryAnalysis`` of
``QueryTerm``), a candidate's ``term_sources`` and a breakdown's ``term_matches``
(``TermMatch``, with ``TermSource`` records when the policy counts neighbours).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .decoding import decode_fields
from .errors import RemoteMemoryCorruptionError

__all__ = ["QueryAnalysis", "QueryTerm", "TermMatch", "TermSource", "json_object", "text_pairs"]


def json_object(payload: object, what: str) -> Mapping[str, Any]:
    """``payload`` if it is a JSON object, else a corruption error naming ``what``."""
    if not isinstance(payload, Mapping):
        raise RemoteMemoryCorruptionError(
            f"{what} must be a JSON object, got {type(payload).__name__}"
        )
    return payload


def text_pairs(payload: object, what: str) -> tuple[tuple[str, str], ...]:
    """A JSON object of text values as ``((name, value), ...)``, in its order."""
    pairs = json_object(payload, what)
    if not all(isinstance(v, str) for v in pairs.values()):
        raise RemoteMemoryCorruptionError(f"{what} must map names to text")
    return tuple((str(k), v) for k, v in pairs.items())


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """Beyond the chapter: one analyzed query term, where it came from and what it weighs.

    ``words``: the query's words (a CJK run counts as one) it was made from; ``steps``:
    how (``word``, ``stem``, ``bigram``, ``unigram``, ``segment``); ``weight``: 1 unless
    the policy weighs the turns of a dialogue (``analysis.query_term_weights``).
    """

    term: str
    words: tuple[str, ...]
    steps: tuple[str, ...]
    weight: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "term": self.term,
            "words": list(self.words),
            "steps": list(self.steps),
            "weight": self.weight,
        }

    @classmethod
    def from_dict(cls, payload: object) -> QueryTerm:
        return decode_fields(cls, payload, "query_term")


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """Beyond the chapter: how a policy's analyzer turned the query into its terms.

    ``terms`` is aligned with ``RecallQuery.terms``; ``parameters`` names the analyzer's
    steps and the query weighting (``name -> value`` as text).
    """

    analyzer: str
    parameters: tuple[tuple[str, str], ...]
    terms: tuple[QueryTerm, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "analyzer": self.analyzer,
            "parameters": dict(self.parameters),
            "terms": [term.to_dict() for term in self.terms],
        }

    @classmethod
    def from_dict(cls, payload: object) -> QueryAnalysis:
        data = dict(json_object(payload, "query.analysis"))
        parameters = text_pairs(data.pop("parameters", None), "query.analysis.parameters")
        analysis = decode_fields(
            cls, {**data, "parameters": []}, "query.analysis", optional=frozenset()
        )
        return dataclasses.replace(analysis, parameters=parameters)

    def term(self, term: str) -> QueryTerm | None:
        return next((t for t in self.terms if t.term == term), None)


@dataclass(frozen=True, slots=True)
class TermSource:
    """Beyond the chapter, with context: a record a matched term was counted in, the
    candidate itself (distance 0, weight 1) or a neighbour of the same source."""

    memory_id: str
    distance: int
    weight: float
    count: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, payload: object) -> TermSource:
        return decode_fields(cls, payload, "term_source")


@dataclass(frozen=True, slots=True)
class TermMatch:
    """Beyond the chapter: one matched term of a breakdown, explained. The query words
    and analysis steps it came from, its query weight, the term frequency the scorer
    used and, with context, the records it was counted in (``found_in``)."""

    term: str
    words: tuple[str, ...]
    steps: tuple[str, ...]
    weight: float
    frequency: float
    found_in: tuple[TermSource, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "term": self.term,
            "words": list(self.words),
            "steps": list(self.steps),
            "weight": self.weight,
            "frequency": self.frequency,
        }
        if self.found_in:
            payload["found_in"] = [source.to_dict() for source in self.found_in]
        return payload

    @classmethod
    def from_dict(cls, payload: object) -> TermMatch:
        return decode_fields(cls, payload, "term_match")
