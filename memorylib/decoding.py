"""``from_dict`` for the contract's dataclasses, driven by their fields.

``decode_fields(cls, payload, what)`` reads a JSON object into ``cls``: the keys must
be exactly the dataclass's fields and every value must fit the field's annotation.
Each type of field has one small checker; the checkers of a class are read from its
annotations once. A value that does not fit raises ``RemoteMemoryCorruptionError``
(or the ``error`` the caller names, e.g. the course data's ``CourseDataError``), with
a message that names the field.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, TypeVar

from .errors import RemoteMemoryCorruptionError, RemoteMemoryError
from .timestamps import parse_timestamp

__all__ = ["Timestamp", "decode_fields"]

Timestamp = Annotated[str, "timestamp"]  # an ISO-8601 str, kept as written
D = TypeVar("D")

Decoder = Callable[[object, str, type[RemoteMemoryError]], Any]


def decode_fields(
    cls: type[D],
    payload: object,
    what: str,
    *,
    optional: frozenset[str] | None = None,
    error: type[RemoteMemoryError] = RemoteMemoryCorruptionError,
    field_prefix: str | None = None,
) -> D:
    """``cls(**payload)`` with every field checked against its annotation, or ``error``.

    Keys must be exactly the fields (``optional`` ones, by default those with a
    default value, may be absent). Types: a non-empty ``str``; ``Timestamp`` (a
    non-empty ISO-8601 str); ``int`` and ``float`` (never ``bool``); an enum value;
    ``tuple[X, ...]`` from a list; ``X | None``; a nested dataclass (its ``from_dict``).
    A field is named ``what.field`` in messages, or ``field_prefix + field``.
    """
    if not isinstance(payload, Mapping):
        raise error(f"{what} must be a JSON object, got {type(payload).__name__}")
    decoders, defaults = _field_decoders(cls)
    if optional is None:
        optional = defaults
    missing = decoders.keys() - optional - payload.keys()
    if missing:
        raise error(f"{what} is missing {', '.join(sorted(missing))}")
    extra = payload.keys() - decoders.keys()
    if extra:
        raise error(f"{what} has unknown field(s) {', '.join(sorted(map(str, extra)))}")
    prefix = f"{what}." if field_prefix is None else field_prefix
    values = {
        name: decode(payload[name], prefix + name, error)
        for name, decode in decoders.items()
        if name in payload
    }
    return cls(**values)


@functools.cache
def _field_decoders(cls: type) -> tuple[dict[str, Decoder], frozenset[str]]:
    """Each field's decoder, read once per class from its annotations; and the fields
    that have a default."""
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = dataclasses.fields(cls)
    decoders = {f.name: _decoder(hints[f.name]) for f in fields}
    return decoders, frozenset(f.name for f in fields if f.default is not dataclasses.MISSING)


def _decoder(hint: Any) -> Decoder:
    """A function that checks one JSON value against ``hint`` and returns the field value."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:  # Timestamp: a str that must parse
        return _timestamp_text
    if origin in (types.UnionType, typing.Union):  # X | None
        (inner,) = [arg for arg in args if arg is not type(None)]
        decode_inner = _decoder(inner)
        return lambda value, where, error: (
            None if value is None else decode_inner(value, where, error)
        )
    if origin is tuple:  # tuple[X, ...]
        decode_item = _decoder(args[0])

        def decode_tuple(value: object, where: str, error: type[RemoteMemoryError]) -> tuple:
            if not isinstance(value, list | tuple):
                raise error(f"{where} must be a list")
            return tuple(decode_item(item, f"{where}[]", error) for item in value)

        return decode_tuple
    if hint is datetime:
        return lambda value, where, error: parse_timestamp(
            _timestamp_text(value, where, error), where
        )
    if isinstance(hint, type) and issubclass(hint, Enum):
        return functools.partial(_enum, hint)
    if dataclasses.is_dataclass(hint):
        return lambda value, where, error: hint.from_dict(value)  # type: ignore[union-attr]
    simple = {str: _text, int: _integer, float: _number}
    if hint in simple:
        return simple[hint]
    raise TypeError(f"decode_fields cannot read {hint!r}")  # a new field type: teach it here


def _text(value: object, where: str, error: type[RemoteMemoryError]) -> str:
    if not isinstance(value, str) or not value:
        raise error(f"{where} must be a non-empty string")
    return value


def _timestamp_text(value: object, where: str, error: type[RemoteMemoryError]) -> str:
    text = _text(value, where, error)
    try:
        parse_timestamp(text, where)
    except RemoteMemoryError as exc:
        raise error(str(exc)) from None
    return text


def _integer(value: object, where: str, error: type[RemoteMemoryError]) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{where} must be an integer")
    return value


def _number(value: object, where: str, error: type[RemoteMemoryError]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"{where} must be a number")
    return float(value)


def _enum(kind: type[Enum], value: object, where: str, error: type[RemoteMemoryError]) -> Enum:
    try:
        return kind(value)
    except (ValueError, TypeError):
        raise error(f"{where} {value!r} is not a {kind.__name__}") from None
