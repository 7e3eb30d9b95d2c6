"""Notebook 09's "Your turn" checker: ``check_restated_query`` (a checker in the notebook would
show its answer). The notebook runs the agent loop in its own cells."""

from __future__ import annotations

import json
from collections.abc import Iterable

from memorylib.engine import RecallEngine
from memorylib.notebook.exercises import CheckResult, check_value, right, wrong
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query
from memorylib.records import MemoryKind, MemorySource, StoredMemory
from memorylib.tool import RESTATE_RULE, run_recall_tool

__all__ = [
    "ANSWER_PREFIX",
    "EXERCISE_ANSWER_TERMS",
    "EXERCISE_QUESTION",
    "EXERCISE_TARGET",
    "answer_forms",
    "check_restated_query",
]

# The last message of the chat notebook 09 prints: it points back at "those", which only the
# earlier turns explain. The search sees none of the chat.
EXERCISE_QUESTION = "Yes: remind me which file format we settled on for those, and why?"
EXERCISE_TARGET = "conversation-001"

# The answer (the format conversation-001 chose, and why), which the model cannot know before
# recall: a query term is refused when it shares its first ANSWER_PREFIX letters with one of
# these words (json, appended, crashes) or is one of their irregular forms (torn). The
# notebook states this rule without printing the words.
EXERCISE_ANSWER_TERMS = ("jsonl", "append", "crash", "tear")
ANSWER_PREFIX = 4


def answer_forms(terms: Iterable[str]) -> list[str]:
    """The ``terms`` (normalized query terms) that are a form of a word of the answer."""
    prefixes = {word[:ANSWER_PREFIX] for word in EXERCISE_ANSWER_TERMS}
    return [
        t
        for t in terms
        if t in ("tore", "torn") or (len(t) >= ANSWER_PREFIX and t[:ANSWER_PREFIX] in prefixes)
    ]


# Two records the notebook never shows, each sharing one word of the topic and newer than
# the target: a query that names only part of the topic ranks one of them first.
_UNSEEN = {
    "support-calls-001": ("Support call transcripts are kept for 90 days.", "2026-08-01T09:00:00Z"),
    "session-tokens-001": ("Session tokens expire after twelve hours.", "2026-07-30T10:00:00Z"),
}


def _with_unseen(engine: RecallEngine) -> list[StoredMemory]:
    scope = engine.store.user_scope
    return [*engine.store.read_all()] + [
        StoredMemory(
            memory_id=memory_id,
            user_scope=scope,
            kind=MemoryKind.CONVERSATION,
            content=text,
            summary=text,
            source=MemorySource(f"transcript-{memory_id}", "conversation_transcript", text, at),
            stored_at=at,
        )
        for memory_id, (text, at) in _UNSEEN.items()
    ]


def check_restated_query(answer: object, engine: RecallEngine, *, as_of: str) -> CheckResult:
    """Self-check: does ``answer``, sent as the tool's query, rank EXERCISE_TARGET first,
    without naming the answer (``answer_forms``), on the notebook's store AND on that store
    with two unseen records that share part of the topic?"""

    def judge(query: str) -> CheckResult:
        text, is_error = run_recall_tool(
            {"query": query, "limit": 3}, engine=engine, as_of=as_of, query_id="q-09-your-turn"
        )
        data = json.loads(text)
        if is_error:
            error = data["error"]
            return wrong(f"The tool rejected it ({error['type']}): {error['message']}")
        if leaked := answer_forms(data["query"]["terms"]):
            return wrong(
                f"Not yet: {', '.join(repr(t) for t in leaked)} "
                f"{'is a form' if len(leaked) == 1 else 'are forms'} of a word of the record's "
                "answer, not of the question. The model recalls because it does not know which "
                f"format was picked or why: the query must {RESTATE_RULE}."
            )
        if not (hits := data["hits"]):
            return wrong(
                f"No hits for {query!r}: the {data['searched_records']} records share none of "
                f"its terms {data['query']['terms']}. Retrieval cannot see the chat and does not "
                "stem (another form of a word is another term): the query must "
                f"{RESTATE_RULE}."
            )
        if (top := hits[0])["memory_id"] != EXERCISE_TARGET:
            return wrong(
                f"The top hit is {top['memory_id']} ({top['source']['title']!r}), not the "
                "decision the student means. 'those' points back into the chat: name what it "
                "stands for, rather than words that other decisions share."
            )
        again = normalize_recall_query(
            query, user_scope=engine.store.user_scope, limit=3, query_id="q-09-unseen"
        )
        unseen = recall_pipeline(again, _with_unseen(engine), as_of=as_of).hits[0]
        if unseen.memory_id != EXERCISE_TARGET:
            return wrong(
                f"On this notebook's store {EXERCISE_TARGET} ranks first, but add two records "
                "the notebook never showed (support call transcripts kept 90 days; session "
                f"tokens expiring) and {unseen.memory_id} ({unseen.snippet!r}) overtakes it: "
                "your query names only part of the topic. Name the whole of it."
            )
        return right(
            f"{EXERCISE_TARGET} ranks first (total {top['score']:.6f}, matched "
            f"{top['score_breakdown']['matched_terms']}), and still does beside two unseen "
            "records on neighbouring topics: the query restates what 'those' meant, without "
            "the answer and without the chat."
        )

    return check_value(
        answer,
        judge,
        placeholder="the query string the model should send",
        kind=str,
        described="a str (the query the model sends)",
    )
