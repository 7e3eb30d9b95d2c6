"""Exercise scaffolding: the one result type every "Your turn" checker returns.

A checker grades one answer and returns a ``CheckResult`` in one of three states:

* ``NOT_ANSWERED``: the committed placeholder ``...`` (or ``None``) is still there;
* ``WRONG``: with a hint that says what to look at (and, for a multi-part answer,
  one detail line per wrong part);
* ``RIGHT``: with a sentence that says why it is right.

``print(result)`` shows it as text, one line starting with ⏳, ❌ or ✅ (what the
notebooks commit); a result that is a cell's value renders as a small HTML box.

A checker is written top to bottom with the shared parsing::

    @checker(placeholder="your rewritten query (a str)")
    def check_quiet_query(answer: object, ...) -> CheckResult:
        text = expect_type(answer, str, "a str (your rewritten query)")
        if ...:
            return wrong("Not yet: ...")
        return right("Right: ...")

``@checker`` answers the placeholder before the body runs; the ``expect_*`` helpers
return the parsed answer or stop the check with a ``WRONG`` (or ``NOT_ANSWERED``)
result, so no checker repeats the type checks.

The "build-it" checkers (``memorylib.notebook.buildit``: the student writes a stage
function; it is run against the reference on named examples, then on generated inputs)
return the same type: the smallest input where the two disagree goes in
``CheckResult.counterexample`` (a ``Counterexample``), the hint in ``message``, and both
renderings show it.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Concatenate, NoReturn, ParamSpec, TypeVar

__all__ = [
    "CheckResult",
    "Counterexample",
    "Verdict",
    "checker",
    "expect_labels",
    "expect_number",
    "expect_sequence",
    "expect_type",
    "grade_labels",
    "is_placeholder",
    "not_answered",
    "right",
    "wrong",
]

P = ParamSpec("P")
T = TypeVar("T")
Checker = Callable[Concatenate[Any, P], "CheckResult"]  # check(answer, ...) -> CheckResult


class Verdict(StrEnum):
    NOT_ANSWERED = "not answered"
    WRONG = "wrong"
    RIGHT = "right"


MARKS = {Verdict.NOT_ANSWERED: "⏳", Verdict.WRONG: "❌", Verdict.RIGHT: "✅"}
_COLOURS = {Verdict.NOT_ANSWERED: "#8a6d00", Verdict.WRONG: "#a61b1b", Verdict.RIGHT: "#1b7a3a"}


@dataclass(frozen=True)
class Counterexample:
    """The smallest input on which a student's function and the reference disagree.

    ``stage`` is ``"named"`` (one of the worked examples) or ``"generated"``;
    ``example`` names or shows the input; ``expected`` and ``got`` are the two results.
    """

    stage: str
    example: str
    expected: str
    got: str

    def lines(self) -> tuple[str, ...]:
        """Three labelled lines; a multi-line value (a rendered XML block) continues
        under its label, indented, so the text rendering stays readable."""
        return (
            f"counterexample ({self.stage}): {_continued(self.example, 4)}",
            f"expected: {_continued(self.expected, 10)}",
            f"got:      {_continued(self.got, 10)}",
        )


def _continued(value: str, indent: int) -> str:
    return value.replace("\n", "\n  " + " " * indent)


@dataclass(frozen=True)
class CheckResult:
    """What a checker decided: a verdict, one message, optional detail lines."""

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
        """The plain-text rendering: the marked message, then each detail indented."""
        extra = self.details + (self.counterexample.lines() if self.counterexample else ())
        return "\n  ".join([f"{self.mark} {self.message}", *extra])

    def __str__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text/plain
        printer.text(self.text)

    def _repr_html_(self) -> str:
        """The HTML rendering: the same words, escaped (an answer may contain markup)."""
        colour = _COLOURS[self.verdict]
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.details)
        example = ""
        if self.counterexample is not None:
            rows = "".join(
                f'<tr><th style="text-align:left;vertical-align:top">{name}</th>'
                f'<td><code style="white-space:pre-wrap">{html.escape(value)}</code></td></tr>'
                for name, value in (
                    (f"counterexample ({self.counterexample.stage})", self.counterexample.example),
                    ("expected", self.counterexample.expected),
                    ("got", self.counterexample.got),
                )
            )
            example = f"<table>{rows}</table>"
        return (
            f'<div class="memorylib-check" data-verdict="{self.verdict.value}" '
            f'style="border-left:4px solid {colour};padding:4px 8px">'
            f'{self.mark} <span style="color:{colour}">{html.escape(self.message)}</span>'
            + (f"<ul>{items}</ul>" if items else "")
            + example
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


# -- parsing answers --------------------------------------------------------------------------


class _Stop(Exception):
    """Raised by an ``expect_*`` helper: the check ends with ``result``."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


def _stop(result: CheckResult) -> NoReturn:
    raise _Stop(result)


def is_placeholder(answer: object) -> bool:
    """The committed ``...`` (or ``None``: a cleared answer) means "not answered yet"."""
    return answer is Ellipsis or answer is None


def checker(*, placeholder: str) -> Callable[[Checker[P]], Checker[P]]:
    """Decorate a checker ``check(answer, ...)``: the placeholder is answered with
    "Not answered yet: replace ... with <placeholder>.", and an ``expect_*`` helper that
    rejects the answer ends the check with its result."""

    def decorate(check: Checker[P]) -> Checker[P]:
        @functools.wraps(check)
        def run(answer: Any, *args: P.args, **kwargs: P.kwargs) -> CheckResult:
            if is_placeholder(answer):
                return not_answered(f"Not answered yet: replace ... with {placeholder}.")
            try:
                return check(answer, *args, **kwargs)
            except _Stop as stop:
                return stop.result

        return run

    return decorate


def _kind(answer: object) -> str:
    return type(answer).__name__


def expect_type(answer: object, kind: type[T], described: str) -> T:
    """``answer`` when it is a ``kind``; else WRONG "The answer must be <described>, not X."."""
    if (isinstance(answer, bool) and kind is not bool) or not isinstance(answer, kind):
        _stop(wrong(f"The answer must be {described}, not {_kind(answer)}."))
    return answer


def expect_number(answer: object) -> float:
    """A finite int or float (not a bool) as a float."""
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        _stop(wrong(f"The answer must be a number, not {_kind(answer)}."))
    value = float(answer)
    if not math.isfinite(value):
        _stop(wrong("The answer must be a finite number."))
    return value


def expect_sequence(
    answer: object, described: str, *, item: type[T], item_message: str
) -> tuple[T, ...]:
    """A list or tuple (never a lone str) whose every element is an ``item``."""
    if isinstance(answer, str | bytes) or not isinstance(answer, list | tuple):
        _stop(wrong(f"The answer must be {described}, not {_kind(answer)}."))
    if not all(isinstance(element, item) for element in answer):
        _stop(wrong(item_message))
    return tuple(answer)


def expect_labels(answer: object, labels: Iterable[str], described: str) -> dict[str, object]:
    """A mapping with a value for every label. A label that is missing, or still ``...``,
    makes the whole answer NOT_ANSWERED ("Not answered yet for B, C.")."""
    if not isinstance(answer, Mapping):
        _stop(wrong(f"The answer must be {described}, not {_kind(answer)}."))
    wanted = list(labels)
    missing = [label for label in wanted if label not in answer or answer[label] is Ellipsis]
    if missing:
        _stop(not_answered(f"Not answered yet for {', '.join(missing)}."))
    return {label: answer[label] for label in wanted}


def grade_labels(
    truth: Mapping[str, T],
    given: Mapping[str, object],
    hints: Mapping[str, str],
    *,
    same: Callable[[object, T], bool],
    shown: Callable[[object], str] = repr,
) -> CheckResult | None:
    """Compare a labelled answer with the truth: None when every label is right, else
    WRONG "k of n wrong:" with one "<label>: you said <shown>. Hint: <hint>" per label."""
    lines = [
        f"{label}: you said {shown(given[label])}. Hint: {hints[label]}"
        for label, expected in truth.items()
        if not same(given[label], expected)
    ]
    if not lines:
        return None
    return wrong(f"{len(lines)} of {len(truth)} wrong:", lines)
