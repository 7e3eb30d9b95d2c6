"""Notebook 09's "Your turn" checker, ``check_restated_query``, off screen (it shows the answer)."""

import json
from collections.abc import Iterable

from memorylib.engine import RecallEngine
from memorylib.notebook.exercises import CheckResult, check_value, right, wrong
from memorylib.notebook.messages import say
from memorylib.pipeline import recall_pipeline
from memorylib.query import normalize_recall_query
from memorylib.records import MemoryKind, MemorySource, StoredMemory
from memorylib.tool import RESTATE_RULE, run_recall_tool

# The chat's last message, which points back at "those": only the earlier turns say what.
EXERCISE_QUESTION = "Yes: remind me which file format we settled on for those, and why?"
EXERCISE_TARGET = "conversation-001"

# The answer, which the model cannot know before recall: a query term is refused when it
# shares its first ANSWER_PREFIX letters with one of these words (json, appended, crashes) or
# is an irregular form (torn). The notebook states the rule without the words.
EXERCISE_ANSWER_TERMS = ("jsonl", "append", "crash", "tear")
ANSWER_PREFIX = 4

# Two records the notebook never shows, newer than the target and each sharing one word of
# the topic: a query naming only part of the topic ranks one of them first.
_UNSEEN = {
    "support-calls-001": ("Support call transcripts are kept for 90 days.", "2026-08-01T09:00:00Z"),
    "session-tokens-001": ("Session tokens expire after twelve hours.", "2026-07-30T10:00:00Z"),
}


def answer_forms(terms: Iterable[str]) -> list[str]:
    """The ``terms`` (normalized query terms) that are a form of a word of the answer."""
    prefixes = {word[:ANSWER_PREFIX] for word in EXERCISE_ANSWER_TERMS}
    return [t for t in terms if t in ("tore", "torn") or t[:ANSWER_PREFIX] in prefixes]


def _with_unseen(engine: RecallEngine) -> list[StoredMemory]:
    records, scope = [*engine.store.read_all()], engine.store.user_scope
    for id_, (text, at) in _UNSEEN.items():
        source = MemorySource(f"transcript-{id_}", "conversation_transcript", text, at)
        records.append(StoredMemory(id_, scope, MemoryKind.CONVERSATION, text, text, source, at))
    return records


def check_restated_query(answer: object, engine: RecallEngine, *, as_of: str) -> CheckResult:
    """Does the tool query ``answer`` rank EXERCISE_TARGET first without naming the answer?"""

    def judge(query: str) -> CheckResult:
        ask = {"query": query, "limit": 3}
        text, is_error = run_recall_tool(ask, engine=engine, as_of=as_of, query_id="q-09-your-turn")
        data = json.loads(text)
        if is_error:
            return wrong(say("live_agent.rejected", **data["error"]))
        if leaked := answer_forms(terms := data["query"]["terms"]):
            many = "many" if len(leaked) > 1 else "one"
            shown = ", ".join(map(repr, leaked))
            return wrong(say(f"live_agent.leaked.{many}", terms=shown, rule=RESTATE_RULE))
        if not (hits := data["hits"]):
            facts = {"n": data["searched_records"], "terms": terms, "rule": RESTATE_RULE}
            return wrong(say("live_agent.no_hits", query=query, **facts))
        if (top := hits[0])["memory_id"] != EXERCISE_TARGET:
            return wrong(say("live_agent.top", id=top["memory_id"], title=top["source"]["title"]))
        again = normalize_recall_query(query, user_scope=engine.store.user_scope, limit=3)
        unseen = recall_pipeline(again, _with_unseen(engine), as_of=as_of).hits[0]
        if unseen.memory_id != EXERCISE_TARGET:
            found = {"id": unseen.memory_id, "snippet": unseen.snippet}
            return wrong(say("live_agent.unseen", target=EXERCISE_TARGET, **found))
        score, matched = top["score"], top["score_breakdown"]["matched_terms"]
        return right(say("live_agent.right", target=EXERCISE_TARGET, score=score, matched=matched))

    placeholder, described = say("live_agent.placeholder"), say("live_agent.described")
    return check_value(answer, judge, placeholder=placeholder, kind=str, described=described)
