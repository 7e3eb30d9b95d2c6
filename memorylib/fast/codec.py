"""Store lines -> ``StoredMemory`` quickly: the same records ``store.parse_line`` returns.

A line exactly as ``store.encode_line`` writes it for a profile or conversation
record whose strings need no JSON escape has every value as its own text: one regex
match reads them, and the record is built by writing its slots directly (a frozen
dataclass's ``__init__`` sets each field through ``object.__setattr__``; setting the
slots gives an equal object in about half the time). Every other line (an escape, a
retraction, an offset timestamp, any fault) goes to the reference ``parse_line``, so
errors and their messages are the reference's. ``tests/test_fast_equivalence.py``
checks ``decode_line`` against ``parse_line`` on valid, mutated and random lines.

``capture_micros`` reads the capture times of thousands of stored records at once:
``epoch_micros(parse_timestamp(...))`` of each, with numpy for the canonical shape.
"""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np

from memorylib.records import SCHEMA_VERSION, MemoryKind, MemorySource, StoredMemory
from memorylib.store import parse_line
from memorylib.timestamps import epoch_micros, parse_timestamp

__all__ = ["build_memory", "build_source", "capture_micros", "decode_line"]

# A JSON string without escapes or control characters: its value is its text.
_PLAIN = r'"([^"\\\x00-\x1f]+)"'
_CANONICAL_LINE = re.compile(
    rf'\{{"schema_version":{SCHEMA_VERSION},"memory_id":{_PLAIN},"user_scope":{_PLAIN},'
    rf'"kind":"(conversation|profile)","content":{_PLAIN},"summary":{_PLAIN},'
    rf'"source":\{{"source_id":{_PLAIN},"source_type":{_PLAIN},"title":{_PLAIN},'
    rf'"captured_at":{_PLAIN}\}},"stored_at":{_PLAIN}\}}\Z'
)
_KINDS = {"conversation": MemoryKind.CONVERSATION, "profile": MemoryKind.PROFILE}
_from_isoformat = datetime.fromisoformat


def _clean_utc(value: str) -> bool:
    """A ``...Z`` timestamp ``fromisoformat`` reads as-is: the reference accepts it unchanged."""
    if value[-1:] != "Z":
        return False
    try:
        _from_isoformat(value)
    except ValueError:
        return False
    return True


def decode_line(raw: bytes, lineno: int) -> StoredMemory:
    """``store.parse_line(raw, lineno)``, quicker for the lines the store writes."""
    if raw[:1] == b"{":
        try:
            match = _CANONICAL_LINE.match(raw.decode("utf-8"))
        except UnicodeDecodeError:
            match = None
        if match is not None:
            (
                memory_id,
                scope,
                kind,
                content,
                summary,
                source_id,
                source_type,
                title,
                captured,
                stored,
            ) = match.groups()
            if _clean_utc(captured) and _clean_utc(stored):
                source = build_source(source_id, source_type, title, captured)
                return build_memory(
                    memory_id, scope, _KINDS[kind], content, summary, source, stored
                )
    return parse_line(raw, lineno)


_new = object.__new__
_SOURCE_SETTERS = tuple(MemorySource.__dict__[name].__set__ for name in MemorySource.__slots__)
_MEMORY_SETTERS = tuple(StoredMemory.__dict__[name].__set__ for name in StoredMemory.__slots__)
assert MemorySource.__slots__ == ("source_id", "source_type", "title", "captured_at")
assert StoredMemory.__slots__[:7] == (
    "memory_id",
    "user_scope",
    "kind",
    "content",
    "summary",
    "source",
    "stored_at",
)
assert StoredMemory.__slots__[7:] == ("schema_version", "retracts")


def build_source(source_id: str, source_type: str, title: str, captured_at: str) -> MemorySource:
    """``MemorySource(...)`` for values that already passed the reference checks."""
    source = _new(MemorySource)
    for setter, value in zip(
        _SOURCE_SETTERS, (source_id, source_type, title, captured_at), strict=True
    ):
        setter(source, value)
    return source


def build_memory(
    memory_id: str,
    user_scope: str,
    kind: MemoryKind,
    content: str,
    summary: str,
    source: MemorySource,
    stored_at: str,
) -> StoredMemory:
    """``StoredMemory(...)`` (current schema, no ``retracts``) for checked values."""
    record = _new(StoredMemory)
    values = (
        memory_id,
        user_scope,
        kind,
        content,
        summary,
        source,
        stored_at,
        SCHEMA_VERSION,
        None,
    )
    for setter, value in zip(_MEMORY_SETTERS, values, strict=True):
        setter(record, value)
    return record


# -- capture times -----------------------------------------------------------------------


def _micros(captured_at: str) -> int:
    """``epoch_micros(parse_timestamp(captured_at))``, quicker for the usual ``...Z`` form."""
    if captured_at[-1:] == "Z":
        try:
            return epoch_micros(_from_isoformat(captured_at))  # UTC already
        except ValueError:
            pass
    return epoch_micros(parse_timestamp(captured_at, "captured_at"))


_STAMP = "0000-00-00T00:00:00Z"  # the canonical shape: digits where this has 0
_STAMP_DIGITS = np.array([c == "0" for c in _STAMP])
_STAMP_MARKS = np.frombuffer(_STAMP.encode(), dtype=np.uint8)


def capture_micros(stamps: list[str]) -> np.ndarray:
    """``[epoch_micros(parse_timestamp(s)) for s in stamps]`` as int64, vectorized for
    ``YYYY-MM-DDTHH:MM:SSZ``.

    Every stamp here already passed ``parse_timestamp`` (the store validated it), so one
    of that exact shape names a real date and time; its microseconds since the epoch
    are computed with integer arithmetic (days from the civil date, Hinnant's method).
    Any other shape (fractions, offsets) is parsed one by one.
    """
    out = np.empty(len(stamps), dtype=np.int64)
    if not stamps:
        return out
    blob = "".join(stamps)
    if len(blob) == 20 * len(stamps) and blob.isascii():
        chars = np.frombuffer(blob.encode("ascii"), dtype=np.uint8).reshape(-1, 20)
        digits = chars.astype(np.int64) - ord("0")
        ok = np.all(
            np.where(_STAMP_DIGITS, (digits >= 0) & (digits <= 9), chars == _STAMP_MARKS), axis=1
        )
        d = digits
        year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
        month, day = d[:, 5] * 10 + d[:, 6], d[:, 8] * 10 + d[:, 9]
        hour, minute, second = (
            d[:, 11] * 10 + d[:, 12],
            d[:, 14] * 10 + d[:, 15],
            d[:, 17] * 10 + d[:, 18],
        )
        ok &= hour < 24
        year = year - (month <= 2)
        era = year // 400
        yoe = year - era * 400
        doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
        days = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
        out[:] = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000
        rest = np.flatnonzero(~ok).tolist()
    else:
        rest = range(len(stamps))
    for i in rest:
        out[i] = _micros(stamps[i])
    return out
