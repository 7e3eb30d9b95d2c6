"""Input checks and timestamp rules shared by every public entry point.

Documented rules (the README repeats them):

* Text fields must be ``str`` (``None``, ``bytes`` and numbers are rejected) and are
  whitespace-folded: every run of Unicode whitespace becomes one space, ends trimmed.
* Characters XML 1.0 cannot carry (C0 controls other than tab/LF/CR, lone
  surrogates, U+FFFE, U+FFFF) are rejected on write, so everything stored can be
  rendered into the prompt's XML unchanged. The renderer still replaces them with
  U+FFFD if a file written by another tool contains them.
* Timestamps are ISO-8601 strings or ``datetime`` objects. A naive ``datetime`` or a
  string without a UTC offset is taken as UTC. Stored timestamps are re-emitted in
  UTC with a ``Z`` suffix (``2026-08-01T12:00:00Z``; microseconds only when non-zero).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from .errors import RemoteMemoryValidationError

XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MEMORY_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")


def type_name(value: object) -> str:
    return type(value).__name__


def fold_whitespace(text: str) -> str:
    return " ".join(text.split())


def require_text(value: object, field: str, *, max_chars: int) -> str:
    """Return ``value`` whitespace-folded, or raise naming ``field``."""
    if not isinstance(value, str):
        raise RemoteMemoryValidationError(f"{field} must be a str, got {type_name(value)}")
    folded = fold_whitespace(value)
    if not folded:
        raise RemoteMemoryValidationError(f"{field} must not be empty or only whitespace")
    if len(folded) > max_chars:
        raise RemoteMemoryValidationError(
            f"{field} is {len(folded)} characters after whitespace folding; "
            f"the limit is {max_chars}"
        )
    bad = XML_ILLEGAL.search(folded)
    if bad:
        raise RemoteMemoryValidationError(
            f"{field} contains U+{ord(bad.group()):04X} at position {bad.start()}, "
            "a character XML cannot carry; remove it before storing"
        )
    return folded


def require_memory_id(value: object, field: str = "memory_id") -> str:
    if not isinstance(value, str):
        raise RemoteMemoryValidationError(f"{field} must be a str, got {type_name(value)}")
    if not MEMORY_ID_PATTERN.fullmatch(value):
        raise RemoteMemoryValidationError(
            f"{field} {value[:40]!r} is not a valid id: use 1-128 characters from "
            "A-Z a-z 0-9 . _ : @ -, starting with a letter or digit"
        )
    return value


def require_limit(value: object, field: str = "limit") -> int:
    # bool is an int subclass: True would silently mean 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise RemoteMemoryValidationError(
            f"{field} must be an int between 1 and 10, got {type_name(value)} {value!r}"
        )
    if not 1 <= value <= 10:
        raise RemoteMemoryValidationError(f"{field} must be between 1 and 10, got {value}")
    return value


def parse_timestamp(value: object, field: str) -> datetime:
    """Parse an ISO-8601 string or a datetime into an aware UTC datetime."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise RemoteMemoryValidationError(f"{field} must not be empty")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise RemoteMemoryValidationError(
                f"{field} {value[:40]!r} is not an ISO-8601 timestamp "
                "(expected e.g. 2026-08-01T12:00:00Z)"
            ) from None
    else:
        raise RemoteMemoryValidationError(
            f"{field} must be an ISO-8601 str or a datetime, got {type_name(value)}"
        )
    if parsed.tzinfo is None or parsed.utcoffset() is None:
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
