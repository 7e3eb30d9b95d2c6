"""Analysis, beyond the chapter: which terms a text is filed and searched under.

The chapter has one term rule (``query.term_occurrences``): words, and the bigrams of
every run of Chinese characters. An ``Analyzer`` is a named chain of steps around that
rule, part of a ``ScoringPolicy`` and used the same way at index time (a record's
``summary + " " + content``) and at query time, so a query term can only match a term
a record was filed under by the same chain. ``CHAPTER_ANALYZER``, the default, is the
chapter's rule exactly. Reading a normalized text run by run (``query.char_class``):

* a **word** run is dropped when it is a stopword; else, with a ``stemmer``, it is
  replaced by its Snowball stem (step ``stem``, or ``word`` when the stem is the word);
* a run of **Chinese** characters gives the chapter's bigrams (``bigram``; a lone
  character stays itself, ``unigram``); with ``cjk_segmenter="jieba"``, also jieba's
  words of the run (``segment``); with ``cjk_unigrams``, also each of its characters
  (``unigram``). Each occurrence counts, so a word jieba and the bigrams agree on
  ("记忆") counts twice. Any of them that is a stopword is dropped.

``stopwords`` names lists of the ``stopwords`` package (``"english"``: the Snowball list,
175 entries; ``"chinese"``: 125 entries). A list entry counts as its words, each passed
through the term rule (so "don't" contributes "don" and "t"), and its Chinese runs
whole. The packages (``stopwords``, ``snowballstemmer`` with PyStemmer, ``jieba``: the
``analyzers`` extra) are imported on first use of an analyzer that needs them, never by
``import memorylib``; jieba loads its dictionary then (about a second, its messages
silenced; it keeps a cache of it in the temporary folder, as jieba always does).

A query is analyzed by ``analyze_query``: its terms become the analyzer's, each with
the query words and steps it came from (``QueryAnalysis``). With ``query_weighting=
"dialogue-turns"`` a long dialogue's older turns weigh less: the raw text's lines are
its turns, and a term weighs ``turn_decay ** (turns after the last one holding it)``
(1 for a one-line query: the identity for ordinary questions). Analyzed terms of a text
are cached per text (``text_terms``): a pure function of the text and the analyzer.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .checks import require
from .errors import RemoteMemoryValidationError
from .explanation import QueryAnalysis, QueryTerm, TermMatch
from .query import char_class, normalize_text, term_counts
from .records import RecallCandidate, RecallQuery

__all__ = [
    "CHAPTER_ANALYZER",
    "CHINESE_ANALYZER",
    "DIALOGUE_TURNS",
    "ENGLISH_ANALYZER",
    "FULL_ANALYZER",
    "STEPS",
    "Analyzer",
    "TextTerms",
    "analyze_query",
    "analyzed_occurrences",
    "cjk_terms",
    "query_parameters",
    "query_term_weights",
    "stem",
    "stop_terms",
    "term_matches",
    "text_terms",
]

STEPS = ("word", "stem", "bigram", "unigram", "segment")  # the order steps are listed in
DIALOGUE_TURNS = "dialogue-turns"  # the one query weighting: later turns of a dialogue weigh more
STEMMERS = ("english",)  # Snowball algorithms offered (the package has more; add them here)
SEGMENTERS = ("jieba",)


@dataclass(frozen=True, slots=True)
class Analyzer:
    """A named chain of analysis steps (see the module docstring). Frozen and hashable:
    two analyzers with the same fields are the same analyzer."""

    name: str = "chapter"
    stopwords: tuple[str, ...] = ()  # lists of the ``stopwords`` package: "english", "chinese"
    stemmer: str | None = None  # a Snowball algorithm: "english"
    cjk_segmenter: str | None = None  # "jieba"
    cjk_unigrams: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise RemoteMemoryValidationError("an analyzer's name must be a non-empty str")
        if not isinstance(self.stopwords, tuple) or not all(
            isinstance(x, str) and x for x in self.stopwords
        ):
            raise RemoteMemoryValidationError(
                "stopwords must be a tuple of list names, e.g. ('english', 'chinese')"
            )
        if self.stemmer is not None and self.stemmer not in STEMMERS:
            raise RemoteMemoryValidationError(
                f"stemmer must be None or one of {', '.join(STEMMERS)}, got {self.stemmer!r}"
            )
        if self.cjk_segmenter is not None and self.cjk_segmenter not in SEGMENTERS:
            raise RemoteMemoryValidationError(
                f"cjk_segmenter must be None or one of {', '.join(SEGMENTERS)}, "
                f"got {self.cjk_segmenter!r}"
            )
        require(self.cjk_unigrams, bool, "cjk_unigrams")

    def __repr__(self) -> str:
        shown = [repr(self.name)]
        for key, default in (
            ("stopwords", ()),
            ("stemmer", None),
            ("cjk_segmenter", None),
            ("cjk_unigrams", False),
        ):
            if getattr(self, key) != default:
                shown.append(f"{key}={getattr(self, key)!r}")
        return f"Analyzer({', '.join(shown)})"

    @property
    def is_chapter(self) -> bool:
        """True when the chain is the chapter's term rule alone (whatever the name)."""
        return not (self.stopwords or self.stemmer or self.cjk_segmenter or self.cjk_unigrams)

    def parameters(self) -> tuple[tuple[str, str], ...]:
        """The steps that are on, as text (what breakdowns, JSON and XML report)."""
        found = []
        if self.stopwords:
            found.append(("stopwords", " ".join(self.stopwords)))
        if self.stemmer:
            found.append(("stemmer", self.stemmer))
        if self.cjk_segmenter:
            found.append(("cjk_segmenter", self.cjk_segmenter))
        if self.cjk_unigrams:
            found.append(("cjk_unigrams", "yes"))
        return tuple(found)


CHAPTER_ANALYZER = Analyzer()
ENGLISH_ANALYZER = Analyzer("snowball-english", stopwords=("english",), stemmer="english")
CHINESE_ANALYZER = Analyzer(
    "jieba-chinese", stopwords=("chinese",), cjk_segmenter="jieba", cjk_unigrams=True
)
FULL_ANALYZER = Analyzer(
    "snowball-english+jieba-chinese",
    stopwords=("english", "chinese"),
    stemmer="english",
    cjk_segmenter="jieba",
    cjk_unigrams=True,
)


# -- the packages, loaded on first use ----------------------------------------------------------

_LOCK = threading.Lock()  # the stemmers and jieba keep state: one caller at a time


@functools.cache
def stop_terms(lists: tuple[str, ...]) -> frozenset[str]:
    """The terms the named stopword lists drop: each entry's words through the term rule,
    its Chinese runs whole."""
    if not lists:
        return frozenset()
    import stopwords  # the `analyzers` extra

    found: set[str] = set()
    for name in lists:
        if name not in stopwords.AVAILABLE_LANGUAGES:
            raise RemoteMemoryValidationError(
                f"stopwords {name!r} is not a list of the stopwords package; "
                f"choose from {', '.join(sorted(stopwords.AVAILABLE_LANGUAGES))}"
            )
        for entry in stopwords.get_stopwords(name):
            for kind, chars in itertools.groupby(normalize_text(entry), key=char_class):
                if kind != "other":
                    found.add("".join(chars))
    return frozenset(found)


@functools.cache
def _stemmer(language: str) -> object:
    import snowballstemmer  # uses PyStemmer (C) when it is installed

    return snowballstemmer.stemmer(language)


@functools.lru_cache(maxsize=1 << 18)
def stem(language: str, word: str) -> str:
    """The Snowball stem of ``word`` (cached per word)."""
    stemmer = _stemmer(language)
    with _LOCK:
        return stemmer.stemWord(word)  # type: ignore[attr-defined]


@functools.cache
def _jieba() -> object:
    import jieba

    tokenizer = jieba.Tokenizer()  # our own: a user's jieba dictionary changes stay theirs
    logger = logging.getLogger("jieba")
    level = logger.level
    logger.setLevel(logging.WARNING)  # "Building prefix dict ..." is not ours to print
    try:
        tokenizer.initialize()
    finally:
        logger.setLevel(level)
    return tokenizer


@functools.lru_cache(maxsize=1 << 16)
def _segment(run: str) -> tuple[str, ...]:
    tokenizer = _jieba()
    with _LOCK:
        return tuple(word for word in tokenizer.lcut(run) if word.strip())  # type: ignore[attr-defined]


# -- analysis -------------------------------------------------------------------------------------


def cjk_terms(run: str, analyzer: Analyzer) -> list[tuple[str, str]]:
    """``(term, step)`` of one run of Chinese characters: the chapter's bigrams (a lone
    character: itself), then jieba's words, then the single characters, as the analyzer
    asks (stopwords not yet dropped)."""
    if len(run) == 1:  # the chapter: a lone character stays a unigram
        return [(run, "unigram")]
    found = [(run[i : i + 2], "bigram") for i in range(len(run) - 1)]
    if analyzer.cjk_segmenter:
        found += [(word, "segment") for word in _segment(run)]
    if analyzer.cjk_unigrams:
        found += [(char, "unigram") for char in run]
    return found


def analyzed_occurrences(normalized: str, analyzer: Analyzer) -> Iterator[tuple[str, str, str]]:
    """``(term, step, word)`` for every term occurrence of already-normalized text, in text
    order (a CJK run's bigrams, then its segments, then its unigrams), repeats included.
    ``word`` is the run the term came from."""
    stop = stop_terms(analyzer.stopwords)
    for kind, chars in itertools.groupby(normalized, key=char_class):
        run = "".join(chars)
        if kind == "word":
            if run in stop:
                continue
            if analyzer.stemmer:
                stemmed = stem(analyzer.stemmer, run)
                yield stemmed, ("word" if stemmed == run else "stem"), run
            else:
                yield run, "word", run
        elif kind == "cjk":
            for term, step in cjk_terms(run, analyzer):
                if term not in stop:
                    yield term, step, run


@dataclass(frozen=True, slots=True)
class TextTerms:
    """The analyzed terms of one text: how often each occurs, sorted, and their sum."""

    counts: Mapping[str, int]
    terms: tuple[str, ...]
    length: int


@functools.lru_cache(maxsize=1 << 16)
def text_terms(text: str, analyzer: Analyzer = CHAPTER_ANALYZER) -> TextTerms:
    """The terms of raw ``text`` (normalized here) under ``analyzer``, cached: for the
    chapter's analyzer exactly ``query.term_counts(normalize_text(text))``."""
    normalized = normalize_text(text)
    if analyzer.is_chapter:
        counts = term_counts(normalized)
    else:
        counts = Counter(term for term, _, _ in analyzed_occurrences(normalized, analyzer))
    return TextTerms(MappingProxyType(dict(counts)), tuple(sorted(counts)), sum(counts.values()))


def _turns(text: str) -> list[str]:
    """The lines of raw query text that hold something: a dialogue's turns."""
    return [line for line in text.splitlines() if line.strip()]


def analyze_query(
    query: RecallQuery,
    analyzer: Analyzer = CHAPTER_ANALYZER,
    *,
    query_weighting: str | None = None,
    turn_decay: float = 0.9,
    text: str | None = None,
) -> RecallQuery:
    """``query`` with the analyzer's terms of its normalized text, explained.

    ``text`` is the raw text it was normalized from, for its line breaks (the dialogue
    turns, which ``query.text`` has folded away); without it the query is one turn.
    """
    query = require(query, RecallQuery, "query")
    occurrences = list(analyzed_occurrences(query.normalized_text, analyzer))
    words: dict[str, dict[str, None]] = {}
    steps: dict[str, set[str]] = {}
    for term, step, word in occurrences:
        words.setdefault(term, {})[word] = None  # first appearance first, no repeats
        steps.setdefault(term, set()).add(step)
    terms = tuple(sorted(words))
    parameters = query_parameters(analyzer, query_weighting, turn_decay)
    weights: dict[str, float] = {}
    if query_weighting is not None:
        weights = query_term_weights(text if text is not None else query.text, analyzer, turn_decay)
    analysis = QueryAnalysis(
        analyzer=analyzer.name,
        parameters=parameters,
        terms=tuple(
            QueryTerm(
                term=term,
                words=tuple(words[term]),
                steps=tuple(s for s in STEPS if s in steps[term]),
                weight=weights.get(term, 1.0),
            )
            for term in terms
        ),
    )
    return RecallQuery(
        query_id=query.query_id,
        text=query.text,
        normalized_text=query.normalized_text,
        terms=terms,
        user_scope=query.user_scope,
        limit=query.limit,
        issued_at=query.issued_at,
        analysis=analysis,
    )


def query_parameters(
    analyzer: Analyzer, query_weighting: str | None, turn_decay: float
) -> tuple[tuple[str, str], ...]:
    """What a query's analysis reports: the analyzer's steps and the query weighting."""
    if query_weighting is None:
        return analyzer.parameters()
    if query_weighting != DIALOGUE_TURNS:
        raise RemoteMemoryValidationError(
            f"query_weighting must be None or {DIALOGUE_TURNS!r}, got {query_weighting!r}"
        )
    return (
        *analyzer.parameters(),
        ("query_weighting", query_weighting),
        ("turn_decay", f"{turn_decay:g}"),
    )


def query_term_weights(text: str, analyzer: Analyzer, turn_decay: float) -> dict[str, float]:
    """Each term of raw ``text``: ``turn_decay ** k``, where k counts the turns (lines)
    after the last one that holds the term (0 for the last line: weight 1)."""
    turns = _turns(text)
    weights: dict[str, float] = {}
    for position, line in enumerate(turns):
        weight = turn_decay ** (len(turns) - 1 - position)
        for term in text_terms(line, analyzer).counts:
            weights[term] = max(weights.get(term, 0.0), weight)
    return weights


def term_matches(query: RecallQuery, candidate: RecallCandidate) -> tuple[TermMatch, ...]:
    """Each matched term explained: the query words and steps it came from, its weight,
    the frequency counted and (with context) the records it was counted in."""
    told_of = {t.term: t for t in query.analysis.terms} if query.analysis is not None else {}
    frequencies = candidate.term_frequencies or (0,) * len(candidate.matched_terms)
    sources = candidate.term_sources or ((),) * len(candidate.matched_terms)
    found = []
    for term, tf, where in zip(candidate.matched_terms, frequencies, sources, strict=True):
        told = told_of.get(term)
        found.append(
            TermMatch(
                term=term,
                words=told.words if told else (),
                steps=told.steps if told else (),
                weight=told.weight if told else 1.0,
                frequency=round(float(tf), 6),
                found_in=where,
            )
        )
    return tuple(found)
