"""Small seeded generators and shrinkers the stage exercises share.

Generated inputs are small on purpose (a few characters, a few records): a disagreement
on a small input is one a student can read. Shrinkers propose *smaller* variants of an
input, simplest first; the engine keeps the first one that still disagrees.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["pick_weighted", "replaced", "shrink_sequence", "shrink_text", "weighted_text"]

T = TypeVar("T")


def pick_weighted(rng: random.Random, choices: Sequence[tuple[T, float]]) -> T:
    values = [value for value, _ in choices]
    weights = [weight for _, weight in choices]
    return rng.choices(values, weights=weights, k=1)[0]


def weighted_text(
    rng: random.Random, alphabet: Sequence[tuple[str, float]], *, longest: int = 10
) -> str:
    """A string of 0..``longest`` characters; each from a group picked by weight."""
    length = rng.choice(range(longest + 1))
    return "".join(rng.choice(pick_weighted(rng, alphabet)) for _ in range(length))


def shrink_text(text: str, simpler: str = "a ") -> Iterator[str]:
    """Shorter strings first (halves, then single characters removed), then strings whose
    characters are replaced by simpler ones (``simpler``, in order)."""
    size = len(text) // 2
    while size >= 1:
        for start in range(0, len(text) - size + 1):
            yield text[:start] + text[start + size :]
        size //= 2
    for position, char in enumerate(text):
        for replacement in simpler:
            if char != replacement and char not in simpler[: simpler.index(replacement)]:
                yield text[:position] + replacement + text[position + 1 :]


def replaced(items: tuple[T, ...], position: int, item: T) -> tuple[T, ...]:
    """``items`` with the one at ``position`` replaced by ``item``."""
    return (*items[:position], item, *items[position + 1 :])


def shrink_sequence(items: Sequence[T]) -> Iterator[tuple[T, ...]]:
    """Every tuple with one item removed, the last items first (they matter least)."""
    for position in reversed(range(len(items))):
        yield tuple(items[:position]) + tuple(items[position + 1 :])
