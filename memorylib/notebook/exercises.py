"""The course's one exercise engine: every "Your turn" is checked here (⏳, ❌ or ✅)."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import sys
import tempfile
import time
import traceback
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NoReturn, TypeVar
from unittest import mock

from hypothesis import Phase, configuration, find, settings
from hypothesis.errors import NoSuchExample
from hypothesis.internal.conjecture import providers
from hypothesis.strategies import SearchStrategy

from memorylib.notebook import messages
from memorylib.query import normalize_text

T = TypeVar("T")
Text = str | messages.Said  # a sentence, or one said when shown (module-level texts)

# The one float rule: two numbers agree when they differ by at most one unit in the sixth
# decimal place. Two right answers can differ by that unit (0.283333 + 0.133333 = 0.416666,
# rounded parts added, against 0.416667, the sum rounded), which in binary floats is a hair
# over 1e-6: FLOAT_NOISE covers it, and two units (2e-6) still disagree.
TOLERANCE = 1e-6
FLOAT_NOISE = 1e-12
DEADLINE_SECONDS = 10.0  # a function slower than this over all generated cases is "slow"
_SEARCH = dict(
    derandomize=True, database=None, deadline=None, phases=(Phase.generate, Phase.shrink)
)


def say(key: str, **values: Any) -> str:
    """The engine's sentence ``key`` (``catalogue/<language>/engine.txt``), filled in."""
    return messages.say(f"engine.{key}", **values)


class Verdict(StrEnum):
    NOT_ANSWERED = "not answered"
    WRONG = "wrong"
    RIGHT = "right"


MARKS = {Verdict.NOT_ANSWERED: "⏳", Verdict.WRONG: "❌", Verdict.RIGHT: "✅"}
_COLOURS = {Verdict.NOT_ANSWERED: "#8a6d00", Verdict.WRONG: "#a61b1b", Verdict.RIGHT: "#1b7a3a"}


@dataclass(frozen=True)
class Counterexample:
    """An input (``stage`` "named" or "generated") on which the two functions disagree."""

    stage: str
    example: str
    expected: str
    got: str

    def rows(self) -> tuple[tuple[str, str], ...]:
        stage = say("counterexample", stage=say(f"stage.{self.stage}"))
        return ((stage, self.example), (say("expected"), self.expected), (say("got"), self.got))


@dataclass(frozen=True)
class CheckResult:
    """What a check decided: a verdict, one message, detail lines, a counterexample."""

    verdict: Verdict
    message: str
    details: tuple[str, ...] = ()
    counterexample: Counterexample | None = None

    @property
    def is_right(self) -> bool:
        return self.verdict is Verdict.RIGHT

    @property
    def mark(self) -> str:
        return MARKS[self.verdict]

    @property
    def text(self) -> str:
        """The marked message, then the details and the counterexample, indented."""
        lines = [f"{self.mark} {self.message}", *self.details]
        if self.counterexample is not None:
            (label, value), *rest = self.counterexample.rows()
            named = [say("labelled", label=label) for label, _ in rest]  # "expected:", "期望："
            width = max(map(messages.columns, named)) + 1
            lines.append(say("labelled", label=label) + " " + value.replace("\n", "\n    "))
            indent = "\n" + " " * (width + 2)
            lines += [
                messages.fitted(name, width) + value.replace("\n", indent)
                for name, (_, value) in zip(named, rest, strict=True)
            ]
        return "\n  ".join(lines)

    def __repr__(self) -> str:  # print's and IPython's text/plain
        return self.text

    def _repr_html_(self) -> str:
        colour, esc = _COLOURS[self.verdict], html.escape  # an answer may contain markup
        items = "".join(f"<li>{esc(line)}</li>" for line in self.details)
        rows = self.counterexample.rows() if self.counterexample else ()
        table = "".join(
            f'<tr><th style="text-align:left;vertical-align:top">{esc(label)}</th>'
            f'<td><code style="white-space:pre-wrap">{esc(value)}</code></td></tr>'
            for label, value in rows
        )
        return (
            f'<div class="memorylib-check" data-verdict="{self.verdict.value}" '
            f'style="border-left:4px solid {colour};padding:4px 8px">'
            f'{self.mark} <span style="color:{colour}">{esc(self.message)}</span>'
            + (f"<ul>{items}</ul>" if items else "")
            + (f"<table>{table}</table>" if rows else "")
            + "</div>"
        )


def not_answered(message: str) -> CheckResult:
    return CheckResult(Verdict.NOT_ANSWERED, message)


def wrong(
    hint: str, details: Iterable[str] = (), *, counterexample: Counterexample | None = None
) -> CheckResult:
    return CheckResult(Verdict.WRONG, hint, tuple(details), counterexample)


def right(message: str) -> CheckResult:
    return CheckResult(Verdict.RIGHT, message)


class _Stop(Exception):
    """Ends a check with the ``CheckResult`` it carries (an ``expect_*`` parser rejected it)."""


def _not_a(described: str, value: object) -> NoReturn:
    raise _Stop(wrong(say("type", described=described, kind=type(value).__name__)))


def check_value(
    answer: object,
    judge: Callable[[Any], CheckResult],
    *,
    placeholder: str,
    kind: type | None = None,
    described: str = "",
) -> CheckResult:
    """``...``/None is not answered, a non-``kind`` (a bool is no int) wrong, else ``judge``."""
    if answer is Ellipsis or answer is None:
        return not_answered(say("placeholder", placeholder=placeholder))
    try:
        if kind is not None and (not isinstance(answer, kind) or type(answer) is bool is not kind):
            _not_a(described, answer)
        return judge(answer)
    except _Stop as stop:
        return stop.args[0]


def expect_sequence(answer: object, described: str, *, item: type[T]) -> tuple[T, ...]:
    """A list or tuple (never a lone str) whose every element is an ``item``."""
    if isinstance(answer, str | bytes) or not isinstance(answer, list | tuple):
        _not_a(described, answer)
    if bad := [element for element in answer if not isinstance(element, item)]:
        _not_a(described, bad[0])
    return tuple(answer)


def expect_labels(answer: object, labels: Iterable[str], described: str) -> dict[str, object]:
    """A mapping with a value for every label (one missing or ``...``: not answered)."""
    if not isinstance(answer, Mapping):
        _not_a(described, answer)
    wanted = list(labels)
    missing = [label for label in wanted if label not in answer or answer[label] is Ellipsis]
    if missing:
        raise _Stop(not_answered(say("labels.missing", labels=", ".join(missing))))
    return {label: answer[label] for label in wanted}


def grade_labels(
    truth: Mapping[str, T],
    given: Mapping[str, object],
    hints: Mapping[str, str],
    *,
    same: Callable[[object, T], bool],
    shown: Callable[[object], str] = repr,
) -> CheckResult | None:
    """None when every label is right, else wrong "k of n wrong:" with one line per label."""
    lines = [
        say("labels.line", label=label, given=shown(given[label]), hint=hints[label])
        for label, expected in truth.items()
        if not same(given[label], expected)
    ]
    return wrong(say("labels.wrong", wrong=len(lines), total=len(truth)), lines) if lines else None


@dataclass(frozen=True)
class Question:
    """A multiple-choice quiz question, its ``choices`` lettered "A", "B", ..."""

    prompt: Text
    accepted: tuple[str, ...]
    choices: tuple[Text, ...]
    hint: Text = ""
    hints: Mapping[str, Text] = field(default_factory=dict)
    why: Text = ""

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(chr(ord("A") + n) for n in range(len(self.choices)))

    def __str__(self) -> str:
        pairs = zip(self.labels, self.choices, strict=True)
        return "\n".join([str(self.prompt), *(f"  {label}) {choice}" for label, choice in pairs)])

    def check(self, answer: object) -> CheckResult:
        labels = ", ".join(self.labels)

        def judge(answer: str) -> CheckResult:
            if (given := normalize_text(answer).upper()) not in self.labels:
                return wrong(say("quiz.unknown", given=repr(answer), choices=labels))
            if given in {label.upper() for label in self.accepted}:
                return right(say("quiz.right", why=self.why))
            return wrong(say("quiz.wrong", hint=self.hints.get(given, self.hint)))

        placeholder = say("quiz.one_of", choices=labels)
        return check_value(
            answer, judge, placeholder=placeholder, kind=str, described=say("quiz.str")
        )


class Call:
    """The arguments of one call of the function under test: ``Call(query, records)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __call__(self, function: Callable[..., Any]) -> Any:
        return function(*self.args, **self.kwargs)

    def __repr__(self) -> str:
        return f"Call({_arguments(self)})"


def _arguments(call: Call) -> str:
    return ", ".join([*map(shown, call.args), *(f"{k}={shown(v)}" for k, v in call.kwargs.items())])


@dataclass(frozen=True)
class Mistake:
    """A typical wrong solution: ``variant`` behaves like it, ``hint`` says what to change."""

    name: Text
    hint: Text
    variant: Callable[..., Any]


def named(prefix: str, examples: Mapping[str, Any]) -> dict[str, Call]:
    """Worked examples by name (``prefix.<key>``): key -> a Call, a tuple of arguments or one."""

    def call(a: Any) -> Call:
        return a if isinstance(a, Call) else Call(*a) if isinstance(a, tuple) else Call(a)

    return {messages.said(f"{prefix}.{key}"): call(a) for key, a in examples.items()}


def mistakes(prefix: str, variants: Mapping[str, Callable[..., Any]]) -> tuple[Mistake, ...]:
    """Mistakes named ``prefix.<key>``, hinted ``prefix.<key>.hint``, run as ``variants[key]``."""
    said = messages.said
    return tuple(
        Mistake(said(f"{prefix}.{k}"), said(f"{prefix}.{k}.hint"), v) for k, v in variants.items()
    )


class Malformed(Exception):
    """Raised by an exercise's ``read``: the result has the wrong shape (the message says so)."""


def shown(value: Any) -> str:
    """``repr(value)``, with combining marks spelled out (``'j\\u030c'``, not a lookalike)."""
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch).startswith("M") else ch
        for ch in repr(value)
    )


@dataclass(frozen=True)
class FunctionExercise:
    """A function a student writes, checked against ``reference`` on ``examples`` and ``cases``."""

    function: str
    reference: Callable[..., Any]
    examples: Mapping[str, Call]  # worked examples: a name a student recognises -> its call
    cases: SearchStrategy[Call]
    read: Callable[[Any, Call], Any] = lambda result, call: result
    show: Callable[[Any], str] = shown
    show_call: Callable[[str, Call], str] = lambda name, call: f"{name}({_arguments(call)})"
    mistakes: tuple[Mistake, ...] = ()
    error_hints: tuple[tuple[str, Text], ...] = ()
    refuses: tuple[Callable[..., Any], ...] = ()
    generated: int = 150


def within(expected: float, got: float) -> bool:
    """The one float rule: ``TOLERANCE`` apart at most, plus ``FLOAT_NOISE``."""
    return abs(expected - got) <= TOLERANCE + FLOAT_NOISE


def same(expected: Any, got: Any) -> bool:
    """Equal, floats ``within`` the tolerance, nested too (a list is no tuple, a bool no int)."""
    return not _differences(expected, got, limit=1)


def _fields(value: Any) -> Mapping[Any, Any] | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.compare}
    return value if isinstance(value, Mapping) else None


def _differences(expected: Any, got: Any, path: str = "", *, limit: int = 3) -> list[str]:
    where, parts = path.lstrip(".") or say("difference.whole"), None
    numbers = [isinstance(v, int | float) and not isinstance(v, bool) for v in (expected, got)]
    kind = type(expected) is type(got)
    if all(numbers) and isinstance(expected + got, float):
        if within(expected, got):
            return []
    elif kind and isinstance(expected, list | tuple):
        if len(got) != len(expected):
            return [say("difference.size", path=where, expected=len(expected), got=len(got))]
        parts = [(f"[{n}]", a, b) for n, (a, b) in enumerate(zip(expected, got, strict=True))]
    elif kind and (mine := _fields(expected)) is not None:
        theirs = _fields(got)
        if theirs is not None and set(mine) == set(theirs):
            steps = [
                f".{k}" if isinstance(k, str) and k.isidentifier() else f"[{k!r}]" for k in mine
            ]
            parts = list(zip(steps, mine.values(), [theirs[k] for k in mine], strict=True))
    elif kind and expected == got:
        return []
    if parts is None:
        return [say("difference", path=where, expected=shown(expected), got=shown(got))]
    found: list[str] = []
    for step, a, b in parts:
        found += _differences(a, b, path + step, limit=limit - len(found))
        if len(found) >= limit:
            break
    return found


@dataclass(frozen=True)
class _Run:
    value: Any = None
    raw: Any = None
    error: BaseException | None = None
    problem: str | None = None

    def agrees(self, got: _Run, *, exact: bool = False) -> bool:
        if self.error is not None or got.error is not None:
            if exact:
                return type(self.error) is type(got.error)
            return self.error is not None and isinstance(got.error, type(self.error))
        if self.problem is not None or got.problem is not None:
            return self.problem == got.problem
        return same(self.value, got.value)

    def kind(self, got: _Run) -> tuple[str, str]:
        """How ``got`` disagrees: a shrunk case must keep it (an error stays an error)."""
        if got.error is not None:
            return ("raises", type(got.error).__name__)
        if self.error is not None:
            return ("accepts", type(self.error).__name__)
        return ("malformed", got.problem) if got.problem is not None else ("differs", "")


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def line_in(exc: BaseException, filename: str) -> str | None:
    """ "line N, in f: <code>" for the deepest frame of ``exc`` in ``filename``, if any."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if not frames:
        return None
    frame, source = frames[-1], (frames[-1].line or "").strip()
    where = say("line", number=frame.lineno, name=frame.name)
    return say("line.code", where=where, code=source) if source else where


def call_line(exc: BaseException, function: Callable[..., Any]) -> str | None:
    """``line_in`` the file of the student's own ``function``, if it has one."""
    code = getattr(function, "__code__", None)
    return None if code is None else line_in(exc, code.co_filename)


_CACHES: tempfile.TemporaryDirectory[str] | None = None  # hypothesis's, removed at exit


@contextlib.contextmanager
def _isolated() -> Iterator[None]:
    """Hypothesis caching in a temporary folder, blind to local modules' constants (cases would
    depend on what the kernel imported); ``providers`` is private, pinned in constraints.txt."""
    global _CACHES
    _CACHES = _CACHES or tempfile.TemporaryDirectory(prefix="memorylib-hypothesis-")
    home = configuration.storage_directory(intent_to_write=False).home_directory
    configuration.set_hypothesis_home_dir(_CACHES.name)
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        with mock.patch.object(providers, "_get_local_constants", providers.Constants):
            yield
    finally:
        configuration.set_hypothesis_home_dir(home)
        providers.CONSTANTS_CACHE.cache.clear()


@dataclass(frozen=True)
class _Check:
    exercise: FunctionExercise
    student: Callable[..., Any]
    name: str

    def run(self, function: Callable[..., Any], call: Call, mine: bool = False) -> _Run:
        # The student's (``mine``) template, or entering one of ``refuses``, ends the check.
        codes = {f.__code__: f.__name__ for f in self.exercise.refuses if hasattr(f, "__code__")}
        entered: list[str] = []

        def watch(frame: Any, event: str, arg: Any) -> None:
            if event == "call" and not entered and frame.f_code in codes:
                entered.append(codes[frame.f_code])

        previous = sys.getprofile()
        sys.setprofile(watch if mine and codes else previous)
        try:
            raw, error = call(function), None
        except Exception as exc:  # the student's bug is data here, never a traceback
            raw, error = None, exc
        finally:
            sys.setprofile(previous)
        if mine and isinstance(error, NotImplementedError):
            raise _Stop(not_answered(say("function.template", name=self.name)))
        if entered:
            raise _Stop(wrong(say("function.delegates", name=self.name, refused=entered[0])))
        if error is not None:
            return _Run(error=error)
        try:
            return _Run(value=self.exercise.read(raw, call), raw=raw)
        except Malformed as problem:
            return _Run(raw=raw, problem=str(problem))

    def runs(self, call: Call) -> tuple[_Run, _Run]:
        return self.run(self.exercise.reference, call), self.run(self.student, call, True)

    def mistake(self, call: Call, got: _Run) -> Mistake | None:
        # Among several mistakes acting as the student on ``call``: the most alike on examples.
        def alike(mistake: Mistake, case: Call, theirs: _Run) -> bool:
            run = self.run(mistake.variant, case)
            return not isinstance(run.error, NotImplementedError) and run.agrees(theirs, exact=True)

        found = [m for m in self.exercise.mistakes if alike(m, call, got)]
        if len(found) < 2:
            return found[0] if found else None
        mine = [(case, self.run(self.student, case)) for case in self.exercise.examples.values()]
        return max(found, key=lambda m: sum(alike(m, case, run) for case, run in mine))

    def report(self, call: Call, runs: tuple[_Run, _Run], stage: str, example: str) -> CheckResult:
        (expected, got), exercise, name = runs, self.exercise, self.name
        shown_call = exercise.show_call(name, call)
        raised = None if expected.error is None else type(expected.error).__name__
        if got.error is not None:
            shown_got = say("got.raised", error=_error_text(got.error))
        elif got.problem is not None:
            text = shown(got.raw)
            shown_got = text if len(text) <= 120 else text[:117] + "..."
        else:
            shown_got = exercise.show(got.value)
        where = Counterexample(
            stage,
            say("labelled_call", label=example, call=shown_call) if example else shown_call,
            exercise.show(expected.value)
            if raised is None
            else say("expected.raises", error=raised, message=expected.error),
            shown_got,
        )
        if got.error is not None:
            error, line = _error_text(got.error), call_line(got.error, self.student)
            if raised is not None:
                got_type = type(got.error).__name__
                message = say("function.raised_other", name=name, got=got_type, expected=raised)
            else:
                message = say("function.raised", name=name, error=error)
            hints = [str(hint) for piece, hint in exercise.error_hints if piece in error]
            details = [say("function.where", line=line)] if line else []
            message = say("then", first=message, then=hints[0]) if hints else message
            return wrong(message, details, counterexample=where)
        if (mistake := self.mistake(call, got)) is not None:
            message = say("function.mistake", mistake=mistake.name, hint=mistake.hint)
        elif got.problem is not None:
            message = say("function.malformed", problem=got.problem)
        elif raised is not None:
            message = say("function.accepts", expected=raised, name=name)
        else:
            message = say("function.differs", name=name)
        container = _fields(expected.value) is not None or isinstance(expected.value, list | tuple)
        inside = raised is None and got.problem is None and container  # where, inside it
        details = _differences(expected.value, got.value) if inside else []
        return wrong(message, details, counterexample=where)

    def search(self) -> tuple[Call | None, int]:
        first: list[tuple[str, str]] = []
        agreed, start, generated = [0], time.perf_counter(), self.exercise.generated

        def disagrees(call: Call) -> bool:
            if time.perf_counter() - start > DEADLINE_SECONDS:
                slow = dict(name=self.name, generated=generated, seconds=DEADLINE_SECONDS)
                raise _Stop(wrong(say("function.slow", **slow)))
            expected, got = self.runs(call)
            if expected.agrees(got):
                agreed[0] += not first  # counted until the first disagreement
                return False
            first[:] = first or [expected.kind(got)]
            return expected.kind(got) == first[0]

        found, search = None, settings(max_examples=generated, **_SEARCH)
        with _isolated(), contextlib.suppress(NoSuchExample):
            found = find(self.exercise.cases, disagrees, settings=search)
        return found, agreed[0]


def check_function(
    exercise: FunctionExercise, student: object, *, name: str | None = None
) -> CheckResult:
    """Check ``student`` on the worked examples, then generated cases; never raises for it."""
    if student is None or student is Ellipsis:
        return not_answered(say("function.placeholder", function=exercise.function))
    if not callable(student):
        kind = type(student).__name__
        return wrong(say("function.not_callable", function=exercise.function, kind=kind))
    check = _Check(exercise, student, name or getattr(student, "__name__", exercise.function))
    named = len(exercise.examples)
    try:
        for number, (example, call) in enumerate(exercise.examples.items()):
            expected, got = runs = check.runs(call)
            something = (expected.raw, expected.error) != (None, None)  # from the reference
            if number == 0 and got.error is None is got.raw and something:
                return not_answered(say("function.none", name=check.name))
            if not expected.agrees(got):
                return check.report(call, runs, "named", example)
        found, agreed = check.search()
        if found is not None:
            result = check.report(found, check.runs(found), "generated", say("generated.example"))
            passed = say("function.passed_first", named=named, generated=agreed)
            return dataclasses.replace(result, details=(*result.details, passed))
    except _Stop as stop:
        return stop.args[0]
    return right(say("function.right", name=check.name, named=named, generated=agreed))
