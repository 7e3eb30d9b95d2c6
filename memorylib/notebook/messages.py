"""Every sentence the course's helpers write: ``catalogue/<language>/<topic>.txt``, ``key: text``
lines (a two-space indent continues after a space, ``  |`` after a line break; ``#`` comments);
``say("topic.key", **values)`` fills one with ``str.format``; a missing key is an error."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from typing import Any

DEFAULT_LANGUAGE = "en"
_current = [DEFAULT_LANGUAGE]
_LINE = re.compile(r"^(\S+): ?(.*)$")
# The characters a fixed-width font draws two columns wide (CJK, Hangul, full-width forms).
WIDE = "\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"


def languages() -> tuple[str, ...]:
    """The languages with a catalogue."""
    root = files(__package__).joinpath("catalogue")
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir()))


def set_language(language: str) -> None:
    """Choose the catalogue every later ``say`` reads (one setting for the whole kernel)."""
    if language not in languages():
        raise ValueError(f"no catalogue for {language!r}; there are {', '.join(languages())}")
    _current[0] = language


def language() -> str:
    return _current[0]


def parse(text: str, where: str = "<catalogue>") -> dict[str, str]:
    """The ``key: text`` lines of one catalogue file, continuations joined."""
    entries: dict[str, str] = {}
    key = None
    for number, line in enumerate(map(str.rstrip, text.splitlines()), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("  ") and key is not None:
            entries[key] += "\n" + line[4:] if line.startswith("  |") else " " + line[2:]
            continue
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"{where}:{number}: not 'key: text': {line!r}")
        key, body = match.groups()
        if key in entries:
            raise ValueError(f"{where}:{number}: {key!r} is written twice")
        entries[key] = body
    return entries


@cache
def catalogue(language: str, topic: str) -> dict[str, str]:
    """Every entry of ``catalogue/<language>/<topic>.txt``."""
    path = files(__package__).joinpath("catalogue", language, f"{topic}.txt")
    return parse(path.read_text(encoding="utf-8"), f"{language}/{topic}.txt")


def say(key: str, **values: Any) -> str:
    """The sentence ``key`` (``topic.rest``) of the current language, ``values`` filled in."""
    topic, _, rest = key.partition(".")
    entries = catalogue(_current[0], topic)
    if rest not in entries:
        raise KeyError(f"{key!r}: no entry {rest!r} in {_current[0]}/{topic}.txt")
    return entries[rest].format(**values)


class Said:
    """A sentence looked up when it is shown, not when it is made: a module-level text (a
    mistake's name, a hint, a label) follows ``set_language`` even when it was built at import.
    It prints, formats, compares, sorts and hashes as its text, and str's methods answer for
    its text (``said.startswith(...)``); ``str(said)`` is the text itself."""

    def __init__(self, key: str, values: tuple[tuple[str, Any], ...] = ()) -> None:
        self.key, self.values = key, values

    def __str__(self) -> str:
        return say(self.key, **dict(self.values))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return repr(str(self))

    def __getattr__(self, name: str) -> Any:  # str's methods, on the text
        if name.startswith("__") or name in ("key", "values"):
            raise AttributeError(name)
        return getattr(str(self), name)

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other) if isinstance(other, str | Said) else NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __lt__(self, other: object) -> bool:
        return str(self) < str(other)

    def __gt__(self, other: object) -> bool:
        return str(self) > str(other)

    def __len__(self) -> int:
        return len(str(self))

    def __contains__(self, part: str) -> bool:
        return part in str(self)

    def __add__(self, other: str) -> str:
        return str(self) + other

    def __radd__(self, other: str) -> str:
        return other + str(self)


def said(key: str, **values: Any) -> Said:
    """``say(key, **values)``, looked up each time it is shown (see ``Said``)."""
    topic, _, rest = key.partition(".")
    if rest not in catalogue(DEFAULT_LANGUAGE, topic):
        raise KeyError(f"{key!r}: no entry {rest!r} in {DEFAULT_LANGUAGE}/{topic}.txt")
    return Said(key, tuple(sorted(values.items())))


def columns(text: object) -> int:
    """How many columns ``str(text)`` takes in a fixed-width font: a Chinese character takes two."""
    return len(str(text)) + len(re.findall(f"[{WIDE}]", str(text)))


def fitted(text: object, width: int) -> str:
    """``str(text)`` cut to at most ``width`` columns, then padded with spaces to exactly that:
    ``f"{text:{width}.{width}}"`` for a line that may hold Chinese."""
    kept = ""
    for character in str(text):
        if columns(kept + character) > width:
            break
        kept += character
    return kept + " " * (width - columns(kept))


def joined(parts: Iterable[object]) -> str:
    """``parts`` as one run of clauses in the current language: ``a; b`` in English, ``a；b`` in
    Chinese (the mark is ``common.clauses``; an ASCII mark takes a space after it)."""
    mark = say("common.clauses")
    return (mark + " " if mark.isascii() else mark).join(map(str, parts))
