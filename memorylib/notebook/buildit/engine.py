"""The checker engine: a student's function against the library's, on examples then on
generated inputs, with the smallest disagreement reported in plain words.

An ``Exercise`` describes one function of one stage: the reference, how to call a
function on an input (a *case*), the chapter's worked examples (named), a seeded
generator of small cases and a shrinker that proposes smaller ones, how to compare two
results (``project`` keeps only what the contract fixes; ``same`` compares), how to show
cases and results, and the ``Mistake``s a student typically makes, each a runnable
wrong variant with a hint. ``run_check(exercise, student)`` then:

1. runs every worked example; the first disagreement is reported under its name;
2. runs ``exercise.generated`` seeded cases; the first disagreement is shrunk (greedily,
   within a budget of calls) to a smallest disagreeing case;
3. explains the disagreement: the mistake whose variant returns exactly what the student
   returned on that case (and agrees with the student most often on the other cases)
   gives the hint; failing that, the exercise lists the differences.

A student function that raises gets its exception type, message, the input and the line
of the student's own code that raised; one that still raises ``NotImplementedError``
(the committed template) is "not answered yet". Everything is deterministic: the same
student function always gets the same result, word for word.
"""

from __future__ import annotations

import dataclasses
import random
import time
import traceback
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorylib.notebook.exercises import (
    CheckResult,
    Counterexample,
    not_answered,
    right,
    wrong,
)

__all__ = [
    "Example",
    "Exercise",
    "Malformed",
    "Mistake",
    "Outcome",
    "call_line",
    "line_in",
    "reset_cache",
    "run_check",
    "shown",
]

# A wrong solution that loops or crawls must not hang the notebook forever: past this
# many seconds the check stops generating and says so (a correct solution needs far less).
DEADLINE_SECONDS = 5.0
SHRINK_BUDGET = 400  # calls of both functions while shrinking a counterexample
AGREEMENT_SAMPLE = 24  # generated cases used to tell two look-alike mistakes apart


@dataclass(frozen=True)
class Example:
    """A worked example: a name a student recognises and the case it runs."""

    name: str
    case: Any


@dataclass(frozen=True)
class Mistake:
    """A typical wrong solution: ``variant`` behaves like it, ``hint`` says what to change.

    ``recognise(expected, got, case)``, when given, also recognises the mistake from the
    two projected results (for mistakes whose exact output varies from student to student,
    like the markup of an empty wrapper).
    """

    name: str
    hint: str
    variant: Callable[..., Any]
    recognise: Callable[[Any, Any, Any], bool] | None = None


@dataclass(frozen=True)
class Malformed:
    """A result of the wrong shape (a list for a tuple, None, ...): ``problem`` says so."""

    problem: str


@dataclass(frozen=True)
class Outcome:
    """What one call did: the projected value, or the exception it raised."""

    value: Any = None
    raw: Any = None
    error: BaseException | None = None

    @property
    def raised(self) -> bool:
        return self.error is not None


@dataclass(frozen=True)
class Exercise:
    """Everything the engine needs to check one function of one stage.

    ``call(function, case)`` calls a function on a case; ``show_call(name, case)`` shows
    that call in plain words; ``project(result, case)`` keeps what the contract fixes
    (or returns a ``Malformed``); ``show(value)`` shows a projected value;
    ``differences(expected, got, case)`` lists, in words, how two values differ.
    """

    function: str  # the contract's name, e.g. "extract_terms"
    reference: Callable[..., Any]
    call: Callable[[Callable[..., Any], Any], Any]
    examples: tuple[Example, ...]
    generate: Callable[[random.Random], Any]
    shrink: Callable[[Any], Iterable[Any]]
    show_call: Callable[[str, Any], str]
    project: Callable[[Any, Any], Any]
    show: Callable[[Any], str]
    same: Callable[[Any, Any], bool] = field(default=lambda a, b: a == b)
    # how a mistake's result is matched with the student's (default: ``same``); looser
    # where ``same`` also checks a form (rounding) that a mistake may itself get wrong
    similar: Callable[[Any, Any], bool] | None = None
    differences: Callable[[Any, Any, Any], list[str]] = field(default=lambda e, g, c: [])
    mistakes: tuple[Mistake, ...] = ()
    # (a piece of "ExceptionType: message", the hint for it): errors students often hit
    error_hints: tuple[tuple[str, str], ...] = ()
    generated: int = 200
    seed: int = 12


class _NotAnswered(Exception):
    """The student's function still raises NotImplementedError."""

    def __init__(self, case: Any) -> None:
        super().__init__("not answered")
        self.case = case


@dataclass(frozen=True)
class _Trial:
    case: Any
    expected: Outcome
    got: Outcome
    agree: bool


# -- showing values in plain words ------------------------------------------------------------


def shown(text: str) -> str:
    """``repr(text)``, with combining marks spelled out (``'j\\u030c'``, not a lookalike)."""
    body = repr(text)
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch).startswith("M") else ch for ch in body
    )


def call_line(exc: BaseException, function: Callable[..., Any]) -> str | None:
    """ "line N, in f: <code>" for the deepest frame of the student's own code, if any."""
    code = getattr(function, "__code__", None)
    return None if code is None else line_in(exc, code.co_filename)


def line_in(exc: BaseException, filename: str) -> str | None:
    """ "line N, in f: <code>" for the deepest frame of ``exc`` in ``filename``, if any."""
    frames = [
        frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename
    ]
    if not frames:
        return None
    frame = frames[-1]
    source = (frame.line or "").strip()
    return f"line {frame.lineno}, in {frame.name}" + (f": {source}" if source else "")


def _error_text(exc: BaseException) -> str:
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


# -- running --------------------------------------------------------------------------------


def _outcome(exercise: Exercise, function: Callable[..., Any], case: Any) -> Outcome:
    try:
        raw = exercise.call(function, case)
    except NotImplementedError:
        raise
    except Exception as exc:  # the student's bug is data here, never a traceback
        return Outcome(error=exc)
    try:
        value = exercise.project(raw, case)
    except Exception as exc:  # a result the projection could not even read
        value = Malformed(f"the result could not be read ({_error_text(exc)})")
    return Outcome(value=value, raw=raw)


def _agree(exercise: Exercise, expected: Outcome, got: Outcome) -> bool:
    if expected.raised or got.raised:
        return expected.raised and got.raised and isinstance(got.error, type(expected.error))
    if isinstance(got.value, Malformed):
        return False
    return bool(exercise.same(expected.value, got.value))


class _Cache:
    """Generated cases and the reference's outcomes on them, computed once per exercise."""

    def __init__(self) -> None:
        self._cases: dict[str, list[Any]] = {}
        self._expected: dict[tuple[str, int], Outcome] = {}

    def cases(self, exercise: Exercise) -> list[Any]:
        key = exercise.function
        if key not in self._cases:
            rng = random.Random(exercise.seed)
            self._cases[key] = [exercise.generate(rng) for _ in range(exercise.generated)]
        return self._cases[key]

    def expected(self, exercise: Exercise, index: int, case: Any) -> Outcome:
        key = (exercise.function, index)
        if key not in self._expected:
            self._expected[key] = _outcome(exercise, exercise.reference, case)
        return self._expected[key]


_CACHE = _Cache()


def reset_cache() -> None:
    """Forget the generated cases (the next check generates them again: its worst time)."""
    global _CACHE
    _CACHE = _Cache()


def _trial(
    exercise: Exercise, student: Callable[..., Any], case: Any, expected: Outcome | None = None
) -> _Trial:
    if expected is None:
        expected = _outcome(exercise, exercise.reference, case)
    try:
        got = _outcome(exercise, student, case)
    except NotImplementedError:
        raise _NotAnswered(case) from None
    return _Trial(case, expected, got, _agree(exercise, expected, got))


def _kind(trial: _Trial) -> tuple[str, str]:
    """What kind of disagreement: a shrunk case must keep it (an error stays an error)."""
    if trial.got.raised:
        return ("raises", type(trial.got.error).__name__)
    if trial.expected.raised:
        return ("accepts", type(trial.expected.error).__name__)
    if isinstance(trial.got.value, Malformed):
        return ("malformed", trial.got.value.problem)
    return ("differs", "")


def _shrink(exercise: Exercise, student: Callable[..., Any], trial: _Trial) -> _Trial:
    """Greedy: take the first smaller case that still disagrees the same way, repeat."""
    kind = _kind(trial)
    calls = 0
    improved = True
    while improved and calls < SHRINK_BUDGET:
        improved = False
        for smaller in exercise.shrink(trial.case):
            calls += 1
            try:
                candidate = _trial(exercise, student, smaller)
            except _NotAnswered:
                continue
            if not candidate.agree and _kind(candidate) == kind:
                trial, improved = candidate, True
                break
            if calls >= SHRINK_BUDGET:
                break
    return trial


# -- explaining ------------------------------------------------------------------------------


def _variant_outcome(exercise: Exercise, mistake: Mistake, case: Any) -> Outcome | None:
    try:
        return _outcome(exercise, mistake.variant, case)
    except NotImplementedError:
        return None


def _behaves_like(exercise: Exercise, a: Outcome | None, b: Outcome) -> bool:
    if a is None:
        return False
    if a.raised or b.raised:
        return a.raised and b.raised and type(a.error) is type(b.error)
    if isinstance(a.value, Malformed) or isinstance(b.value, Malformed):
        return a.value == b.value
    return bool((exercise.similar or exercise.same)(a.value, b.value))


def _recognised(mistake: Mistake, trial: _Trial) -> bool:
    if mistake.recognise is None or trial.expected.raised or trial.got.raised:
        return False
    if isinstance(trial.got.value, Malformed):
        return False
    return bool(mistake.recognise(trial.expected.value, trial.got.value, trial.case))


def _diagnose(
    exercise: Exercise, student: Callable[..., Any], trial: _Trial, sample: Sequence[Any]
) -> Mistake | None:
    """The known mistake that returns exactly what the student did on ``trial.case``;
    among several, the one that agrees with the student on most ``sample`` cases."""
    candidates = [
        m
        for m in exercise.mistakes
        if _behaves_like(exercise, _variant_outcome(exercise, m, trial.case), trial.got)
        or _recognised(m, trial)
    ]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    student_outcomes = []
    for case in sample:
        try:
            student_outcomes.append(_outcome(exercise, student, case))
        except NotImplementedError:
            student_outcomes.append(None)

    def agreement(mistake: Mistake) -> int:
        return sum(
            1
            for case, mine in zip(sample, student_outcomes, strict=True)
            if mine is not None
            and _behaves_like(exercise, _variant_outcome(exercise, mistake, case), mine)
        )

    # max() keeps the first of equals: mistakes are listed most likely first
    return max(candidates, key=agreement)


def _report(
    exercise: Exercise,
    student: Callable[..., Any],
    name: str,
    trial: _Trial,
    where: tuple[str, str],
    mistake: Mistake | None,
) -> CheckResult:
    call = exercise.show_call(name, trial.case)
    example = f"{where[1]}: {call}" if where[1] else call
    expected = (
        f"raises {type(trial.expected.error).__name__} ({trial.expected.error})"
        if trial.expected.raised
        else exercise.show(trial.expected.value)
    )
    if trial.got.raised:
        error = trial.got.error
        assert error is not None
        got = f"raised {_error_text(error)}"
        line = call_line(error, student)
        details = [f"where: {line}"] if line else []
        if trial.expected.raised:
            message = (
                f"{name} raised {type(error).__name__}; the contract raises "
                f"{type(trial.expected.error).__name__} here."
            )
        else:
            message = f"{name} raised {_error_text(error)}."
        hints = [hint for piece, hint in exercise.error_hints if piece in _error_text(error)]
        if hints:
            message += f" {hints[0]}"
        return wrong(
            message,
            details,
            counterexample=Counterexample(where[0], example, expected, got),
        )
    value = trial.got.value
    got = _short_repr(trial.got.raw) if isinstance(value, Malformed) else exercise.show(value)
    details: list[str] = []
    if mistake is not None:
        message = f"Not yet — {mistake.name}. {mistake.hint}"
    elif isinstance(value, Malformed):
        message = f"Not yet — {value.problem}"
    elif trial.expected.raised:
        message = (
            f"Not yet — the contract rejects this input with "
            f"{type(trial.expected.error).__name__}; {name} returned a result."
        )
    else:
        message = f"Not yet — {name} disagrees with the contract on the input below."
    if not trial.expected.raised and not isinstance(value, Malformed):
        details = exercise.differences(trial.expected.value, value, trial.case)
    return wrong(message, details, counterexample=Counterexample(where[0], example, expected, got))


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# -- the entry point --------------------------------------------------------------------------


def run_check(exercise: Exercise, student: object, *, name: str | None = None) -> CheckResult:
    """Check ``student`` against ``exercise.reference``: worked examples, then generated
    cases. Returns a ``CheckResult`` (never raises for anything the student wrote)."""
    if student is None or student is Ellipsis:
        return not_answered(f"Not answered yet: define {exercise.function} in the cell above.")
    if not callable(student):
        return wrong(
            f"Pass the function itself ({exercise.function}), not {type(student).__name__}."
        )
    name = name or getattr(student, "__name__", exercise.function)
    cases = _CACHE.cases(exercise)
    sample = [example.case for example in exercise.examples] + cases[:AGREEMENT_SAMPLE]
    start = time.perf_counter()
    try:
        for number, example in enumerate(exercise.examples):
            trial = _trial(exercise, student, example.case)
            if number == 0 and trial.got.raw is None and not trial.got.raised:
                return not_answered(
                    f"Not answered yet: {name} returns None (is its body still `...`, or "
                    "does it miss a `return`?)."
                )
            if not trial.agree:
                mistake = _diagnose(exercise, student, trial, sample)
                return _report(exercise, student, name, trial, ("named", example.name), mistake)
        for index, case in enumerate(cases):
            trial = _trial(exercise, student, case, _CACHE.expected(exercise, index, case))
            if not trial.agree:
                smallest = _shrink(exercise, student, trial)
                mistake = _diagnose(exercise, student, smallest, sample)
                where = ("generated", "the smallest failing input found")
                result = _report(exercise, student, name, smallest, where, mistake)
                passed = (
                    f"passed first: the {len(exercise.examples)} worked examples and "
                    f"{index} generated input{'' if index == 1 else 's'}"
                )
                return dataclasses.replace(result, details=(*result.details, passed))
            if time.perf_counter() - start > DEADLINE_SECONDS:
                return wrong(
                    f"{name} is too slow: {index + 1} generated inputs took more than "
                    f"{DEADLINE_SECONDS:.0f} s (the reference needs milliseconds). Look for a "
                    "loop that never ends or work repeated inside a loop."
                )
    except _NotAnswered:
        return not_answered(
            f"Not answered yet: {name} still raises NotImplementedError. Write its body, "
            "run its cell, then run this check again."
        )
    return right(
        f"Right: {name} agrees with the contract on the {len(exercise.examples)} worked "
        f"examples and on {len(cases)} generated inputs."
    )
