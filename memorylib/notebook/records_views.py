"""Views for notebooks 00 (index) and 01 (stored records): the durable side of memory.

A StoredMemory is evidence with an owner (``user_scope``), a source and two clocks
(``source.captured_at``: when it happened; ``stored_at``: when it reached the store).
These pure functions turn records, stores and files into DataFrames, text and
Figures; ``scope_widget`` only wires a text box to ``scope_view``. Also here: the
two-paths diagram and the stored-vs-recalled table of the index notebook, because
both are about what a stored record is and is not; and notebook 01's exercise (predict
what five appends by differently spelled user ids do) and its optional stretch (write
``user_scope_for`` yourself), with their checkers.
"""

from __future__ import annotations

import hashlib
import html
import tempfile
import textwrap
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pandas as pd
from hypothesis import strategies as st
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from memorylib import (
    MemoryKind,
    MemorySource,
    RecallHit,
    RemoteMemoryError,
    RemoteMemoryStore,
    StoredMemory,
    user_scope_for,
)
from memorylib.notebook.common import NO_ERROR, error_name, typed_attempt, with_chart_fonts
from memorylib.notebook.exercises import (
    Call,
    CheckResult,
    FunctionExercise,
    Mistake,
    Named,
    check_function,
    check_value,
    expect_labels,
    grade_labels,
    right,
)
from memorylib.timestamps import parse_timestamp

__all__ = [
    "EXERCISE_APPENDS",
    "SCOPE_EXERCISE",
    "attempt",
    "capture_lag",
    "capture_lag_chart",
    "check_append_predictions",
    "check_scope_function",
    "exercise_frame",
    "exercise_truth",
    "file_scan_frame",
    "jsonl_line",
    "record_card",
    "records_frame",
    "scope_frame",
    "scope_view",
    "scope_widget",
    "stored_vs_recalled_frame",
    "two_paths_diagram",
    "user_store",
    "wrap_bytes",
]

KIND_COLOURS = {"profile": "#d95f02", "conversation": "#1b9e77", "retraction": "#7570b3"}


def attempt(action: Callable[[], object]) -> str:
    """Run ``action``; return ``"ok: <repr>"`` or ``"<ErrorType>: <message>"``, never raise.

    Only memorylib's own errors are caught: they are the typed rejections a course
    shows. Anything else is a bug and propagates.
    """
    try:
        value = action()
    except RemoteMemoryError as exc:
        return f"{type(exc).__name__}: {exc}"
    return f"ok: {value!r}"


def _days(later: str, earlier: str) -> float:
    delta = parse_timestamp(later, "later") - parse_timestamp(earlier, "earlier")
    return round(delta.total_seconds() / 86_400, 2)


def records_frame(
    records: Iterable[StoredMemory], *, include_content: bool = False
) -> pd.DataFrame:
    """One row per record in the given (file) order.

    Columns: memory_id, kind, title, captured_at, stored_at, stored_after_days
    (stored_at - captured_at in days), summary (and content if asked).
    """
    rows = []
    for record in records:
        row = {
            "memory_id": record.memory_id,
            "kind": record.kind.value,
            "title": record.source.title,
            "captured_at": record.source.captured_at,
            "stored_at": record.stored_at,
            "stored_after_days": _days(record.stored_at, record.source.captured_at),
            "summary": record.summary,
        }
        if include_content:
            row["content"] = record.content
        rows.append(row)
    columns = [
        "memory_id",
        "kind",
        "title",
        "captured_at",
        "stored_at",
        "stored_after_days",
        "summary",
    ] + (["content"] if include_content else [])
    return pd.DataFrame(rows, columns=columns)


def record_card(record: StoredMemory) -> pd.DataFrame:
    """A two-column frame (field, value) of one record: its to_dict() flattened."""
    rows = []
    for key, value in record.to_dict().items():
        if isinstance(value, dict):
            rows.extend((f"{key}.{inner}", str(v)) for inner, v in value.items())
        else:
            rows.append((key, str(value)))
    return pd.DataFrame(rows, columns=["field", "value"])


def scope_view(user_id: object) -> dict[str, Any]:
    """What the store derives from a user id; never raises (a rejection comes back as data).

    Keys: ``user_id`` (repr), ``key`` (strip + casefold), ``user_scope``, ``file``
    (the runtime's file name ``memories-<scope>.jsonl``) and ``error``.
    """
    try:
        scope = user_scope_for(user_id)
    except RemoteMemoryError as exc:
        return {
            "user_id": repr(user_id),
            "key": None,
            "user_scope": None,
            "file": None,
            "error": f"{type(exc).__name__}: {exc}",
        }
    assert isinstance(user_id, str)  # user_scope_for accepted it
    return {
        "user_id": repr(user_id),
        "key": user_id.strip().casefold(),
        "user_scope": scope,
        "file": f"memories-{scope}.jsonl",
        "error": None,
    }


def scope_frame(user_ids: Iterable[object]) -> pd.DataFrame:
    """One row per user id: the hashed key, the 16-hex user_scope, the file name, the error.

    Fields a rejected id does not have are empty strings.
    """
    rows = [
        {key: "" if value is None else value for key, value in scope_view(user_id).items()}
        for user_id in user_ids
    ]
    return pd.DataFrame(rows, columns=["user_id", "key", "user_scope", "file", "error"])


def jsonl_line(path: str | Path, number: int) -> bytes:
    """The raw bytes of line ``number`` (1-based) of a JSONL file, newline included."""
    lines = Path(path).read_bytes().splitlines(keepends=True)
    if not 1 <= number <= len(lines):
        raise IndexError(f"line {number} is outside 1..{len(lines)}")
    return lines[number - 1]


def wrap_bytes(raw: bytes, width: int = 96) -> str:
    """``repr(raw)`` wrapped to ``width`` columns, so a long line stays readable."""
    return "\n".join(textwrap.wrap(repr(raw), width=width, break_on_hyphens=False))


def file_scan_frame(
    paths: Sequence[str | Path], needles: Sequence[str], *, show: Callable[[Path], str] = str
) -> pd.DataFrame:
    """For each file: its size, line count, and whether each needle occurs in its raw bytes.

    ``show`` turns a path into the text displayed (pass ``Workspace.show``).
    """
    rows = []
    for path in paths:
        data = Path(path).read_bytes()
        row: dict[str, Any] = {
            "file": show(Path(path)),
            "bytes": len(data),
            "lines": data.count(b"\n"),
        }
        for needle in needles:
            row[f"contains {needle!r}"] = needle.encode("utf-8") in data
        rows.append(row)
    return pd.DataFrame(rows)


_UNIT_SECONDS = {"days": 86_400.0, "hours": 3_600.0, "minutes": 60.0}


def capture_lag(record: StoredMemory, unit: str = "days") -> float:
    """``stored_at - source.captured_at`` of ``record`` in ``unit`` (days, hours, minutes)."""
    if unit not in _UNIT_SECONDS:
        raise ValueError(f"unit must be one of {sorted(_UNIT_SECONDS)}, got {unit!r}")
    delta = parse_timestamp(record.stored_at, "stored_at") - parse_timestamp(
        record.source.captured_at, "captured_at"
    )
    return delta.total_seconds() / _UNIT_SECONDS[unit]


@with_chart_fonts
def capture_lag_chart(
    records: Sequence[StoredMemory],
    *,
    unit: str = "days",
    log: bool = False,
    label_ids: bool | Iterable[str] | None = None,
    title: str | None = None,
    legend_loc: str = "upper left",
) -> Figure:
    """When each record happened (x) against how long it waited to be stored (y).

    A point on the zero line was stored the moment it happened; a point above it was
    stored later (an import, a backfill, a nightly sync): the lag a single timestamp
    would hide. ``unit`` is days, hours or minutes; ``log`` uses a log y axis (every lag
    must then be positive). ``label_ids``: True labels every point, an iterable labels
    those memory_ids, None labels every point when there are at most 12.
    ``legend_loc`` is passed to ``ax.legend`` (move it off your labelled points).
    """
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    if not records:
        ax.text(0.5, 0.5, "no records", ha="center", va="center", transform=ax.transAxes)
        return fig
    captured = [parse_timestamp(r.source.captured_at, "captured_at") for r in records]
    lags = [capture_lag(r, unit) for r in records]
    if log and min(lags) <= 0:
        raise ValueError("a log axis needs every lag > 0; use log=False")
    if not log:
        ax.axhline(0, color="#999999", linewidth=1, linestyle="--", zorder=1)
    for kind in MemoryKind:
        chosen = [i for i, r in enumerate(records) if r.kind is kind]
        if chosen:
            ax.scatter(
                [captured[i] for i in chosen],
                [lags[i] for i in chosen],
                s=26,
                alpha=0.75,
                color=KIND_COLOURS[kind.value],
                label=f"{kind.value} ({len(chosen)})",
                zorder=2,
                edgecolors="white",
                linewidths=0.5,
            )
    if label_ids is None:
        label_ids = len(records) <= 12
    if label_ids is True:
        wanted = {r.memory_id for r in records}
    elif label_ids is False:
        wanted = set()
    else:
        wanted = set(label_ids)
    for record, x, y in zip(records, captured, lags, strict=True):
        if record.memory_id in wanted:
            ax.annotate(
                record.memory_id,
                (x, y),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=7,
                color="#444444",
                rotation=30,
            )
    locator = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    if log:
        ax.set_yscale("log")
        ax.set_ylim(min(lags) / 2, max(lags) * 6)
    else:
        top = max(max(lags), 1.0)
        ax.set_ylim(min(min(lags), 0.0) - 0.08 * top, top * 1.35)
    ax.set_xlabel("source.captured_at (when it happened)")
    ax.set_ylabel(f"stored_at - captured_at ({unit}{', log' if log else ''})")
    ax.set_title(title or "Two clocks per record: how late did each reach the store?", loc="left")
    ax.legend(loc=legend_loc, frameon=False)
    fig.tight_layout()
    return fig


def stored_vs_recalled_frame(record: StoredMemory, hit: RecallHit) -> pd.DataFrame:
    """The same memory twice: the StoredMemory fields beside the RecallHit fields.

    Rows are aligned by meaning (identity, owner, source, time, text, query-only parts);
    a dash marks a field the object does not have.
    """
    b = hit.score_breakdown
    rows = [
        ("identity", f"memory_id={record.memory_id}", f"memory_id={hit.memory_id}"),
        ("owner", f"user_scope={record.user_scope}", f"scope.user_scope={hit.scope.user_scope}"),
        ("kind", f"kind={record.kind.value}", f"scope.memory_kind={hit.scope.memory_kind.value}"),
        (
            "source",
            f"source.source_id={record.source.source_id}",
            f"provenance.source_id={hit.provenance.source_id}",
        ),
        (
            "happened",
            f"source.captured_at={record.source.captured_at}",
            f"provenance.captured_at={hit.provenance.captured_at}",
        ),
        ("stored", f"stored_at={record.stored_at}", "—"),
        ("text", f"summary={record.summary} (+ content)", f"snippet={hit.snippet}"),
        ("which query", "—", f"query_id={hit.query_id}"),
        ("rank", "—", f"rank={hit.rank}"),
        (
            "why",
            "—",
            f"total={b.total} (lexical {b.lexical_contribution} "
            f"+ recency {b.recency_contribution})",
        ),
        ("lifetime", "forever (append-only)", "this one query"),
    ]
    return pd.DataFrame(rows, columns=["aspect", "StoredMemory", "RecallHit"])


@with_chart_fonts
def two_paths_diagram() -> Figure:
    """The chapter's two paths from one store: profile at session start, history by tool."""
    fig, ax = plt.subplots(figsize=(8.4, 3.8))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 52)
    ax.axis("off")
    grey = "#444444"
    green = KIND_COLOURS["conversation"]
    orange = KIND_COLOURS["profile"]

    def box(x: float, y: float, w: float, h: float, text: str, colour: str) -> None:
        ax.add_patch(
            FancyBboxPatch(
                (x, y),
                w,
                h,
                boxstyle="round,pad=0.6",
                facecolor=colour,
                edgecolor=grey,
                linewidth=1,
            )
        )
        if text:
            ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8.5)

    def arrow(x0: float, y0: float, x1: float, y1: float, colour: str = grey) -> None:
        ax.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": 1.2},
        )

    def note(x: float, y: float, text: str, colour: str = grey, **kw: Any) -> None:
        ax.text(x, y, text, fontsize=7.5, color=colour, **kw)

    box(1, 21, 15, 10, "StoredMemory\nJSONL store\n(append-only)", "#e5e5e5")
    # profile path (top): once per session
    box(27, 38, 20, 8, "latest PROFILE\nby captured_at", orange + "33")
    box(56, 38, 20, 8, "<remote_profile>\nin system prompt", orange + "33")
    box(85, 38, 13, 8, "model", "#ffffff")
    arrow(17, 31, 26, 41, orange)
    note(20.5, 39.5, "session start", orange, ha="right")
    arrow(47.6, 42, 55.4, 42, orange)
    arrow(76.6, 42, 84.4, 42, orange)
    # history path (bottom): only when the model asks
    box(27, 4, 63, 10, "", green + "22")
    stages = ["normalize", "candidate", "score", "stable rank", "render"]
    for i, stage in enumerate(stages):
        ax.text(31.5 + i * 13.5, 9, stage, ha="center", va="center", fontsize=8.5)
        if i:
            arrow(31.5 + (i - 1) * 13.5 + 5.6, 9, 31.5 + i * 13.5 - 5.6, 9, green)
    arrow(17, 21, 26, 11, green)
    note(20.5, 12.5, "CONVERSATION\nrecords", green, ha="right", va="top")
    arrow(93, 15.4, 93, 36.6, green)
    note(92, 26, "<recalled_context>", green, ha="right", va="center")
    note(
        58.5,
        18.5,
        "only when the model calls recall_history(query)",
        green,
        ha="center",
        style="italic",
    )
    ax.set_title("Two paths out of one store", loc="left")
    fig.tight_layout()
    return fig


def scope_widget(initial: str = "alice") -> Any:
    """A text box for a user id; shows the hashed key, user_scope and file name as you type."""
    import ipywidgets as widgets

    box = widgets.Text(value=initial, description="user_id", continuous_update=True)
    shown = widgets.HTML()

    def render(user_id: str) -> str:
        view = scope_view(user_id)
        if view["error"]:
            return f"<b>rejected</b>: {html.escape(view['error'])}"
        return (
            f"hashed key <code>{html.escape(view['key'])}</code> → user_scope "
            f"<code>{view['user_scope']}</code> → file <code>{view['file']}</code>"
        )

    def update(change: dict[str, Any]) -> None:
        shown.value = render(change["new"])

    box.observe(update, names="value")
    shown.value = render(initial)
    return widgets.VBox([box, shown])


# -- the exercise: predict what five appends do -------------------------------------------------


def user_store(root: str | Path, user_id: str) -> RemoteMemoryStore:
    """The store of ``user_id`` under ``root``: ``users/memories-<user_scope>.jsonl``,
    one file per user scope, as the runtime names them (notebook 01, section 5)."""
    return RemoteMemoryStore(
        Path(root) / "users" / f"memories-{user_scope_for(user_id)}.jsonl", user_id=user_id
    )


# label -> (user_id, memory_id): appended in this order, each through user_store(...).
EXERCISE_APPENDS: dict[str, tuple[str, str]] = {
    "A": ("Dana", "note-1"),
    "B": (" dana ", "note-2"),
    "C": ("DANA", "note-1"),
    "D": ("Dana Okafor", "note-1"),
    "E": ("dana", "note 3"),
}
_EXERCISE_LABELS = (*EXERCISE_APPENDS, "files")
_EXERCISE_SOURCE = MemorySource(
    "chat-9", "conversation_transcript", "notes", "2026-08-01T08:00:00Z"
)

_HINTS = {
    "A": "nothing is stored for this user yet: is anything wrong with the call itself?",
    "B": "strip and casefold the user id: whose store is this, and is its memory_id taken?",
    "C": "which user is 'DANA' after strip + casefold, and which ids are already in that "
    "user's file?",
    "D": "memory_ids are unique per store, not across users: is 'dana okafor' the key 'dana'?",
    "E": "look at the memory_id itself: which characters may an id contain?",
    "files": "one file per user_scope: how many different keys do the five user ids give, "
    "and does a rejected append create a file?",
}


def exercise_frame() -> pd.DataFrame:
    """The five appends of the exercise, in order (user ids shown with their spaces)."""
    return pd.DataFrame(
        [
            (label, f"user_store({user_id!r}).append(memory_id={memory_id!r}, ...)")
            for label, (user_id, memory_id) in EXERCISE_APPENDS.items()
        ],
        columns=["call", "code"],
    )


def exercise_truth() -> dict[str, str | int | None]:
    """Run the five appends in a temporary directory: each label's error class name (None
    when the line was written), and ``"files"``: how many store files hold records."""
    truth: dict[str, str | int | None] = {}
    with tempfile.TemporaryDirectory(prefix="memorylib-01-") as tmp:
        for label, (user_id, memory_id) in EXERCISE_APPENDS.items():
            error, _ = typed_attempt(
                lambda user_id=user_id, memory_id=memory_id: user_store(tmp, user_id).append(
                    kind=MemoryKind.CONVERSATION,
                    memory_id=memory_id,
                    content="a note",
                    summary="a note",
                    source=_EXERCISE_SOURCE,
                    stored_at="2026-08-01T08:00:00Z",
                )
            )
            truth[label] = None if error == NO_ERROR else error
        files = [p for p in (Path(tmp) / "users").glob("memories-*.jsonl") if p.stat().st_size]
        truth["files"] = len(files)
    return truth


def _same(given: object, expected: str | int | None) -> bool:
    if isinstance(expected, int):
        return type(given) is int and given == expected  # not a bool, not "2"
    return error_name(given, no_error=("written",)) == expected


def _shown(given: object) -> str:
    if isinstance(given, int | float) and not isinstance(given, bool):
        return repr(given)
    name = error_name(given, no_error=("written",))
    return "None (written)" if name is None else repr(name)


def check_append_predictions(answer: object) -> CheckResult:
    """Self-check for notebook 01: ``answer`` maps "A".."E" to the error class (or its
    name) each append raises, or None when it writes its line, and ``"files"`` to the
    number of store files holding records. Right when all six are right; wrong with one
    hint per wrong key; not answered while the placeholder ``...`` is there."""

    def judge(answer: object) -> CheckResult:
        given = expect_labels(
            answer,
            _EXERCISE_LABELS,
            "a dict from 'A'..'E' (an error class, its name, or None) and 'files' (an int)",
        )
        truth = exercise_truth()
        mistakes = grade_labels(truth, given, _HINTS, same=_same, shown=_shown)
        if mistakes is not None:
            return mistakes
        named = {label: value if value is not None else "written" for label, value in truth.items()}
        return right(f"All {len(truth)} right: {named}.")

    return check_value(
        answer, judge, placeholder='a dict like {"A": SomeErrorClass, ..., "files": 0}'
    )


# -- optional stretch: write user_scope_for yourself ---------------------------------------------


def _scope(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


SCOPE_EXERCISE = FunctionExercise(
    function="user_scope_for",
    reference=user_scope_for,
    # named first: the ids a careless version gets wrong
    examples=tuple(
        Named(repr(user_id), Call(user_id))
        for user_id in (
            "alice",
            "  Alice ",
            "ALICE\t",
            "Dana.Okafor@Northwind.example",
            "Straße",
            "ΣΊΣΥΦΟΣ",
            "会话-用户",
        )
    ),
    cases=st.builds(
        lambda before, text, after: before + text + after,
        st.sampled_from(("", " ", "\t")),
        st.text("abcdeXYZ.@-_ßΣσς会话İ ", min_size=1, max_size=12).filter(str.strip),
        st.sampled_from(("", " ", "\n")),
    ).map(Call),
    mistakes=(
        Mistake(
            "lower() instead of casefold()",
            "casefold() is a stronger lower(): 'Straße' and 'STRASSE' are one user.",
            lambda user_id: _scope(user_id.strip().lower()),
        ),
        Mistake(
            "not stripped",
            "Strip the spaces around the id first: '  Alice ' is the user 'alice'.",
            lambda user_id: _scope(user_id.casefold()),
        ),
        Mistake(
            "case not folded",
            "Fold the case (casefold()): 'Alice' and 'alice' are one user.",
            lambda user_id: _scope(user_id.strip()),
        ),
        Mistake(
            "the whole digest",
            "A user_scope is the FIRST 16 hex characters of the digest: hexdigest()[:16].",
            lambda user_id: hashlib.sha256(user_id.strip().casefold().encode()).hexdigest(),
        ),
    ),
    generated=200,
)


def check_scope_function(answer: object) -> CheckResult:
    """Optional stretch of notebook 01: ``answer`` is a function computing a user_scope,
    checked against ``user_scope_for`` on named ids, then on 200 generated ones."""
    return check_value(
        answer,
        lambda function: check_function(SCOPE_EXERCISE, function),
        placeholder="a function my_user_scope(user_id) -> str",
    )
