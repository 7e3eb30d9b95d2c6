"""Views for notebook 10 (beyond the teaching ranker): idf, length, the evaluation, your scorer.

Every number comes from the library: rankings from ``RecallEngine``, idf and BM25 from
``memorylib.scoring``, the evaluation from ``memorylib.evaluation`` (the code behind
``python -m memorylib eval``). Functions are pure (inputs -> DataFrame / Figure / text)
and deterministic: fixed clocks (``COURSE_AS_OF`` or each query's own), fixed query ids,
frames sorted by explicit keys.

``check_my_score`` is the build-it exercise's checker: it runs the student's scoring
function against a reference on named candidates from the course corpus, then on
generated ones, and names the first field that breaks the breakdown contract.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

import matplotlib.pyplot as plt
import pandas as pd
from hypothesis import strategies as st
from matplotlib.figure import Figure

from memorylib import (
    RecallEngine,
    RecallQuery,
    RecallResult,
    RecallScoreBreakdown,
    ScoringPolicy,
    build_recall_candidates,
    normalize_recall_query,
    recency_score,
    user_scope_for,
)
from memorylib.candidates import CandidateSet, CorpusStats, record_term_counts, retracted_ids
from memorylib.datasets import COURSE_AS_OF, COURSE_USERS, course_records
from memorylib.evaluation import (
    METRICS,
    CourseStores,
    EvalQuery,
    EvalReport,
    Scorer,
    ScoringFunctionError,
    evaluate,
    format_table,
    load_eval_queries,
    standard_scorers,
)
from memorylib.metrics import RELEVANT_GRADE
from memorylib.notebook.common import with_chart_fonts
from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Malformed,
    Mistake,
    Named,
    check_function,
    check_value,
)
from memorylib.records import MemoryKind
from memorylib.scoring import bm25_term_weight, evidence, idf
from memorylib.timestamps import age_in_days, parse_timestamp

__all__ = [
    "MEI",
    "SCORER_COLORS",
    "candidate_ceiling_frame",
    "category_frame",
    "check_my_score",
    "comparison_frame",
    "evaluate_yours",
    "evidence_example_frame",
    "idf_figure",
    "idf_frame",
    "length_figure",
    "length_frame",
    "metrics_figure",
    "no_relevant_frame",
    "per_query_frame",
    "ranking_frame",
    "stale_vs_fresh_frame",
    "tuning_figure",
    "tuning_frame",
]

MEI = COURSE_USERS[0]
SCORER_COLORS = {
    "coverage": "#9e9e9e",
    "bm25": "#3182bd",
    "bm25+recency": "#31a354",
    "bm25+evidence": "#9ecae1",
    "bm25+recency+evidence": "#a1d99b",
    "bm25-stem-stop": "#756bb1",
    "bm25-zh-seg": "#bcbddc",
    "bm25-dialogue": "#fdae6b",
    "bm25-context": "#8c6d31",
    "bm25-full": "#54278f",
}
_YOURS_COLOR = "#e6550d"


# -- 1. what coverage rewards ----------------------------------------------------------------


def ranking_frame(
    engine: RecallEngine,
    text: str,
    *,
    policy: ScoringPolicy,
    query_id: str,
    as_of: str = COURSE_AS_OF,
    limit: int = 6,
) -> pd.DataFrame:
    """One row per hit: rank, memory_id, matched terms, the scorer's lexical part, total."""
    result = engine.recall(text, limit=limit, as_of=as_of, query_id=query_id, policy=policy)
    rows = []
    for hit in result.hits:
        b = hit.score_breakdown
        rows.append(
            {
                "rank": hit.rank,
                "memory_id": hit.memory_id,
                "matched": ", ".join(b.matched_terms),
                "lexical": b.lexical_coverage if b.lexical_score is None else b.lexical_score,
                "recency": b.recency,
                "total": b.total,
                "captured_at": hit.provenance.captured_at[:10],
                "snippet": hit.snippet,
            }
        )
    return pd.DataFrame(rows)


def _searched(user: str) -> tuple:
    """The records recall searches: conversations that no retraction hides."""
    records = course_records(user)
    hidden = retracted_ids(records)
    return tuple(
        r for r in records if r.kind is MemoryKind.CONVERSATION and r.memory_id not in hidden
    )


def _corpus(terms: Iterable[str], user: str) -> tuple[CorpusStats, RecallQuery]:
    """The CorpusStats the candidate stage counts for a query holding ``terms``."""
    query = normalize_recall_query(
        " ".join(terms),
        user_scope=user_scope_for(user),
        limit=10,
        query_id="q-10-idf",
        issued_at=COURSE_AS_OF,
    )
    candidates = build_recall_candidates(query, course_records(user))
    assert candidates.corpus is not None
    return candidates.corpus, query


def idf_frame(terms: Sequence[str], user: str = MEI) -> pd.DataFrame:
    """Per term: in how many of the user's searched records it occurs, and its idf."""
    corpus, query = _corpus(terms, user)
    rows = [
        {
            "term": term,
            "records_with_term": corpus.document_frequency.get(term, 0),
            "records": corpus.documents,
            "idf": round(idf(term, corpus), 6),
        }
        for term in query.terms
    ]
    return pd.DataFrame(rows).sort_values(
        ["idf", "term"], ascending=[False, True], ignore_index=True
    )


@with_chart_fonts
def idf_figure(frame: pd.DataFrame, *, title: str = "") -> Figure:
    """Horizontal bars of idf per term (rarest on top), labelled with df / N."""
    data = frame.iloc[::-1]
    fig, ax = plt.subplots(figsize=(7.0, 0.32 * len(data) + 1.2))
    ax.barh(list(data["term"]), list(data["idf"]), color="#3182bd")
    for y, row in enumerate(data.to_dict("records")):
        ax.text(
            row["idf"] + 0.03,
            y,
            f"in {row['records_with_term']} of {row['records']}",
            va="center",
            fontsize=8,
        )
    ax.set_xlim(0, max(frame["idf"]) * 1.3)
    ax.set_xlabel("idf = ln(1 + (N - df + 0.5) / (df + 0.5))")
    ax.set_title(title or "how much one matched term is worth to BM25", fontsize=10)
    fig.tight_layout()
    return fig


# -- 2. length normalization ---------------------------------------------------------------


def length_frame(user: str = MEI, *, k1: float = 1.2, b: float = 0.75) -> pd.DataFrame:
    """The user's record lengths (terms) and what one occurrence of a term is worth at the
    shortest, average and longest length (the factor BM25 multiplies idf by)."""
    lengths = sorted(sum(record_term_counts(r).values()) for r in _searched(user))
    average = sum(lengths) / len(lengths)
    rows = []
    for label, length in (("shortest", lengths[0]), ("average", average), ("longest", lengths[-1])):
        rows.append(
            {
                "record": label,
                "length_terms": round(length, 2),
                "tf=1, b=0.75": round(bm25_term_weight(1, length, average, k1, b), 6),
                "tf=1, b=0": round(bm25_term_weight(1, length, average, k1, 0.0), 6),
                "tf=3, b=0.75": round(bm25_term_weight(3, length, average, k1, b), 6),
            }
        )
    return pd.DataFrame(rows)


@with_chart_fonts
def length_figure(user: str = MEI, *, k1: float = 1.2, b: float = 0.75) -> Figure:
    """BM25's factor tf*(k1+1)/(tf + k1*(1-b+b*len/avg)) against record length."""
    lengths = sorted(sum(record_term_counts(r).values()) for r in _searched(user))
    average = sum(lengths) / len(lengths)
    xs = [10 + i for i in range(0, 141)]
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    for tf, color in ((1, "#3182bd"), (2, "#6baed6"), (3, "#9ecae1")):
        ax.plot(
            xs,
            [bm25_term_weight(tf, x, average, k1, b) for x in xs],
            color=color,
            label=f"tf = {tf}, b = {b:g}",
        )
        ax.plot(
            xs,
            [bm25_term_weight(tf, x, average, k1, 0.0) for x in xs],
            color=color,
            linestyle="--",
            linewidth=1,
            label=f"tf = {tf}, b = 0 (no length norm.)",
        )
    ax.axvline(average, color="grey", linestyle=":", linewidth=1)
    ax.text(average + 1, 0.08, f"average length {average:.1f}", fontsize=8, color="grey")
    ax.plot(
        lengths,
        [0.02] * len(lengths),
        "|",
        color="black",
        markersize=8,
        label=f"{len(lengths)} records of the store",
    )
    ax.set_ylim(0, k1 + 1.05)
    ax.set_xlabel("record length (terms in summary + content)")
    ax.set_ylabel("weight of the term (x idf)")
    ax.set_title(
        f"BM25 length normalization (k1 = {k1:g}): the same match counts less in a longer record",
        fontsize=10,
    )
    ax.legend(fontsize=7, frameon=False, ncol=2, loc="upper right")
    fig.tight_layout()
    return fig


# -- 3. the comparison -------------------------------------------------------------------------


def comparison_frame(report: EvalReport) -> pd.DataFrame:
    """The CLI's table as a frame (one row per split and scorer)."""
    rows = []
    for row in report.rows:
        rows.append(
            {
                "split": row.split,
                "scorer": row.scorer,
                "queries": row.answerable,
                **{metric: row.metric(metric) for metric in METRICS},
                "abstain": f"{row.abstained}/{row.no_relevant}",
                "empty": f"{row.empty_answerable}/{row.answerable}",
            }
        )
    return pd.DataFrame(rows)


@with_chart_fonts
def metrics_figure(report: EvalReport) -> Figure:
    """Grouped bars: each metric (x) per scorer (colour), one panel per split."""
    fig, axes = plt.subplots(1, len(report.splits), figsize=(9.0, 3.6), sharey=True, squeeze=False)
    names = [s.name for s in report.scorers]
    width = 0.8 / len(names)
    for ax, split in zip(axes[0], report.splits, strict=True):
        for i, name in enumerate(names):
            row = report.row(split, name)
            xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(METRICS))]
            ax.bar(
                xs,
                [row.metric(m) for m in METRICS],
                width,
                color=SCORER_COLORS.get(name, _YOURS_COLOR),
                label=name,
            )
        answerable = report.row(split, names[0]).answerable
        ax.set_title(f"{split} ({answerable} answerable queries)", fontsize=10)
        ax.set_xticks(range(len(METRICS)), METRICS)
        ax.set_ylim(0, 1)
        ax.grid(axis="y", linewidth=0.4, alpha=0.6)
    axes[0][0].set_ylabel("mean over answerable queries")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, frameon=False, loc="lower center", ncol=len(names))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def per_query_frame(report: EvalReport, *, metric: str = "ndcg_at_10") -> pd.DataFrame:
    """One row per answerable query, one column per scorer (``metric``, rounded to 3), plus
    ``bm25 - coverage``. Sorted by query_id; sort and filter it as you like."""
    table: dict[str, dict[str, object]] = {}
    for o in report.outcomes:
        if not o.answerable:
            continue
        row = table.setdefault(
            o.query_id,
            {
                "query_id": o.query_id,
                "split": o.split,
                "category": o.category,
                "language": o.language,
                "text": o.text,
            },
        )
        row[o.scorer] = round(getattr(o, metric), 3)
    frame = pd.DataFrame(sorted(table.values(), key=lambda r: str(r["query_id"])))
    if {"bm25", "coverage"} <= set(frame.columns):
        frame["bm25 - coverage"] = (frame["bm25"] - frame["coverage"]).round(3)
    return frame


def category_frame(report: EvalReport, *, split: str | None = None) -> pd.DataFrame:
    """Mean nDCG@10 per category (rows) and scorer (columns), answerable queries only."""
    frame = per_query_frame(report)
    if split is not None:
        frame = frame[frame["split"] == split]
    names = [s.name for s in report.scorers]
    grouped = frame.groupby("category")[names].mean().round(3)
    grouped.insert(0, "queries", frame.groupby("category").size())
    return grouped.sort_index()


def _top(outcome, n: int = 3) -> str:
    return (
        ", ".join(f"{m} ({g})" for m, g in zip(outcome.hits[:n], outcome.grades[:n], strict=True))
        or "-"
    )


def stale_vs_fresh_frame(
    report: EvalReport, *, scorers: Sequence[str] = ("bm25", "bm25+recency")
) -> pd.DataFrame:
    """The ``stale_vs_fresh`` queries where the two scorers' nDCG@10 differ: both values,
    the change, and each top 3 as ``memory_id (grade)``."""
    first, second = scorers
    by = {(o.query_id, o.scorer): o for o in report.outcomes}
    queries = {q.query_id: q for q in load_eval_queries()}
    rows = []
    for (query_id, scorer), o in sorted(by.items()):
        if scorer != first or o.category != "stale_vs_fresh" or not o.answerable:
            continue
        other = by[(query_id, second)]
        if round(other.ndcg_at_10 - o.ndcg_at_10, 3) == 0:
            continue
        rows.append(
            {
                "query_id": query_id,
                "text": o.text,
                "as_of": queries[query_id].as_of[:10],
                first: round(o.ndcg_at_10, 3),
                second: round(other.ndcg_at_10, 3),
                "change": round(other.ndcg_at_10 - o.ndcg_at_10, 3),
                f"top 3 {first}": _top(o),
                f"top 3 {second}": _top(other),
            }
        )
    return pd.DataFrame(rows)


# -- 4. knowing when nothing is relevant -------------------------------------------------------


def no_relevant_frame(report: EvalReport) -> pd.DataFrame:
    """The no_relevant queries: hits per scorer (0 = abstained) and bm25's top hit."""
    table: dict[str, dict[str, object]] = {}
    for o in report.outcomes:
        if o.answerable:
            continue
        row = table.setdefault(
            o.query_id, {"query_id": o.query_id, "split": o.split, "text": o.text}
        )
        row[o.scorer] = len(o.hits)
        if o.scorer == "bm25":
            row["bm25 top hit"] = o.hits[0] if o.hits else "-"
    return pd.DataFrame(sorted(table.values(), key=lambda r: (r["split"], r["query_id"])))


def evidence_example_frame(
    engine: RecallEngine,
    text: str,
    *,
    query_id: str,
    min_evidence: float,
    as_of: str = COURSE_AS_OF,
) -> pd.DataFrame:
    """The same query under bm25 and under bm25 with ``min_evidence``: its terms, counts,
    hits, ``empty_reason``, and the highest evidence any candidate has."""
    rows = []
    for label, policy in (
        ("bm25", ScoringPolicy.bm25()),
        (f"bm25, min_evidence {min_evidence:g}", ScoringPolicy.bm25(min_evidence=min_evidence)),
    ):
        result: RecallResult = engine.recall(
            text, limit=10, as_of=as_of, query_id=query_id, policy=policy
        )
        candidates = build_recall_candidates(result.query, engine.store.read_all())
        assert candidates.corpus is not None
        best = max(
            (evidence(result.query, c, candidates.corpus) for c in candidates.candidates),
            default=0.0,
        )
        rows.append(
            {
                "policy": label,
                "terms": ", ".join(result.query.terms),
                "candidates": result.candidate_records,
                "hits": len(result.hits),
                "empty_reason": result.empty_reason or "-",
                "best evidence": round(best, 6),
            }
        )
    return pd.DataFrame(rows)


def tuning_frame(curve: Sequence[dict[str, object]]) -> pd.DataFrame:
    return pd.DataFrame(list(curve))


@with_chart_fonts
def tuning_figure(curve: Sequence[dict[str, float]], chosen: float) -> Figure:
    """Dev nDCG@10 (bm25), abstention and the tuning objective against min_evidence."""
    xs = [p["min_evidence"] for p in curve]
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    ax.plot(
        xs,
        [p["bm25 nDCG@10"] for p in curve],
        "o-",
        color="#3182bd",
        markersize=3,
        label="nDCG@10, answerable dev queries",
    )
    ax.plot(
        xs,
        [p["abstained"] / p["no_relevant"] for p in curve],
        "s-",
        color="#e6550d",
        markersize=3,
        label="abstain rate, no_relevant dev queries",
    )
    ax.plot(
        xs,
        [p["empty answerable"] / p["answerable"] for p in curve],
        ":",
        color="#636363",
        label="share of answerable dev queries left empty",
    )
    ax.plot(
        xs,
        [p["objective"] for p in curve],
        "--",
        color="black",
        linewidth=1.2,
        label="objective: mean of nDCG@10 and abstain rate",
    )
    ax.axvline(chosen, color="black", linewidth=0.8, linestyle=":")
    ax.text(chosen + 0.01, 1.02, f"chosen on dev: {chosen:g}", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("min_evidence (share of the query's idf a hit must match)")
    ax.set_title("the evidence threshold on the dev split (bm25)", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.tight_layout()
    return fig


# -- 5. what vector recall would add --------------------------------------------------------------


def candidate_ceiling_frame(queries: Sequence[EvalQuery] | None = None) -> pd.DataFrame:
    """Per category: answerable queries, and how many have NO relevant record among their
    lexical candidates. No ``score=`` function can rank a record that is not a candidate."""
    rows: dict[str, dict[str, int]] = {}
    for query in load_eval_queries() if queries is None else queries:
        if not query.answerable:
            continue
        records = course_records(query.user_id)
        normalized = normalize_recall_query(
            query.text,
            user_scope=user_scope_for(query.user_id),
            limit=10,
            query_id=query.query_id,
            issued_at=query.as_of,
        )
        pool = {c.record.memory_id for c in build_recall_candidates(normalized, records).candidates}
        relevant = {m for m, g in query.judgments.items() if g >= RELEVANT_GRADE}
        row = rows.setdefault(query.category, {"answerable": 0, "no relevant candidate": 0})
        row["answerable"] += 1
        row["no relevant candidate"] += not (relevant & pool)
    frame = pd.DataFrame.from_dict(rows, orient="index").sort_index()
    frame.index.name = "category"
    frame.loc["all"] = frame.sum()
    return frame


# -- your turn ----------------------------------------------------------------------------------


def _idf_scorer(
    *,
    name: str = "idf_coverage",
    lexical: str = "idf",
    coverage: str = "share",
    policy_used: bool = True,
    policy_reported: bool = True,
    window_used: bool = True,
    weighted: bool = True,
) -> Callable[..., RecallScoreBreakdown]:
    """The exercise's answer (idf-weighted coverage plus the policy's recency), or, with
    one keyword changed, a typical wrong one (each keyword names the rule it breaks)."""

    def score(query, candidate, *, as_of, policy, corpus) -> RecallScoreBreakdown:
        weight = {term: idf(term, corpus) for term in query.terms}
        matched = sum(weight[t] for t in candidate.matched_terms)
        share = len(candidate.matched_terms) / len(query.terms)
        lexical_score = {
            "idf": matched / sum(weight.values()),
            "coverage": share,
            "matched": matched,
            "per_term": matched / len(query.terms),
        }[lexical]
        chapter = ScoringPolicy()
        used = policy if policy_used else chapter
        window = used.recency_window_days if window_used else chapter.recency_window_days
        recency = recency_score(age_in_days(candidate.captured_at, as_of), window)
        lexical_part = used.lexical_weight * lexical_score if weighted else lexical_score
        recency_part = used.recency_weight * recency if weighted else recency
        reported = used if policy_reported else chapter
        return RecallScoreBreakdown(
            matched_terms=candidate.matched_terms,
            query_term_count=len(query.terms),
            lexical_coverage=round(lexical_score if coverage == "idf" else share, 6),
            recency=round(recency, 6),
            lexical_contribution=round(lexical_part, 6),
            recency_contribution=round(recency_part, 6),
            total=round(lexical_part + recency_part, 6),
            lexical_weight=reported.lexical_weight,
            recency_weight=reported.recency_weight,
            recency_window_days=reported.recency_window_days,
            scorer=name,
            lexical_score=round(lexical_score, 6),
        )

    return score


_FIELDS = (
    "scorer",
    "matched_terms",
    "query_term_count",
    "lexical_coverage",
    "lexical_score",
    "recency",
    "lexical_weight",
    "recency_weight",
    "recency_window_days",
    "lexical_contribution",
    "recency_contribution",
    "total",
)


def _read(result: object, call: Call) -> dict[str, object]:
    if not isinstance(result, RecallScoreBreakdown):
        raise Malformed(
            f"return a RecallScoreBreakdown, not {type(result).__name__}: the ranking stage "
            "reads its total, coverage and the rest"
        )
    if result.lexical_score is None:
        raise Malformed(
            "lexical_score is None: set it to the idf-weighted share you computed (it is what "
            "lexical_contribution weighs)"
        )
    fields = {name: getattr(result, name) for name in _FIELDS}
    for name, value in fields.items():
        if isinstance(value, float) and round(value, 6) != value:
            raise Malformed(f"{name} {value!r} is not rounded: round every float to 6 places")
    return fields


def _show(fields: dict[str, object]) -> str:
    return ", ".join(f"{name} {fields[name]!r}" for name in _FIELDS if name != "matched_terms")


@functools.cache
def _words(user: str) -> st.SearchStrategy[list[str]]:
    """1-3 distinct words of ``user``'s searched records (so there are candidates)."""
    vocabulary = sorted({t for r in _searched(user) for t in record_term_counts(r)})
    return st.lists(st.sampled_from(vocabulary), min_size=1, max_size=3, unique=True)


@functools.cache
def _found(text: str, user: str, as_of: str) -> CandidateSet:
    query = normalize_recall_query(
        text, user_scope=user_scope_for(user), limit=10, query_id="q-10-check", issued_at=as_of
    )
    return build_recall_candidates(query, course_records(user))


def _case(text: str, user: str, as_of: str, memory_id: str, policy: ScoringPolicy) -> Call:
    found = _found(text, user, as_of)
    query = normalize_recall_query(
        text, user_scope=user_scope_for(user), limit=10, query_id="q-10-check", issued_at=as_of
    )
    (candidate,) = [c for c in found.candidates if c.record.memory_id == memory_id]
    moment = parse_timestamp(as_of, "as_of")
    return Call(query, candidate, as_of=moment, policy=policy, corpus=found.corpus)


_POLICIES = st.sampled_from(
    (ScoringPolicy(), ScoringPolicy(0.7, 0.3, 14.0), ScoringPolicy(0.5, 0.5, 90.0))
)
_CLOCKS = st.sampled_from((COURSE_AS_OF, "2026-06-01T00:00:00Z", "2026-03-15T12:30:00Z"))


@st.composite
def _calls(draw: st.DrawFn) -> Call:
    """Words of a user's own records (so there are candidates) and "the", another clock
    and policy than the chapter's, one of the candidates."""
    user = draw(st.sampled_from(COURSE_USERS))
    text, as_of = " ".join([*draw(_words(user)), "the"]), draw(_CLOCKS)
    found = _found(text, user, as_of)
    memory_id = draw(st.sampled_from([c.record.memory_id for c in found.candidates]))
    return _case(text, user, as_of, memory_id, draw(_POLICIES))


def _show_call(name: str, call: Call) -> str:
    query, candidate = call.args
    policy = call.kwargs["policy"]
    return (
        f"{name}(query, candidate, as_of, policy, corpus) with query {query.text!r} (terms "
        f"{', '.join(query.terms)}) on {candidate.record.memory_id} (matching "
        f"{', '.join(candidate.matched_terms)}), as_of {call.kwargs['as_of']:%Y-%m-%d %H:%M}, "
        f"policy {policy.lexical_weight:g} / {policy.recency_weight:g}, "
        f"{policy.recency_window_days:g} days"
    )


MY_SCORE = FunctionExercise(
    function="my_score",
    reference=_idf_scorer(),
    examples=(
        Named(
            "section 1's 'the bigram' on mei-conv-060",
            _case("the bigram", MEI, COURSE_AS_OF, "mei-conv-060", ScoringPolicy()),
        ),
        Named(
            "section 1's 'the bigram' on mei-conv-069",
            _case("the bigram", MEI, COURSE_AS_OF, "mei-conv-069", ScoringPolicy()),
        ),
        Named(
            "a Chinese query on mei-conv-016",
            _case("上下文预算", MEI, COURSE_AS_OF, "mei-conv-016", ScoringPolicy()),
        ),
    ),
    cases=_calls(),
    read=_read,
    show=_show,
    show_call=_show_call,
    mistakes=(
        Mistake(
            "the scorer is not named",
            "Name your scorer: scorer='idf_coverage' (the default, 'coverage', claims to be "
            "the chapter's scorer).",
            _idf_scorer(name="coverage"),
        ),
        Mistake(
            "lexical_coverage holds the idf share",
            "lexical_coverage stays the chapter's share of matched terms (the stable rank's "
            "second key); put your idf share in lexical_score.",
            _idf_scorer(coverage="idf"),
        ),
        Mistake(
            "plain coverage",
            "That is plain coverage: every term weighs the same. Weigh each term by "
            "idf(term, corpus).",
            _idf_scorer(lexical="coverage"),
        ),
        Mistake(
            "the matched idf not divided",
            "Divide the matched terms' idf by the idf of all query terms (a 0..1 share).",
            _idf_scorer(lexical="matched"),
        ),
        Mistake(
            "divided by the number of terms",
            "Divide by the query terms' total idf, not by their number: a rare term must count "
            "more than 'the'.",
            _idf_scorer(lexical="per_term"),
        ),
        Mistake(
            "the chapter's policy, not this one",
            "Use the policy you are given (policy.lexical_weight, policy.recency_weight, "
            "policy.recency_window_days), not the chapter's 0.85 / 0.15 and 30 days.",
            _idf_scorer(policy_used=False),
        ),
        Mistake(
            "a 30-day window",
            "recency = recency_score(age_in_days(candidate.captured_at, as_of), "
            "policy.recency_window_days): the policy's window, not 30.",
            _idf_scorer(window_used=False),
        ),
        Mistake(
            "the policy not reported",
            "Report the weights and window you used: lexical_weight=policy.lexical_weight, "
            "recency_weight=policy.recency_weight, recency_window_days=policy.recency_window_days.",
            _idf_scorer(policy_reported=False),
        ),
        Mistake(
            "contributions not weighted",
            "lexical_contribution = policy.lexical_weight × lexical_score and recency_contribution "
            "= policy.recency_weight × recency; the total is their sum.",
            _idf_scorer(weighted=False),
        ),
    ),
    generated=40,  # each case runs the candidate stage over a user's records
)


def check_my_score(answer: object) -> CheckResult:
    """Build-it check: ``answer(query, candidate, *, as_of, policy, corpus)`` must return
    the idf_coverage breakdown on the named candidates and on generated ones (other users,
    clocks and policies)."""
    return check_value(
        answer,
        lambda function: check_function(MY_SCORE, function),
        placeholder="a scoring function (fill in the body of my_score)",
    )


def evaluate_yours(
    my_score: Callable[..., RecallScoreBreakdown],
    stores: CourseStores,
    *,
    split: str = "dev",
) -> tuple[pd.DataFrame, str]:
    """coverage, bm25 and yours on ``split``, with the CLI's code; (frame, table text).

    Yours is left out, with a note, until ``check_my_score`` accepts it.
    """
    scorers = [s for s in standard_scorers() if s.name in ("coverage", "bm25")]
    verdict = check_my_score(my_score)
    note = f"yours is not evaluated yet: {verdict.message}"
    if verdict.is_right:
        scorers.append(Scorer("yours", score=my_score, note="my_score"))
        note = "yours: my_score, run by the same evaluate() as python -m memorylib eval"
    try:
        report = evaluate(scorers, splits=(split,), stores=stores)
    except ScoringFunctionError as exc:  # right on the checks, failing on the set
        report = evaluate(scorers[:2], splits=(split,), stores=stores)
        note = f"yours failed: {exc}"
    return comparison_frame(report), format_table(report) + "\n\n" + note
