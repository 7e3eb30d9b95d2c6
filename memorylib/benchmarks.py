"""Two public benchmarks of conversational memory, recalled through the real engine.

``python -m memorylib eval --benchmark locomo PATH`` or ``--benchmark madial PATH`` reads a
folder in one of the two published formats, writes real ``RemoteMemoryStore`` files with
``append_many`` in a temporary folder, and asks every question with
``RecallEngine(store, policy=policy).recall(text, limit=10, as_of=..., query_id=...)``
(the default "indexed" strategy) once per named configuration. Relevance is binary: every
evidence or relevant id is graded 2 (``RELEVANT_GRADE``), the rest 0, so nDCG@10 has
binary gains. Each row is the mean over its questions of recall@5, recall@10, hit@10,
reciprocal rank (MRR) and nDCG@10, rounded to 3 places.

LoCoMo (Maharana et al., ACL 2024; a file holds one conversation object or a list of
them, flat or with a ``conversation`` sub-object beside ``qa``, as in ``locomo10.json``):

* one store per conversation; one CONVERSATION record per dialog turn: memory_id =
  ``dia_id``, content = ``"Speaker: text"`` plus ``" [image: caption]"`` when the turn
  shared a photo (it has a ``blip_caption``), summary = the speaker's name, one
  ``source_id`` per session, captured_at = the session's date-time (``"1:56 pm on 8 May,
  2023"``, read as UTC) plus the turn's position in the session in seconds (0, 1, 2, ...),
  so turns are ordered;
* every question is recalled at one day after the start of the conversation's latest
  session that has turns (a date-time without turns is ignored);
* evidence strings are repaired: split on ';' and whitespace, leading zeros dropped
  (``"D30:05"`` -> D30:5), a stray colon after the D accepted (``"D:11:26"`` -> D11:26).
  A piece that is not a turn id, or names no turn of the conversation, is dropped and
  reported; a question left without evidence is skipped and reported;
* categories 1-4 (multi-hop, temporal, open-domain, single-hop) are scored on their
  evidence turns, one row each and "overall (1-4)"; category 5 (adversarial: the answer
  is that it was never said) is scored the same way but reported apart, never in the
  overall row.

MADial-Bench (He et al., NAACL 2025; ``data/<lang>/MADial-Bench-<code>-memory.json`` and
``-dialogue.json``, ``embeddings/<lang>/<Name>_<code>_top_20_ids.json``, JSON lines):

* one store per user; one CONVERSATION record per memory: memory_id = its id, content =
  the event, summary = its scene and emotion, captured_at = its date at 12:00 UTC;
* the query of a dialogue is its ``dialog_history`` from a published list file when one
  is present, else ``''.join(dialogue[:test-turn[0]])``; one longer than 2,000 characters
  (recall's limit) keeps its last 2,000, the turns nearest the test turn (reported);
  relevant = its ``relevant-id``. The dialogues carry no date: every one is recalled at
  one clock, 1 January of the year after the archive's newest memory (2025-01-01T00:00:00Z
  for the Chinese archive, whose newest memory is of 2024-10-23), the same for every user.
  The clock matters to the scorers with recency: a dialogue history has hundreds of terms,
  so coverage's lexical part is small and recency decides much of its ranking;
* each published top-20 list, cut at 10, is scored the same way as a row
  ``published:<Name>`` beside ours (a dialogue it has no list for scores as empty).

A question whose text recall refuses (no searchable term, too long) is skipped and
reported, as is anything else left out; a folder or file that is not in the format raises
``BenchmarkDataError`` naming the file and the item. Everything is deterministic: fixed
query ids, fixed clocks, records stored in file order.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from .checks import require
from .engine import RecallEngine
from .errors import RemoteMemoryError, RemoteMemoryValidationError
from .metrics import RELEVANT_GRADE, hit_at_k, mean, ndcg_at_k, recall_at_k, reciprocal_rank
from .query import MAX_QUERY_CHARS, normalize_recall_query
from .records import MemoryKind, MemorySource
from .scoring import ScoringPolicy
from .store import RemoteMemoryStore
from .timestamps import format_timestamp, parse_timestamp

__all__ = [
    "BENCHMARKS",
    "DEPTH",
    "LOCOMO_CATEGORIES",
    "METRICS",
    "PUBLISHED_PREFIX",
    "Benchmark",
    "BenchmarkDataError",
    "BenchmarkQuery",
    "BenchmarkReport",
    "BenchmarkRow",
    "Note",
    "QueryScore",
    "format_report",
    "load_benchmark",
    "load_locomo",
    "load_madial",
    "parse_evidence",
    "parse_locomo_datetime",
    "report_json",
    "run_benchmark",
    "score_ranking",
]

BENCHMARKS = ("locomo", "madial")
DEPTH = 10  # every question is recalled with limit 10; published lists are cut here
METRICS = ("recall@5", "recall@10", "hit@10", "MRR", "nDCG@10")
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
PUBLISHED_PREFIX = "published:"
_MADIAL_CATEGORY = "dialogue"


class BenchmarkDataError(RemoteMemoryValidationError):
    """A benchmark folder or file is missing or not in its format; the message names it."""


# -- what a loader returns --------------------------------------------------------------------


@dataclass(frozen=True)
class BenchmarkQuery:
    """One question: asked of store ``store`` at ``as_of``; ``relevant`` ids are graded 2."""

    query_id: str
    store: str
    text: str
    as_of: str
    category: str
    relevant: tuple[str, ...]


@dataclass(frozen=True)
class Note:
    """Something left out (a skipped question) or repaired (an evidence string), and why."""

    item: str
    reason: str


@dataclass(frozen=True)
class Benchmark:
    """A folder read: the stores to build (key -> ``append_many`` entries, in order), the
    questions, the row groups (label -> categories), published rankings (run name ->
    query_id -> memory ids), what was skipped and what was repaired."""

    name: str
    source: str
    stores: Mapping[str, tuple[Mapping[str, Any], ...]]
    queries: tuple[BenchmarkQuery, ...]
    groups: tuple[tuple[str, tuple[str, ...]], ...]
    published: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    skipped: tuple[Note, ...] = ()
    repaired: tuple[Note, ...] = ()

    @property
    def records(self) -> int:
        return sum(len(entries) for entries in self.stores.values())


def _fail(where: str, message: str) -> BenchmarkDataError:
    return BenchmarkDataError(f"{where}: {message}")


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"expected a non-empty string, got {value!r:.60}")
    return value


def _entry(memory_id: str, content: str, summary: str, source: MemorySource) -> dict[str, Any]:
    return {
        "kind": MemoryKind.CONVERSATION,
        "memory_id": memory_id,
        "content": content,
        "summary": summary,
        "source": source,
        "stored_at": source.captured_at,  # a fixed clock: the same folder, the same bytes
    }


def _accepted(text: object, where: str, skipped: list[Note]) -> str | None:
    """``text`` if recall accepts it as a query (the reference normalizer decides: a str
    with a searchable term, at most 2,000 characters), else None and a skip noted."""
    try:
        normalize_recall_query(text, user_scope="benchmark", limit=DEPTH, query_id="check")
    except RemoteMemoryValidationError as exc:
        skipped.append(Note(where, f"recall refuses the text: {exc}"))
        return None
    return text  # type: ignore[return-value]  # a str: the normalizer required one


# -- LoCoMo -----------------------------------------------------------------------------------

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august")
_MONTHS += ("september", "october", "november", "december")
_LOCOMO_TIME = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*", re.IGNORECASE
)
_TURN_ID = re.compile(r"D:?0*(\d+):0*(\d+)")
_SESSION = re.compile(r"session_(\d+)")


def parse_locomo_datetime(text: object, where: str = "date_time") -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC (no locale involved)."""
    found = _LOCOMO_TIME.fullmatch(text) if isinstance(text, str) else None
    month = found.group(5).lower() if found else ""
    if not found or month not in _MONTHS:
        raise _fail(where, f"{text!r:.60} is not a date-time like '1:56 pm on 8 May, 2023'")
    hour, minute = int(found.group(1)) % 12, int(found.group(2))
    hour += 12 if found.group(3).lower() == "pm" else 0
    day, year = int(found.group(4)), int(found.group(6))
    try:
        moment = datetime(year, _MONTHS.index(month) + 1, day, hour, minute)
    except ValueError as exc:
        raise _fail(where, f"{text!r}: {exc}") from None
    return parse_timestamp(moment, where)  # naive -> UTC


def parse_evidence(items: Sequence[object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(turn ids, pieces that are no turn id) of an evidence list, repaired: each string
    split on ';' and whitespace, leading zeros dropped, ``D:11:26`` read as D11:26."""
    ids: dict[str, None] = {}
    bad: list[str] = []
    for item in items:
        pieces = re.split(r"[;\s]+", item.strip()) if isinstance(item, str) else [repr(item)]
        for piece in filter(None, pieces):
            found = _TURN_ID.fullmatch(piece)
            if found:
                ids[f"D{int(found.group(1))}:{int(found.group(2))}"] = None
            else:
                bad.append(piece)
    return tuple(ids), tuple(bad)


def _locomo_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise BenchmarkDataError(f"{str(root)!r} is neither a LoCoMo folder nor a file")
    files = sorted(root.glob("*.json"))
    if not files:
        raise BenchmarkDataError(f"{str(root)!r} holds no .json file (LoCoMo conversations)")
    return files


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BenchmarkDataError(f"{path.name}: not readable JSON ({exc})") from None


def _category(value: object) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _locomo_conversation(
    item: object, key: str, where: str, skipped: list[Note], repaired: list[Note]
) -> tuple[tuple[dict[str, Any], ...], list[BenchmarkQuery]]:
    if not isinstance(item, dict) or not isinstance(item.get("qa"), list):
        raise _fail(where, "not a LoCoMo conversation (an object with a 'qa' list)")
    talk = item.get("conversation", item)
    if not isinstance(talk, dict):
        raise _fail(where, "'conversation' must be an object")
    sessions = sorted(
        (int(found.group(1)), name)
        for name in talk
        if (found := _SESSION.fullmatch(name)) and isinstance(talk[name], list) and talk[name]
    )
    if not sessions:
        raise _fail(where, "no session_N list of turns: not a LoCoMo conversation")
    entries: list[dict[str, Any]] = []
    starts: list[datetime] = []
    for number, name in sessions:
        start = parse_locomo_datetime(talk.get(f"{name}_date_time"), f"{where} {name}_date_time")
        starts.append(start)
        source_id = f"{key}:{name}"
        for position, turn in enumerate(talk[name]):
            at = f"{where} {name}[{position}]"
            if not isinstance(turn, dict):
                raise _fail(at, "a turn must be an object with speaker, dia_id and text")
            speaker = _text(turn.get("speaker"), f"{at} speaker")
            content = f"{speaker}: {_text(turn.get('text'), f'{at} text')}"
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                content += f" [image: {caption}]"
            captured = format_timestamp(start + timedelta(seconds=position))
            source = MemorySource(
                source_id, "conversation_transcript", f"session {number}", captured
            )
            entries.append(
                _entry(_text(turn.get("dia_id"), f"{at} dia_id"), content, speaker, source)
            )
    turns: dict[str, str] = {}  # repaired form -> dia_id, so a turn "D1:03" is found too
    for entry in entries:
        for repaired_id in parse_evidence([entry["memory_id"]])[0][:1]:
            turns.setdefault(repaired_id, entry["memory_id"])
    as_of = format_timestamp(max(starts) + timedelta(days=1))
    queries: list[BenchmarkQuery] = []
    for position, qa in enumerate(item["qa"]):
        at = f"{where} qa[{position}]"
        if not isinstance(qa, dict) or not isinstance(qa.get("evidence", []), list):
            raise _fail(
                at, "a question must be an object with question, evidence (a list), category"
            )
        category = _category(qa.get("category"))
        if category not in (*LOCOMO_CATEGORIES, ADVERSARIAL):
            skipped.append(Note(at, f"category {qa.get('category')!r} is not 1-5"))
            continue
        raw = qa.get("evidence", [])
        ids, bad = parse_evidence(raw)
        unknown = [i for i in ids if i not in turns]
        relevant = tuple(dict.fromkeys(turns[i] for i in ids if i in turns))
        if bad or unknown or list(ids) != raw:
            why = f"evidence {raw!r} read as {list(relevant)!r}"
            why += f"; dropped {list(bad)!r}, not turn ids" if bad else ""
            why += f"; dropped {unknown!r}, no turn of this conversation" if unknown else ""
            repaired.append(Note(at, why))
        if not relevant:
            skipped.append(Note(at, "no evidence turn"))
            continue
        text = _accepted(qa.get("question"), at, skipped)
        if text is not None:
            name = LOCOMO_CATEGORIES.get(category, "adversarial")
            queries.append(BenchmarkQuery(f"{key}:qa-{position}", key, text, as_of, name, relevant))
    return tuple(entries), queries


def load_locomo(path: str | Path) -> Benchmark:
    """A LoCoMo folder (every ``*.json`` in it, in name order) or one file."""
    root = Path(path)
    stores: dict[str, tuple[dict[str, Any], ...]] = {}
    queries: list[BenchmarkQuery] = []
    skipped: list[Note] = []
    repaired: list[Note] = []
    for file in _locomo_files(root):
        payload = _read_json(file)
        items = payload if isinstance(payload, list) else [payload]
        for position, item in enumerate(items):
            where = file.name if payload is item else f"{file.name}[{position}]"
            sample = item.get("sample_id") if isinstance(item, dict) else None
            key = sample if isinstance(sample, str) and sample else where.replace(".json", "")
            if key in stores:
                raise _fail(where, f"conversation {key!r} appears twice")
            stores[key], asked = _locomo_conversation(item, key, where, skipped, repaired)
            queries += asked
    groups = tuple((name, (name,)) for name in LOCOMO_CATEGORIES.values())
    groups += (("overall (1-4)", tuple(LOCOMO_CATEGORIES.values())),)
    groups += (("adversarial (5)", ("adversarial",)),)
    return Benchmark(
        "locomo", str(root), stores, tuple(queries), groups, {}, tuple(skipped), tuple(repaired)
    )


# -- MADial-Bench -----------------------------------------------------------------------------


def _json_lines(path: Path) -> list[tuple[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkDataError(f"{path.name}: not readable ({exc})") from None
    found = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                found.append((f"{path.name}:{number}", json.loads(line)))
            except ValueError as exc:
                raise _fail(f"{path.name}:{number}", f"not a JSON line ({exc})") from None
    return found


def _one(root: Path, pattern: str) -> Path:
    found = sorted(root.glob(pattern))
    if len(found) != 1:
        raise BenchmarkDataError(
            f"{str(root)!r}: expected one {pattern} (MADial-Bench layout), found {len(found)}"
        )
    return found[0]


def _madial_memories(path: Path) -> dict[str, list[dict[str, Any]]]:
    stores: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for where, line in _json_lines(path):
        if not isinstance(line, dict) or len(line) != 1:
            raise _fail(
                where, "a memory line is one object {id: {time, scene, emotion, event, ...}}"
            )
        ((memory_id, memory),) = line.items()
        if not isinstance(memory, dict) or memory_id in seen:
            raise _fail(where, f"memory {memory_id!r} is not an object or appears twice")
        seen.add(memory_id)
        try:
            day = date.fromisoformat(_text(memory.get("time"), f"{where} time"))
        except ValueError:
            raise _fail(
                where, f"time {memory.get('time')!r} is not a date like 2023-12-25"
            ) from None
        scene = _text(memory.get("scene"), f"{where} scene")
        emotion = _text(memory.get("emotion"), f"{where} emotion")
        user = memory.get("user-id")
        if not isinstance(user, int | str) or isinstance(user, bool) or str(user) == "":
            raise _fail(where, f"user-id {user!r} is not an id")
        source = MemorySource(
            f"madial:memory-{memory_id}", "memory_archive", scene, f"{day}T12:00:00Z"
        )
        event = _text(memory.get("event"), f"{where} event")
        stores.setdefault(str(user), []).append(
            _entry(memory_id, event, f"{scene} {emotion}", source)
        )
    return stores


def _madial_lists(
    folder: Path, code: str
) -> tuple[dict[str, dict[str, tuple[str, ...]]], dict[str, str], list[Note]]:
    """Published rankings (name -> query_id -> ids, at most 10) and the first list's
    ``dialog_history`` of each dialogue."""
    rankings: dict[str, dict[str, tuple[str, ...]]] = {}
    histories: dict[str, str] = {}
    repaired: list[Note] = []
    for path in sorted(folder.glob("*_top_20_ids.json")):
        stem = path.name.removesuffix(".json")
        name = stem.removesuffix(f"_{code}_top_20_ids").removesuffix("_top_20_ids")
        mine: dict[str, tuple[str, ...]] = {}
        for where, line in _json_lines(path):
            top = line.get("top_20_ids") if isinstance(line, dict) else None
            if not isinstance(top, list) or "id" not in line:
                raise _fail(where, "a list line is an object with id and top_20_ids")
            ranking = tuple(dict.fromkeys(str(memory_id) for memory_id in top))
            if len(ranking) != len(top):
                repaired.append(Note(where, "top_20_ids lists an id twice: the later one dropped"))
            query_id = f"dialogue-{line['id']}"
            mine[query_id] = ranking[:DEPTH]
            history = line.get("dialog_history")
            if isinstance(history, str) and query_id not in histories:
                histories[query_id] = history
        rankings[PUBLISHED_PREFIX + name] = mine
    return rankings, histories, repaired


def _dialogue(line: object, where: str) -> tuple[str, str, str, list[object]]:
    """(query_id, user key, rebuilt history, relevant-id) of one dialogue line."""
    if not isinstance(line, dict) or "id" not in line:
        raise _fail(where, "a dialogue line has dialogue (strings), test-turn, relevant-id, id")
    dialogue, turn, relevant = line.get("dialogue"), line.get("test-turn"), line.get("relevant-id")
    if not (
        isinstance(dialogue, list)
        and all(isinstance(t, str) for t in dialogue)
        and isinstance(turn, list)
        and turn
        and isinstance(turn[0], int)
        and isinstance(relevant, list)
    ):
        raise _fail(where, "a dialogue line has dialogue (strings), test-turn, relevant-id, id")
    history = "".join(dialogue[: turn[0]])
    return f"dialogue-{line['id']}", str(line.get("user-id")), history, relevant


def load_madial(path: str | Path) -> Benchmark:
    """A MADial-Bench folder: ``data/<lang>/`` memories and dialogues, ``embeddings/<lang>/``
    published lists (optional)."""
    root = Path(path)
    if not root.is_dir():
        raise BenchmarkDataError(f"{str(root)!r} is not a MADial-Bench folder")
    memory_file = _one(root, "data/*/MADial-Bench-*-memory.json")
    lang = memory_file.parent.name
    code = memory_file.name.removeprefix("MADial-Bench-").removesuffix("-memory.json")
    dialogue_file = _one(root, f"data/{lang}/MADial-Bench-{code}-dialogue.json")
    entries = _madial_memories(memory_file)
    published, histories, repaired = _madial_lists(root / "embeddings" / lang, code)
    # one clock for every dialogue and user: 1 January after the archive's newest memory
    newest = max(parse_timestamp(e["stored_at"], "stored_at") for m in entries.values() for e in m)
    as_of = format_timestamp(datetime(newest.year + 1, 1, 1, tzinfo=UTC))
    queries: list[BenchmarkQuery] = []
    skipped: list[Note] = []
    for where, line in _json_lines(dialogue_file):
        query_id, user, rebuilt, relevant_ids = _dialogue(line, where)
        if user not in entries:
            skipped.append(Note(where, f"user-id {user!r} has no memory"))
            continue
        text = histories.get(query_id, rebuilt)
        if len(text) > MAX_QUERY_CHARS:
            repaired.append(Note(where, f"history of {len(text)} characters: kept the last 2,000"))
            text = text[-MAX_QUERY_CHARS:]
        mine = {e["memory_id"] for e in entries[user]}
        relevant = tuple(dict.fromkeys(str(r) for r in relevant_ids if str(r) in mine))
        if len(relevant) != len(relevant_ids):
            why = f"relevant-id {relevant_ids!r} read as {list(relevant)!r} (this user's memories)"
            repaired.append(Note(where, why))
        if not relevant:
            skipped.append(Note(where, "no relevant memory of this user"))
        elif _accepted(text, where, skipped) is not None:
            queries.append(BenchmarkQuery(query_id, user, text, as_of, _MADIAL_CATEGORY, relevant))
    for name, rankings in published.items():
        missing = [q.query_id for q in queries if q.query_id not in rankings]
        if missing:
            repaired.append(Note(name, f"no list for {len(missing)} dialogue(s), scored as empty"))
    stores = {user: tuple(mine) for user, mine in entries.items()}
    groups = (("overall", (_MADIAL_CATEGORY,)),)
    return Benchmark(
        "madial",
        str(root),
        stores,
        tuple(queries),
        groups,
        published,
        tuple(skipped),
        tuple(repaired),
    )


def load_benchmark(name: str, path: str | Path) -> Benchmark:
    """``load_locomo`` or ``load_madial`` by name."""
    loaders = {"locomo": load_locomo, "madial": load_madial}
    if name not in loaders:
        raise BenchmarkDataError(f"unknown benchmark {name!r}; choose one of {', '.join(loaders)}")
    return loaders[name](path)


# -- running and scoring ----------------------------------------------------------------------


@dataclass(frozen=True)
class QueryScore:
    """One question under one configuration (or published run): its ranking and metrics."""

    configuration: str
    query_id: str
    category: str
    hits: tuple[str, ...]
    recall_at_5: float
    recall_at_10: float
    hit_at_10: float
    reciprocal_rank: float
    ndcg_at_10: float


def score_ranking(configuration: str, query: BenchmarkQuery, ranking: Sequence[str]) -> QueryScore:
    """The metrics of ``ranking`` (cut at 10) for ``query``, every relevant id graded 2."""
    ranking = tuple(ranking[:DEPTH])
    judged = dict.fromkeys(query.relevant, RELEVANT_GRADE)
    return QueryScore(
        configuration=configuration,
        query_id=query.query_id,
        category=query.category,
        hits=ranking,
        recall_at_5=recall_at_k(ranking, judged, 5),
        recall_at_10=recall_at_k(ranking, judged, 10),
        hit_at_10=hit_at_k(ranking, judged, 10),
        reciprocal_rank=reciprocal_rank(ranking, judged),
        ndcg_at_10=ndcg_at_k(ranking, judged, 10),
    )


@dataclass(frozen=True)
class BenchmarkRow:
    """Means over one group's questions for one configuration (None when it has none)."""

    configuration: str
    group: str
    questions: int
    recall_at_5: float | None
    recall_at_10: float | None
    hit_at_10: float | None
    mrr: float | None
    ndcg_at_10: float | None

    def metric(self, name: str) -> float | None:
        return dict(zip(METRICS, self._values(), strict=True))[name]

    def _values(self) -> tuple[float | None, ...]:
        return (self.recall_at_5, self.recall_at_10, self.hit_at_10, self.mrr, self.ndcg_at_10)


@dataclass(frozen=True)
class BenchmarkReport:
    benchmark: Benchmark
    configurations: Mapping[str, ScoringPolicy]
    runs: tuple[str, ...]  # the configurations, then the published runs
    rows: tuple[BenchmarkRow, ...]
    scores: tuple[QueryScore, ...]

    def row(self, configuration: str, group: str) -> BenchmarkRow:
        return next(r for r in self.rows if r.configuration == configuration and r.group == group)


def _summarize(
    scores: Sequence[QueryScore], run: str, group: str, categories: Sequence[str]
) -> BenchmarkRow:
    mine = [s for s in scores if s.configuration == run and s.category in categories]

    def average(name: str) -> float | None:
        return round(mean(getattr(s, name) for s in mine), 3) if mine else None

    return BenchmarkRow(
        run,
        group,
        len(mine),
        average("recall_at_5"),
        average("recall_at_10"),
        average("hit_at_10"),
        average("reciprocal_rank"),
        average("ndcg_at_10"),
    )


def run_benchmark(
    benchmark: Benchmark, configurations: Mapping[str, ScoringPolicy]
) -> BenchmarkReport:
    """Build the stores (temporary), recall every question with every configuration,
    score it, and score the published runs the same way."""
    if not configurations:
        raise RemoteMemoryValidationError("run_benchmark needs at least one configuration")
    for name, policy in configurations.items():
        require(policy, ScoringPolicy, f"configuration {name!r}")
        if name in benchmark.published:
            raise RemoteMemoryValidationError(f"{name!r} is the name of a published run")
    scores: list[QueryScore] = []
    with tempfile.TemporaryDirectory(prefix="memorylib-benchmark-") as folder:
        stores: dict[str, RemoteMemoryStore] = {}
        for number, (key, entries) in enumerate(benchmark.stores.items()):
            store = RemoteMemoryStore(
                Path(folder) / f"store-{number}.jsonl", user_id=f"{benchmark.name}:{key}"
            )
            try:
                store.append_many(entries)
            except RemoteMemoryError as exc:
                raise BenchmarkDataError(f"{benchmark.name} store {key!r}: {exc}") from None
            stores[key] = store
        for name, policy in configurations.items():
            engines = {key: RecallEngine(store, policy=policy) for key, store in stores.items()}
            for query in benchmark.queries:
                result = engines[query.store].recall(
                    query.text, limit=DEPTH, as_of=query.as_of, query_id=query.query_id
                )
                ranking = [hit.memory_id for hit in result.hits]
                scores.append(score_ranking(name, query, ranking))
    for name, rankings in benchmark.published.items():
        scores += [score_ranking(name, q, rankings.get(q.query_id, ())) for q in benchmark.queries]
    runs = (*configurations, *benchmark.published)
    rows = tuple(
        _summarize(scores, run, group, categories)
        for group, categories in benchmark.groups
        for run in runs
    )
    return BenchmarkReport(benchmark, dict(configurations), runs, rows, tuple(scores))


# -- output -----------------------------------------------------------------------------------


def _cell(value: float | None, width: int) -> str:
    return f"{value:>{width}.3f}" if value is not None else f"{'-':>{width}}"


def format_report(report: BenchmarkReport) -> str:
    """The table (groups in order, a configuration per line), then what was skipped or
    repaired."""
    bench = report.benchmark
    group_width = max(len("category"), *(len(group) for group, _ in bench.groups))
    run_width = max(len("configuration"), *(len(run) for run in report.runs))
    head = f"{'category':<{group_width}} {'configuration':<{run_width}} " + " ".join(
        f"{metric:>9}" for metric in METRICS
    )
    head += f" {'n':>5}"
    lines = [
        f"{bench.name}: {bench.source} ({len(bench.stores)} stores, {bench.records} records, "
        f"{len(bench.queries)} questions; limit {DEPTH}, relevance binary)",
        "",
        head,
        "-" * len(head),
    ]
    for position, (group, _) in enumerate(bench.groups):
        if position:
            lines.append("")
        for run in report.runs:
            row = report.row(run, group)
            cells = " ".join(_cell(value, 9) for value in row._values())
            lines.append(f"{group:<{group_width}} {run:<{run_width}} {cells} {row.questions:>5}")
    lines += ["", "configurations:"]
    lines += [f"  {name}: {policy!r}" for name, policy in report.configurations.items()]
    if bench.published:
        lines.append(
            f"  {PUBLISHED_PREFIX}<Name>: the benchmark's published top-20 list, cut at 10"
        )
    lines += [f"skipped: {len(bench.skipped)} question(s)"]
    lines += [f"  {note.item}: {note.reason}" for note in bench.skipped]
    lines += [f"repaired: {len(bench.repaired)}"]
    lines += [f"  {note.item}: {note.reason}" for note in bench.repaired]
    return "\n".join(lines)


def report_json(report: BenchmarkReport, *, per_query: bool = False) -> dict[str, Any]:
    bench = report.benchmark
    payload: dict[str, Any] = {
        "benchmark": bench.name,
        "source": bench.source,
        "settings": {"limit": DEPTH, "relevance": "binary", "relevant_grade": RELEVANT_GRADE},
        "configurations": {name: repr(policy) for name, policy in report.configurations.items()},
        "published": list(bench.published),
        "stores": len(bench.stores),
        "records": bench.records,
        "questions": len(bench.queries),
        "rows": [
            {
                "configuration": row.configuration,
                "category": row.group,
                **{metric: row.metric(metric) for metric in METRICS},
                "n": row.questions,
            }
            for row in report.rows
        ],
        "skipped": [{"item": n.item, "reason": n.reason} for n in bench.skipped],
        "repaired": [{"item": n.item, "reason": n.reason} for n in bench.repaired],
    }
    if per_query:
        payload["queries"] = [
            {
                "configuration": s.configuration,
                "query_id": s.query_id,
                "category": s.category,
                "hits": list(s.hits),
                "recall@5": s.recall_at_5,
                "recall@10": s.recall_at_10,
                "hit@10": s.hit_at_10,
                "reciprocal_rank": s.reciprocal_rank,
                "nDCG@10": s.ndcg_at_10,
            }
            for s in report.scores
        ]
    return payload
