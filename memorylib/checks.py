"""Argument checks shared by every public entry point: one rule per kind of value.

Each ``require_...`` returns the value it accepts and otherwise raises
``RemoteMemoryValidationError`` naming the field. Documented rules (the README
repeats them):

* Text fields must be ``str`` (``None``, ``bytes`` and numbers are rejected) and are
  whitespace-folded: every run of Unicode whitespace becomes one space, ends trimmed.
* Characters XML 1.0 cannot carry (C0 controls other than tab/LF/CR, lone
  surrogates, U+FFFE, U+FFFF) are rejected on write, so everything stored can be
  rendered into the prompt's XML unchanged.
* A ``memory_id`` is 1-128 letters, marks and digits of any script plus ``. _ : @ -``,
  starting with a letter or digit ("conversation-003", "会话-003").
* ``limit`` is an ``int`` from 1 to 10 (``True`` and ``5.0`` are rejected, not coerced).
* A store's ``path`` is a ``str`` or ``os.PathLike`` naming a file: not empty, no NUL
  byte, not ``.`` or ``..``.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from .errors import RemoteMemoryValidationError

__all__ = [
    "MAX_MEMORY_ID_CHARS",
    "MEMORY_ID_PUNCTUATION",
    "XML_ILLEGAL",
    "fold_whitespace",
    "is_memory_id",
    "require",
    "require_file_path",
    "require_items",
    "require_limit",
    "require_memory_id",
    "require_number",
    "require_text",
    "type_name",
]

T = TypeVar("T")

XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MAX_MEMORY_ID_CHARS = 128
MEMORY_ID_PUNCTUATION = "._:@-"
MAX_LIMIT = 10


def type_name(value: object) -> str:
    return type(value).__name__


def fold_whitespace(text: str) -> str:
    return " ".join(text.split())


def _a(name: str) -> str:
    return f"an {name}" if name[:1].lower() in "aeio" else f"a {name}"


def require(value: object, expected: type[T], field: str) -> T:
    """``value`` if it is an instance of ``expected``, else "field must be a X, got Y".

    ``bool`` is never accepted where a number is expected (``True`` is not 1 here).
    """
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
        raise RemoteMemoryValidationError(
            f"{field} must be {_a(expected.__name__)}, got {type_name(value)}"
        )
    return value


def require_items(values: object, expected: type[T], field: str) -> tuple[T, ...]:
    """A tuple of the items of iterable ``values``, each an instance of ``expected``."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise RemoteMemoryValidationError(
            f"{field} must be an iterable of {expected.__name__}, got {type_name(values)}"
        )
    items = tuple(values)
    for position, item in enumerate(items):
        require(item, expected, f"{field}[{position}]")
    return items


def require_text(value: object, field: str, *, max_chars: int) -> str:
    """``value`` whitespace-folded: non-empty, at most ``max_chars``, XML-safe."""
    folded = fold_whitespace(require(value, str, field))
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


def _letter_or_digit(char: str) -> bool:
    return unicodedata.category(char)[0] in "LN"


def is_memory_id(value: object) -> bool:
    """True for 1-128 letters, marks, digits and ``. _ : @ -``, starting with a letter/digit."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_MEMORY_ID_CHARS
        and _letter_or_digit(value[0])
        and all(
            unicodedata.category(char)[0] in "LMN" or char in MEMORY_ID_PUNCTUATION
            for char in value
        )
    )


def require_memory_id(value: object, field: str = "memory_id") -> str:
    if not is_memory_id(require(value, str, field)):
        raise RemoteMemoryValidationError(
            f"{field} {value[:40]!r} is not a valid id: use 1-{MAX_MEMORY_ID_CHARS} letters, "
            f"marks and digits (any script) and {' '.join(MEMORY_ID_PUNCTUATION)}, "
            "starting with a letter or digit"
        )
    return value


def require_limit(value: object, field: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RemoteMemoryValidationError(
            f"{field} must be an int between 1 and {MAX_LIMIT}, got {type_name(value)} {value!r}"
        )
    if not 1 <= value <= MAX_LIMIT:
        raise RemoteMemoryValidationError(f"{field} must be between 1 and {MAX_LIMIT}, got {value}")
    return value


def require_number(value: object, field: str) -> float:
    """A finite ``int`` or ``float`` >= 0 (an int too large for a float is rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RemoteMemoryValidationError(f"{field} must be a number, got {type_name(value)}")
    try:
        finite = math.isfinite(value)
    except OverflowError:
        finite = False
    if not finite or value < 0:
        raise RemoteMemoryValidationError(f"{field} must be finite and >= 0, got {value}")
    return value


def require_file_path(value: object, field: str = "path") -> Path:
    """A store's file path as a ``Path`` (not resolved: relative stays relative)."""
    if not isinstance(value, str | os.PathLike):
        raise RemoteMemoryValidationError(
            f"{field} must be a str or os.PathLike, got {type_name(value)}"
        )
    if isinstance(value, str) and not value.strip():
        raise RemoteMemoryValidationError(f"{field} must not be empty")
    try:
        path = Path(value)
    except TypeError:  # an os.PathLike whose __fspath__ returns bytes
        raise RemoteMemoryValidationError(f"{field} must be a str path, got bytes") from None
    if "\0" in str(path) or path.name in ("", ".", ".."):
        raise RemoteMemoryValidationError(
            f"{field} {str(value)[:80]!r} must name a file (no NUL byte, not '.' or '..')"
        )
    return path
