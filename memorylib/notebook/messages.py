"""Every sentence the course's helpers write: ``catalogue/<language>/<topic>.txt``, ``key: text``
lines (a two-space indent continues after a space, ``  |`` after a line break; ``#`` comments);
``say("topic.key", **values)`` fills one with ``str.format``; a missing key is an error."""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from typing import Any

DEFAULT_LANGUAGE = "en"
_current = [DEFAULT_LANGUAGE]
_LINE = re.compile(r"^(\S+): ?(.*)$")


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
