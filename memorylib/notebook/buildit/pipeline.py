"""Your pipeline (notebook 06c): your build-it functions as one recall, beside the library's."""

from __future__ import annotations

import dataclasses
import inspect
import json
import linecache
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from memorylib import CandidateSet, RecallQuery, RecallResult, normalize_recall_query
from memorylib.datasets import course_records, load_labelled_queries
from memorylib.interface import user_scope_for
from memorylib.notebook.buildit.candidates import BUILD_RECALL_CANDIDATES
from memorylib.notebook.buildit.normalize import EXTRACT_TERMS, NORMALIZE_TEXT
from memorylib.notebook.buildit.ranking import STABLE_RANK_RECALL_CANDIDATES
from memorylib.notebook.buildit.render import RENDER_RECALL_CONTEXT, parsed_tree
from memorylib.notebook.buildit.scoring import SCORE_RECALL_CANDIDATE, chapter_breakdown_fields
from memorylib.notebook.exercises import FunctionExercise, call_line, line_in, same
from memorylib.notebook.messages import say
from memorylib.pipeline import empty_reason
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.timestamps import format_timestamp, parse_timestamp

STAGES = ("normalize", "candidate", "score", "stable rank", "render")


@dataclass(frozen=True)
class Slot:
    """One function of the pipeline: its stage, its notebook and its build-it exercise."""

    stage: str
    notebook: str
    exercise: FunctionExercise

    name = property(lambda self: self.exercise.function)  # the contract's name
    yours = property(lambda self: f"my_{self.name}")  # the name in the build-it template
    reference = property(lambda self: self.exercise.reference)


SLOTS: tuple[Slot, ...] = (
    Slot("normalize", "02_normalize.ipynb", NORMALIZE_TEXT),
    Slot("normalize", "02_normalize.ipynb", EXTRACT_TERMS),
    Slot("candidate", "03_candidates.ipynb", BUILD_RECALL_CANDIDATES),
    Slot("score", "04_scoring.ipynb", SCORE_RECALL_CANDIDATE),
    Slot("stable rank", "05_stable_rank.ipynb", STABLE_RANK_RECALL_CANDIDATES),
    Slot("render", "06_render.ipynb", RENDER_RECALL_CONTEXT),
)
_NAMES = [slot.name for slot in SLOTS]


@dataclass(frozen=True)
class Choice:
    """What runs in one slot, and why."""

    slot: Slot
    function: Callable[..., Any]
    yours: bool
    why: str


def _choose(slot: Slot, function: object, missing: str) -> Choice:
    if not callable(function):
        why = missing if function is None else say("pipeline.why.not_a_function", name=slot.yours)
        return Choice(slot, slot.reference, False, why)
    try:
        next(iter(slot.exercise.examples.values()))(function)
    except NotImplementedError:
        return Choice(slot, slot.reference, False, say("pipeline.why.not_written"))
    except Exception as exc:  # yours, and wrong: the run shows where
        return Choice(slot, function, True, say("pipeline.why.raises", error=type(exc).__name__))
    return Choice(slot, function, True, say("pipeline.why.yours"))


def _error(exc: BaseException, line: str | None) -> str:
    """What a student's code raised, and on which line when known."""
    return f"{type(exc).__name__}: {exc}" + (" " + say("pipeline.where", line=line) if line else "")


_MARK = re.compile(r"\s*#\s*build-it:\s*([a-z]+(?: [a-z]+)?)")


def _run_cell(source: str, filename: str, module: str = "buildit_cell") -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": module}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def load_buildit_cells(folder: str | Path = ".") -> tuple[dict[str, Any], dict[str, str]]:
    """(Your functions, by contract name; why, for each slot without one): from the last
    build-it cell of each stage notebook saved in ``folder``, each cell run alone."""
    # each notebook once: 02's two slots share one cell
    cells = {s.notebook: _saved_cell(Path(folder), s.notebook, s.stage) for s in SLOTS[1:]}
    found = {s.name: f for s in SLOTS if callable(f := cells[s.notebook][0].get(s.yours))}
    notes = {
        s.name: cells[s.notebook][1]
        or say("pipeline.cell.no_function", name=s.yours, notebook=s.notebook)
        for s in SLOTS
        if s.name not in found
    }
    return found, notes


def _saved_cell(folder: Path, notebook: str, stage: str) -> tuple[dict[str, Any], str | None]:
    """The namespace of the last build-it cell of ``notebook`` run alone, or why there is none."""
    try:
        cells = json.loads((folder / notebook).read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError) as exc:
        return {}, say("pipeline.cell.unreadable", notebook=notebook, error=type(exc).__name__)
    sources = [
        src
        for cell in cells
        if cell.get("cell_type") == "code"
        and (mark := _MARK.match(src := "".join(cell.get("source", ""))))
        and mark[1] == stage
    ]
    if not sources:
        return {}, say("pipeline.cell.missing", stage=stage, notebook=notebook)
    filename, source = f"<{notebook}: build-it cell>", sources[-1]
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        return _run_cell(source, filename, f"buildit_{Path(notebook).stem}"), None
    except Exception as exc:  # the student's cell: report it, run the reference
        error = _error(exc, line_in(exc, filename))
        return {}, say("pipeline.cell.raised", notebook=notebook, error=error)


_ALONE: list[str] = []  # the cells being run alone now (a cell may call its own check)


def run_alone(function: object) -> tuple[object, str | None]:
    """(``function`` as its cell defines it run alone, as 06c runs the saved cell, else
    ``function`` itself, None), or (None, what the cell raised)."""
    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    entry = linecache.cache.get(filename)
    # a cell (not being run alone now): defined in __main__, its source in linecache, no mtime
    in_a_cell = getattr(function, "__module__", None) == "__main__" and filename not in _ALONE
    if not in_a_cell or entry is None or len(entry) != 4 or entry[1] is not None:
        return function, None
    _ALONE.append(filename)
    try:
        namespace = _run_cell("".join(entry[2]), filename)
    except Exception as exc:  # the student's cell
        return None, _error(exc, line_in(exc, filename))
    finally:
        _ALONE.remove(filename)
    alone = namespace.get(getattr(function, "__name__", None))
    return (alone if callable(alone) else function), None


@dataclass(frozen=True)
class PipelineRun:
    """What one recall produced, stage by stage; ``error`` says where yours stopped."""

    query: RecallQuery | None = None
    candidates: CandidateSet | None = None
    result: RecallResult | None = None
    context: str | None = None
    failed_stage: str | None = None
    error: str | None = None

    @property
    def hit_ids(self) -> tuple[str, ...]:
        return () if self.result is None else tuple(hit.memory_id for hit in self.result.hits)


class _StageFailed(Exception):
    """Raised with (stage, message) when one of your functions stops the run."""


class Pipeline:
    """One function per slot, yours or the reference."""

    def __init__(self, choices: Mapping[str, Choice]) -> None:
        self.choices = {slot.name: choices[slot.name] for slot in SLOTS}

    @classmethod
    def reference(cls) -> Pipeline:
        return cls._of({}, {}, say("pipeline.why.reference"))

    @classmethod
    def from_functions(cls, **functions: Any) -> Pipeline:
        """Yours for each contract name given (``normalize_text=my_normalize_text`` ...)."""
        return cls._of(functions, {})

    @classmethod
    def from_notebooks(cls, folder: str | Path = ".") -> Pipeline:
        """Yours from the saved build-it cells of notebooks 02-06 in ``folder``."""
        return cls._of(*load_buildit_cells(folder))

    @classmethod
    def _of(cls, functions: Mapping[str, Any], notes: Mapping[str, str], why: str = "") -> Pipeline:
        if unknown := sorted(set(functions) - set(_NAMES)):
            raise TypeError(say("pipeline.unknown", unknown=unknown, expected=_NAMES))
        missing = why or (say("pipeline.why.not_found") if notes else say("pipeline.why.not_given"))
        return cls(
            {s.name: _choose(s, functions.get(s.name), notes.get(s.name, missing)) for s in SLOTS}
        )

    @property
    def yours(self) -> tuple[str, ...]:
        """The contract names of the slots that run your function."""
        return tuple(name for name, choice in self.choices.items() if choice.yours)

    def _run(self, name: str) -> Callable[..., Any]:
        """The slot's function; yours wrapped so that what it raises names its stage."""
        choice = self.choices[name]
        if not choice.yours:
            return choice.function

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return choice.function(*args, **kwargs)
            except _StageFailed:  # your scorer, called by your ranker
                raise
            except Exception as exc:
                error = _error(exc, call_line(exc, choice.function))
                message = say("pipeline.raised", name=choice.slot.yours, error=error)
                raise _StageFailed(choice.slot.stage, message) from exc

        return guarded

    def _query(self, text: str, **checks: Any) -> RecallQuery:
        # stage 1's checks and readable text are the library's; the folds and terms yours
        checked = normalize_recall_query(text, **checks)
        normalized = self._run("normalize_text")(checked.text)
        terms = self._run("extract_terms")(normalized)
        if not isinstance(normalized, str) or not isinstance(terms, tuple | list):
            raise _StageFailed("normalize", say("pipeline.not_str"))
        if not terms:  # the library found terms (it accepted the query): yours lost them
            message = say("pipeline.no_terms", text=checked.text[:60], terms=list(checked.terms))
            raise _StageFailed("normalize", message)
        return dataclasses.replace(checked, normalized_text=normalized, terms=tuple(terms))

    def _rank(self, query: RecallQuery, candidates: tuple[Any, ...], moment: datetime) -> Any:
        ranker = self.choices["stable_rank_recall_candidates"]
        scorer = self.choices["score_recall_candidate"]
        score, yours = scorer.function, self._run("score_recall_candidate")
        if scorer.yours:  # the chapter's signature: the library's policy and corpus dropped

            def score(q: RecallQuery, c: Any, *, as_of: Any, **_: Any) -> Any:
                return yours(q, c, as_of=as_of)

        if ranker.yours:
            takes_score = "score" in inspect.signature(ranker.function).parameters
            extra = {"score": score} if takes_score else {}
            return self._run(ranker.slot.name)(query, candidates, as_of=moment, **extra)
        try:
            return stable_rank_recall_candidates(query, candidates, as_of=moment, score=score)
        except Exception as exc:  # the library's ranker could not use what your scorer returned
            if isinstance(exc, _StageFailed) or not scorer.yours:
                raise
            raise _StageFailed("score", _error(exc, None)) from exc

    def recall(
        self, text: str, records: Iterable[Any], *, as_of: datetime | str, **fields: Any
    ) -> PipelineRun:
        """The five stages; ``fields``: ``user_scope``, ``limit`` (5), ``query_id``; what one
        of YOUR functions raises ends the run with ``failed_stage`` and ``error`` set."""
        moment = parse_timestamp(as_of, "as_of")
        fields = {"limit": 5, "query_id": "q-yours", **fields}
        query = found = result = None
        try:  # 1. normalize
            query = self._query(text, **fields, issued_at=format_timestamp(moment))
            found = self._run("build_recall_candidates")(query, tuple(records))  # 2. candidate
            if not isinstance(found, CandidateSet):
                message = say("pipeline.not_candidates", kind=type(found).__name__)
                raise _StageFailed("candidate", message)
            hits = tuple(self._rank(query, tuple(found.candidates), moment))  # 3. and 4.
            n = len(found.candidates)
            reason, retracted = empty_reason(hits, n), found.retracted_records
            result = RecallResult(query, hits, found.searched_records, n, reason, retracted)
            context = self._run("render_recall_context")(result)  # 5. render
        except _StageFailed as failed:
            return PipelineRun(query, found, result, None, *failed.args)
        return PipelineRun(query, found, result, context)

    def compare(self, text: str, records: Iterable[Any], **recall: Any) -> Comparison:
        """Yours and the reference on the same input (``recall``'s keywords)."""
        records = tuple(records)
        reference = Pipeline.reference().recall(text, records, **recall)
        return Comparison(reference, self.recall(text, records, **recall))


def first_difference(reference: PipelineRun, yours: PipelineRun) -> tuple[str, str] | None:
    """(stage, what differs) at the first stage where your run differs from the library's,
    or None. ``same`` is the exercises' one comparison: equal, floats within 1e-6."""
    if yours.error is not None:  # one of your functions raised: the stage it ran in
        return (yours.failed_stage or "?", yours.error)
    # normalize: the normalized text, then the terms
    ref, mine = reference.query, yours.query
    if ref.normalized_text != mine.normalized_text:
        texts = {"expected": ref.normalized_text, "got": mine.normalized_text}
        return ("normalize", say("pipeline.differs.normalized", **texts))
    if ref.terms != mine.terms:
        return ("normalize", say("pipeline.differs.terms", expected=ref.terms, got=mine.terms))
    # candidate: searched and retracted counts, and which records matched which terms
    runs = []
    for run in (reference, yours):
        matched = [(c.record.memory_id, tuple(c.matched_terms)) for c in run.candidates.candidates]
        runs.append((run.candidates.searched_records, run.candidates.retracted_records, matched))
    if runs[0] != runs[1]:
        (n, _, expected), (m, _, got) = runs
        ids = {"expected": [i for i, _ in expected], "got": [i for i, _ in got]}
        return ("candidate", say("pipeline.differs.candidate", n=n, m=m, **ids))
    # score: the chapter's seven breakdown fields of each hit both runs have
    ref_hits, hits = reference.result.hits, yours.result.hits
    scored = {h.memory_id: chapter_breakdown_fields(h.score_breakdown) for h in ref_hits}
    for hit in hits:
        expected, got = scored.get(hit.memory_id), chapter_breakdown_fields(hit.score_breakdown)
        if expected is not None and not same(expected, got):
            totals = {"expected": expected["total"], "got": got["total"]}
            return ("score", say("pipeline.differs.score", memory_id=hit.memory_id, **totals))
    # stable rank: the hits, every field of each, in order
    if not same(ref_hits, hits):
        listed = [
            ", ".join(f"#{h.rank} {h.memory_id} {h.score_breakdown.total}" for h in run)
            or say("pipeline.no_hits")
            for run in (ref_hits, hits)
        ]
        return ("stable rank", say("pipeline.differs.rank", expected=listed[0], got=listed[1]))
    # render: what an XML parser reads ("" only equals ""), against the library's block,
    # or, failing that, the library's render of YOUR result
    if not _same_context(reference.context, yours.context):
        try:
            library = RENDER_RECALL_CONTEXT.reference(yours.result)
        except Exception:  # hits the library cannot render: judged against its own run only
            library = None
        if not _same_context(library, yours.context):
            return ("render", say("pipeline.differs.render"))
    return None


def _same_context(expected: str | None, got: object) -> bool:
    if not isinstance(expected, str) or not isinstance(got, str) or not (expected and got):
        return isinstance(expected, str) and expected == got
    try:
        return parsed_tree(expected) == parsed_tree(got)
    except Exception:  # not well-formed: not the same
        return False


@dataclass(frozen=True)
class Comparison:
    reference: PipelineRun
    yours: PipelineRun

    @property
    def difference(self) -> tuple[str, str] | None:
        return first_difference(self.reference, self.yours)


@dataclass(frozen=True)
class CorpusComparison:
    """Yours vs the reference on every labelled query: one row per query in ``frame``."""

    frame: pd.DataFrame

    @property
    def differences(self) -> pd.DataFrame:
        return self.frame[self.frame["first difference"] != "—"].reset_index(drop=True)

    @property
    def summary(self) -> str:
        total, differing = len(self.frame), self.differences["first difference"]
        text = say(
            "pipeline.corpus.summary", total=total, users=self.frame["user"].nunique(),
            same=total - len(differing), differ=len(differing),
        )  # fmt: skip
        counts = differing.value_counts()
        where = ", ".join(f"{stage} {counts[stage]}" for stage in STAGES if stage in counts)
        where = where and say("pipeline.corpus.where", where=where)
        return say("engine.then", first=text, then=where) if where else text


def compare_on_corpus(pipeline: Pipeline, *, limit: int = 5) -> CorpusComparison:
    """Run yours and the reference on every labelled query of the course corpus (each
    for its user, at its own as_of, with its own query_id) and compare stage by stage."""
    rows = []
    for labelled in load_labelled_queries():
        comparison = pipeline.compare(
            labelled.text,
            course_records(labelled.user_id),
            user_scope=user_scope_for(labelled.user_id),
            as_of=labelled.as_of,
            limit=limit,
            query_id=labelled.query_id,
        )
        stage, detail = comparison.difference or ("—", "")
        rows.append(
            {
                "query_id": labelled.query_id,
                "user": labelled.user_id.split("@")[0],
                "text": labelled.text,
                "first difference": stage,
                "detail": detail,
                "reference hits": ", ".join(comparison.reference.hit_ids) or "-",
                "your hits": ", ".join(comparison.yours.hit_ids) or "-",
            }
        )
    return CorpusComparison(pd.DataFrame(rows))
