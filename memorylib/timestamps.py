"""Timestamps: the one place ISO-8601 text becomes a ``datetime`` and back.

* A timestamp is an ISO-8601 string or a ``datetime``. A naive ``datetime`` or a
  string without a UTC offset is taken as UTC.
* Stored timestamps are re-emitted in UTC with a ``Z`` suffix
  (``2026-08-01T12:00:00Z``; microseconds only when non-zero).
* ``TEACHING_AS_OF`` is the teaching clock, the one moment the contract fixes for the
  seeded store (conversation-003 is one day old then; the chapter states no as_of).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from .checks import type_name
from .errors import RemoteMemoryValidationError

__all__ = [
    "SECONDS_PER_DAY",
    "TEACHING_AS_OF",
    "age_in_days",
    "canonical_timestamp",
    "epoch_micros",
    "format_timestamp",
    "parse_timestamp",
    "utc_now",
]

TEACHING_AS_OF = "2026-08-02T12:00:00Z"
SECONDS_PER_DAY = 86_400.0
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def parse_timestamp(value: object, field: str) -> datetime:
    """An ISO-8601 str or a datetime as an aware UTC datetime; else a named error."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        if not value.strip():
            raise RemoteMemoryValidationError(f"{field} must not be empty")
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise RemoteMemoryValidationError(
                f"{field} {value[:40]!r} is not an ISO-8601 timestamp "
                "(expected e.g. 2026-08-01T12:00:00Z)"
            ) from None
    else:
        raise RemoteMemoryValidationError(
            f"{field} must be an ISO-8601 str or a datetime, got {type_name(value)}"
        )
    if parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-01:00 is past datetime.max in UTC
        raise RemoteMemoryValidationError(
            f"{field} {str(value)[:40]!r} is outside the years 1-9999 once converted to UTC"
        ) from None


def format_timestamp(moment: datetime) -> str:
    """Canonical UTC form with a ``Z`` suffix (microseconds only when present)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None)
    spec = "microseconds" if naive.microsecond else "seconds"
    return naive.isoformat(timespec=spec) + "Z"


def canonical_timestamp(value: object, field: str) -> str:
    return format_timestamp(parse_timestamp(value, field))


def utc_now() -> datetime:
    return datetime.now(UTC)


def epoch_micros(moment: datetime) -> int:
    """Exact integer microseconds since the epoch (floats would blur close times)."""
    return (moment - _EPOCH) // _MICROSECOND


def age_in_days(captured_at: datetime, as_of: datetime) -> float:
    """Days from capture to ``as_of``; a capture after ``as_of`` counts as age 0."""
    return max(0.0, (as_of - captured_at).total_seconds() / SECONDS_PER_DAY)
