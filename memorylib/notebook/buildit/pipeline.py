"""Your pipeline: the stage functions you wrote, run as one recall, beside the reference.

``Pipeline`` holds one function per slot (``normalize_text``, ``extract_terms``,
``build_recall_candidates``, ``score_recall_candidate``,
``stable_rank_recall_candidates``, ``render_recall_context``): yours where you wrote it,
the library's where you did not. A function that still raises ``NotImplementedError``
on its stage's first worked example counts as not written.

* ``Pipeline.from_functions(normalize_text=..., ...)`` takes functions you hold;
* ``Pipeline.from_notebooks(folder)`` reads the build-it cells of notebooks 02-06 as they
  are SAVED (the first line of each is ``# build-it: <stage>``) and runs each cell in a
  fresh namespace, so notebook 06c (the capstone) can run the functions of 02-06;
* ``pipeline.recall(text, records, ...)`` runs normalize -> candidate -> score -> stable
  rank -> render; an exception in one of your functions stops the run and is reported
  (stage, error, your line), never raised;
* ``pipeline.compare(...)`` runs yours and the reference on the same input and names the
  first stage where they differ; ``compare_on_corpus(pipeline)`` does it for every
  labelled query of the course corpus.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import linecache
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from memorylib.candidates import CandidateSet
from memorylib.datasets import course_records, load_labelled_queries
from memorylib.errors import RemoteMemoryError
from memorylib.interface import user_scope_for
from memorylib.notebook.buildit.candidates import BUILD_RECALL_CANDIDATES
from memorylib.notebook.buildit.normalize import EXTRACT_TERMS, NORMALIZE_TEXT
from memorylib.notebook.buildit.ranking import STABLE_RANK_RECALL_CANDIDATES
from memorylib.notebook.buildit.render import RENDER_RECALL_CONTEXT, parsed_tree
from memorylib.notebook.buildit.scoring import SCORE_RECALL_CANDIDATE, chapter_breakdown_fields
from memorylib.notebook.exercises import FunctionExercise, call_line, line_in, same
from memorylib.pipeline import empty_reason
from memorylib.query import normalize_recall_query
from memorylib.ranking import stable_rank_recall_candidates
from memorylib.records import RecallQuery, RecallResult, StoredMemory
from memorylib.timestamps import format_timestamp, parse_timestamp

__all__ = [
    "SLOTS",
    "Comparison",
    "CorpusComparison",
    "Pipeline",
    "PipelineRun",
    "Slot",
    "compare_on_corpus",
    "load_buildit_cells",
    "run_alone",
]


@dataclass(frozen=True)
class Slot:
    """One function of the pipeline: its stage, contract name, your name, its notebook."""

    stage: str
    name: str
    yours: str
    notebook: str
    exercise: FunctionExercise

    @property
    def reference(self) -> Callable[..., Any]:
        return self.exercise.reference


SLOTS: tuple[Slot, ...] = (
    Slot("normalize", "normalize_text", "my_normalize_text", "02_normalize.ipynb", NORMALIZE_TEXT),
    Slot("normalize", "extract_terms", "my_extract_terms", "02_normalize.ipynb", EXTRACT_TERMS),
    Slot(
        "candidate",
        "build_recall_candidates",
        "my_build_recall_candidates",
        "03_candidates.ipynb",
        BUILD_RECALL_CANDIDATES,
    ),
    Slot(
        "score",
        "score_recall_candidate",
        "my_score_recall_candidate",
        "04_scoring.ipynb",
        SCORE_RECALL_CANDIDATE,
    ),
    Slot(
        "stable rank",
        "stable_rank_recall_candidates",
        "my_stable_rank_recall_candidates",
        "05_stable_rank.ipynb",
        STABLE_RANK_RECALL_CANDIDATES,
    ),
    Slot(
        "render",
        "render_recall_context",
        "my_render_recall_context",
        "06_render.ipynb",
        RENDER_RECALL_CONTEXT,
    ),
)
_BY_NAME = {slot.name: slot for slot in SLOTS}
STAGES = ("normalize", "candidate", "score", "stable rank", "render")


@dataclass(frozen=True)
class Choice:
    """What runs in one slot, and why."""

    slot: Slot
    function: Callable[..., Any]
    yours: bool
    why: str


def _choose(slot: Slot, function: object, missing: str) -> Choice:
    if function is None:
        return Choice(slot, slot.reference, False, missing)
    if not callable(function):
        return Choice(slot, slot.reference, False, f"{slot.yours} is not a function")
    try:
        slot.exercise.examples[0].call(function)
    except NotImplementedError:
        return Choice(slot, slot.reference, False, "not written yet (raises NotImplementedError)")
    except Exception as exc:  # yours, and wrong: the run shows where
        return Choice(
            slot, function, True, f"yours (raises {type(exc).__name__} on the chapter's example)"
        )
    return Choice(slot, function, True, "yours")


# -- reading the build-it cells of saved notebooks -------------------------------------------

_MARK = re.compile(r"#\s*build-it:\s*(?P<stage>[a-z]+(?: [a-z]+)?)")


def _cell_source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def load_buildit_cells(folder: str | Path = ".") -> tuple[dict[str, Any], dict[str, str]]:
    """Run the build-it cell of each stage notebook in ``folder`` (as saved on disk).

    Returns (the functions found, by contract name; a note for each slot that has none:
    notebook missing, no build-it cell, or the cell raised). Each cell runs in a fresh
    namespace of its own; nothing else of its notebook runs.
    """
    found: dict[str, Any] = {}
    notes: dict[str, str] = {}
    for notebook in dict.fromkeys(slot.notebook for slot in SLOTS):
        slots = [slot for slot in SLOTS if slot.notebook == notebook]
        path = Path(folder) / notebook
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError) as exc:
            for slot in slots:
                notes[slot.name] = f"{notebook} could not be read ({type(exc).__name__})"
            continue
        stage = slots[0].stage
        sources = [
            _cell_source(cell)
            for cell in cells
            if cell.get("cell_type") == "code"
            and (m := _MARK.match(_cell_source(cell).lstrip())) is not None
            and m.group("stage") == stage
        ]
        if not sources:
            for slot in slots:
                notes[slot.name] = f"no '# build-it: {stage}' cell in {notebook}"
            continue
        filename = f"<{notebook}: build-it cell>"
        source = sources[-1]
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            namespace = _run_cell(source, filename, f"buildit_{Path(notebook).stem}")
        except Exception as exc:  # the student's cell: report it, run the reference
            line = line_in(exc, filename) or ""
            for slot in slots:
                notes[slot.name] = f"its cell in {notebook} raised {type(exc).__name__}: {exc}" + (
                    f" ({line})" if line else ""
                )
            continue
        for slot in slots:
            if callable(namespace.get(slot.yours)):
                found[slot.name] = namespace[slot.yours]
            else:
                notes[slot.name] = f"no function {slot.yours} in the build-it cell of {notebook}"
    return found, notes


def _run_cell(source: str, filename: str, module: str = "buildit_cell") -> dict[str, Any]:
    """Run one cell's source in a fresh namespace of its own, with nothing else of its
    notebook; its namespace afterwards."""
    namespace: dict[str, Any] = {"__name__": module}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


_ALONE: list[str] = []  # the cells being run alone now (a cell may call its own check)


def run_alone(function: object) -> tuple[object, str | None]:
    """``function`` as its notebook cell defines it when that cell runs alone, as
    ``load_buildit_cells`` (notebook 06c) runs the saved cell: (that function, None), or
    (None, what went wrong) when the cell raised. A check that runs this, not the function
    the notebook holds, fails a function that reads a name defined in another cell (a key
    function, an import) the way 06c would. ``(function, None)`` when its source is not a
    cell the kernel compiled (a function from a file, not a function) or the cell alone
    defines no function of its name.
    """
    code = getattr(function, "__code__", None)
    name = getattr(function, "__name__", None)
    entry = None if code is None else linecache.cache.get(code.co_filename)
    # a cell: defined in __main__, and linecache holds its source with no mtime
    in_a_cell = getattr(function, "__module__", None) == "__main__"
    if code is None or not in_a_cell or entry is None or len(entry) != 4 or entry[1] is not None:
        return function, None
    if code.co_filename in _ALONE:
        return function, None
    _ALONE.append(code.co_filename)
    try:
        namespace = _run_cell("".join(entry[2]), code.co_filename)
    except Exception as exc:  # the student's cell
        line = line_in(exc, code.co_filename)
        where = f" ({line})" if line else ""
        return None, f"{type(exc).__name__}: {exc}{where}"
    finally:
        _ALONE.remove(code.co_filename)
    alone = namespace.get(name) if isinstance(name, str) else None
    return (alone, None) if callable(alone) else (function, None)


# -- running ------------------------------------------------------------------------------------


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
    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


class Pipeline:
    """One function per slot, yours or the reference; see the module docstring."""

    def __init__(self, choices: Mapping[str, Choice]) -> None:
        self.choices = {slot.name: choices[slot.name] for slot in SLOTS}

    @classmethod
    def reference(cls) -> Pipeline:
        return cls({s.name: Choice(s, s.reference, False, "the reference") for s in SLOTS})

    @classmethod
    def from_functions(cls, **functions: Any) -> Pipeline:
        """Yours for each contract name given (``normalize_text=my_normalize_text`` ...)."""
        unknown = sorted(set(functions) - set(_BY_NAME))
        if unknown:
            raise TypeError(f"unknown stage function(s): {unknown}; expected {list(_BY_NAME)}")
        return cls({s.name: _choose(s, functions.get(s.name), "not given") for s in SLOTS})

    @classmethod
    def from_notebooks(cls, folder: str | Path = ".", **functions: Any) -> Pipeline:
        """Yours from the saved build-it cells of notebooks 02-06 in ``folder``; a function
        given by keyword (one of this kernel's) replaces what the saved cell defines."""
        found, notes = load_buildit_cells(folder)
        found.update({k: v for k, v in functions.items() if v is not None})
        unknown = sorted(set(found) - set(_BY_NAME))
        if unknown:
            raise TypeError(f"unknown stage function(s): {unknown}; expected {list(_BY_NAME)}")
        return cls(
            {s.name: _choose(s, found.get(s.name), notes.get(s.name, "not found")) for s in SLOTS}
        )

    @property
    def yours(self) -> tuple[str, ...]:
        """The contract names of the slots that run your function."""
        return tuple(name for name, choice in self.choices.items() if choice.yours)

    def stages_frame(self) -> pd.DataFrame:
        """One row per function: its stage, whose function runs, and why."""
        return pd.DataFrame(
            [
                {
                    "stage": choice.slot.stage,
                    "function": choice.slot.name,
                    "runs": choice.slot.yours if choice.yours else "the reference",
                    "why": choice.why,
                }
                for choice in self.choices.values()
            ]
        )

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        choice = self.choices[name]
        try:
            return choice.function(*args, **kwargs)
        except Exception as exc:
            if not choice.yours:
                raise
            where = call_line(exc, choice.function)
            raise _StageFailed(
                choice.slot.stage,
                f"{choice.slot.yours} raised {type(exc).__name__}: {exc}"
                + (f" ({where})" if where else ""),
            ) from exc

    def _query(
        self, text: str, *, user_scope: str, limit: int, query_id: str, issued_at: str
    ) -> RecallQuery:
        # stage 1's checks and readable text are the library's; the folds and terms yours
        checked = normalize_recall_query(
            text, user_scope=user_scope, limit=limit, query_id=query_id, issued_at=issued_at
        )
        normalized = self._call("normalize_text", checked.text)
        terms = self._call("extract_terms", normalized)
        if not isinstance(normalized, str) or not isinstance(terms, tuple | list):
            raise _StageFailed(
                "normalize", "normalize_text must return a str and extract_terms a tuple of str"
            )
        if not terms:  # the library found terms (it accepted the query): yours lost them
            raise _StageFailed(
                "normalize",
                f"no terms for {checked.text[:60]!r}; the library's are {list(checked.terms)}",
            )
        return dataclasses.replace(checked, normalized_text=normalized, terms=tuple(terms))

    def _rank(self, query: RecallQuery, candidates: tuple[Any, ...], moment: datetime) -> Any:
        scorer = self.choices["score_recall_candidate"]
        ranker = self.choices["stable_rank_recall_candidates"]
        if scorer.yours:
            student_score = scorer.function

            def score(q: RecallQuery, c: Any, *, as_of: Any, **_: Any) -> Any:
                try:
                    return student_score(q, c, as_of=as_of)
                except Exception as exc:
                    where = call_line(exc, student_score)
                    raise _StageFailed(
                        "score",
                        f"{scorer.slot.yours} raised {type(exc).__name__}: {exc}"
                        + (f" ({where})" if where else ""),
                    ) from exc
        else:
            score = scorer.function
        try:
            if not ranker.yours:
                return stable_rank_recall_candidates(query, candidates, as_of=moment, score=score)
            takes_score = "score" in inspect.signature(ranker.function).parameters
            extra = {"score": score} if takes_score else {}
            return ranker.function(query, candidates, as_of=moment, **extra)
        except _StageFailed:
            raise
        except Exception as exc:
            if ranker.yours:
                where = call_line(exc, ranker.function)
                message = f"{ranker.slot.yours} raised {type(exc).__name__}: {exc}"
                raise _StageFailed(
                    "stable rank", message + (f" ({where})" if where else "")
                ) from exc
            if scorer.yours:  # the library's ranker could not use what your scorer returned
                raise _StageFailed("score", f"{type(exc).__name__}: {exc}") from exc
            raise

    def recall(
        self,
        text: str,
        records: Iterable[StoredMemory],
        *,
        user_scope: str,
        as_of: datetime | str,
        limit: int = 5,
        query_id: str = "q-yours",
    ) -> PipelineRun:
        """normalize -> candidate -> score -> stable rank -> render over ``records``.

        A typed rejection of the query (empty text, bad limit ...) raises as in the
        library; an exception in one of YOUR functions ends the run with ``error`` set.
        """
        moment = parse_timestamp(as_of, "as_of")
        stage_query = stage_candidates = result = None
        try:
            stage_query = self._query(
                text,
                user_scope=user_scope,
                limit=limit,
                query_id=query_id,
                issued_at=format_timestamp(moment),
            )
            stage_candidates = self._call("build_recall_candidates", stage_query, tuple(records))
            if not isinstance(stage_candidates, CandidateSet):
                raise _StageFailed(
                    "candidate",
                    f"build_recall_candidates returned {type(stage_candidates).__name__}, "
                    "not a CandidateSet",
                )
            hits = self._rank(stage_query, tuple(stage_candidates.candidates), moment)
            if not isinstance(hits, tuple):
                hits = tuple(hits)
            result = RecallResult(
                query=stage_query,
                hits=hits,
                searched_records=stage_candidates.searched_records,
                candidate_records=len(stage_candidates.candidates),
                empty_reason=empty_reason(hits, len(stage_candidates.candidates)),
                retracted_records=stage_candidates.retracted_records,
            )
            context = self._call("render_recall_context", result)
        except _StageFailed as failed:
            return PipelineRun(
                stage_query, stage_candidates, result, None, failed.stage, str(failed)
            )
        except RemoteMemoryError:
            raise
        return PipelineRun(stage_query, stage_candidates, result, context)

    def compare(
        self,
        text: str,
        records: Iterable[StoredMemory],
        *,
        user_scope: str,
        as_of: datetime | str,
        limit: int = 5,
        query_id: str = "q-yours",
    ) -> Comparison:
        """Yours and the reference on the same input, and where they first differ."""
        records = tuple(records)
        kwargs = {"user_scope": user_scope, "as_of": as_of, "limit": limit, "query_id": query_id}
        return Comparison(
            Pipeline.reference().recall(text, records, **kwargs),
            self.recall(text, records, **kwargs),
        )


# -- comparing two runs ------------------------------------------------------------------------


def _candidate_key(found: CandidateSet) -> tuple[Any, ...]:
    return (
        found.searched_records,
        found.retracted_records,
        tuple((c.record.memory_id, tuple(c.matched_terms)) for c in found.candidates),
    )


def _hits_detail(hits: Sequence[Any]) -> str:
    return ", ".join(f"#{h.rank} {h.memory_id} {h.score_breakdown.total}" for h in hits) or "none"


def first_difference(reference: PipelineRun, yours: PipelineRun) -> tuple[str, str] | None:
    """(stage, what differs) at the first stage where the two runs differ, or None."""
    if yours.error is not None:
        return (yours.failed_stage or "?", yours.error)
    ref_query, query = reference.query, yours.query
    assert ref_query is not None and query is not None
    if (ref_query.normalized_text, ref_query.terms) != (query.normalized_text, query.terms):
        return ("normalize", f"terms {ref_query.terms} vs yours {query.terms}")
    assert reference.candidates is not None and yours.candidates is not None
    if _candidate_key(reference.candidates) != _candidate_key(yours.candidates):
        ids = [c.record.memory_id for c in reference.candidates.candidates]
        theirs = [getattr(c.record, "memory_id", "?") for c in yours.candidates.candidates]
        return (
            "candidate",
            f"searched {reference.candidates.searched_records}, candidates {ids} vs yours: "
            f"searched {yours.candidates.searched_records}, candidates {theirs}",
        )
    assert reference.result is not None and yours.result is not None
    scored = {
        hit.memory_id: chapter_breakdown_fields(hit.score_breakdown)
        for hit in reference.result.hits
    }
    for hit in yours.result.hits:
        mine = scored.get(hit.memory_id)
        theirs = chapter_breakdown_fields(hit.score_breakdown)
        if mine is not None and not same(mine, theirs):
            return ("score", f"{hit.memory_id}: total {mine['total']} vs yours {theirs['total']}")
    # the engine's one comparison: a total one unit off in the sixth place (your scorer
    # adding its rounded contributions) is the same hit
    if not same(reference.result.hits, yours.result.hits):
        return (
            "stable rank",
            f"{_hits_detail(reference.result.hits)} vs yours {_hits_detail(yours.result.hits)}",
        )
    if not _same_context(reference.context or "", yours.context):
        theirs = _reference_render(yours.result)  # the library's render of YOUR hits
        if theirs is None or not _same_context(theirs, yours.context):
            return ("render", "the rendered context reads differently to an XML parser")
    return None


def _reference_render(result: RecallResult) -> str | None:
    try:
        return RENDER_RECALL_CONTEXT.reference(result)
    except Exception:  # hits the library cannot render: judged against its own run only
        return None


def _same_context(expected: str, got: object) -> bool:
    if not isinstance(got, str):
        return False
    if expected == "" or got == "":
        return expected == got
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

    def summary(self) -> str:
        """Your run in a few lines, then whether the reference agrees at every stage."""
        run = self.yours
        lines = []
        if run.result is not None:
            result = run.result
            lines.append(
                f"your pipeline: searched {result.searched_records} records, "
                f"{result.candidate_records} candidate(s), {len(result.hits)} hit(s)"
            )
            for hit in result.hits:
                b = hit.score_breakdown
                lines.append(
                    f"  #{hit.rank} {hit.memory_id}  total {b.total} (coverage "
                    f"{b.lexical_coverage}, recency {b.recency})"
                )
        if run.error is not None:
            lines.append(f"your pipeline stopped at stage {run.failed_stage!r}: {run.error}")
        difference = self.difference
        if difference is None:
            lines.append(
                "the library's pipeline: the same at every stage (" + ", ".join(STAGES) + ")"
            )
        else:
            lines.append(
                f"the library's pipeline differs first at stage {difference[0]!r}: {difference[1]}"
            )
        return "\n".join(lines)


# -- the course corpus --------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusComparison:
    """Yours vs the reference on every labelled query: ``frame`` (one row per query),
    ``differences`` (the rows that differ) and a one-paragraph ``summary``."""

    frame: pd.DataFrame

    @property
    def differences(self) -> pd.DataFrame:
        return self.frame[self.frame["first difference"] != "—"].reset_index(drop=True)

    @property
    def summary(self) -> str:
        total = len(self.frame)
        differing = self.differences
        users = self.frame["user"].nunique()
        text = (
            f"{total} labelled queries of {users} users: {total - len(differing)} give the same "
            f"result at every stage, {len(differing)} differ."
        )
        if len(differing):
            counts = differing["first difference"].value_counts()
            ordered = [f"{stage} {counts[stage]}" for stage in STAGES if stage in counts]
            text += " First difference at: " + ", ".join(ordered) + "."
        return text


def compare_on_corpus(pipeline: Pipeline, *, limit: int = 5) -> CorpusComparison:
    """Run yours and the reference on every labelled query of the course corpus (each
    for its user, at its own as_of, with its own query_id) and compare stage by stage."""
    rows = []
    for labelled in load_labelled_queries():
        records = course_records(labelled.user_id)
        comparison = pipeline.compare(
            labelled.text,
            records,
            user_scope=user_scope_for(labelled.user_id),
            as_of=labelled.as_of,
            limit=limit,
            query_id=labelled.query_id,
        )
        difference = comparison.difference
        rows.append(
            {
                "query_id": labelled.query_id,
                "user": labelled.user_id.split("@")[0],
                "text": labelled.text,
                "first difference": difference[0] if difference else "—",
                "detail": difference[1] if difference else "",
                "reference hits": ", ".join(comparison.reference.hit_ids) or "-",
                "your hits": ", ".join(comparison.yours.hit_ids) or "-",
            }
        )
    return CorpusComparison(pd.DataFrame(rows))
