"""The playground's data: three datasets, and one read-only engine per (dataset, user).

``PlaygroundCatalog`` builds each (dataset, user) store once per kernel, on first use,
in a temporary directory: the chapter's records, the course corpus, and a generated
10,000-record store per user (bulk-written by ``memorylib.synthetic``). A user who owns
nothing in a dataset gets an empty store of their own. Nothing here is a view: the
model (``model.py``) reads these engines and never writes.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from memorylib.datasets import (
    CHAPTER_USER,
    COURSE_AS_OF,
    COURSE_USERS,
    build_chapter_store,
    build_course_store,
)
from memorylib.engine import RecallEngine
from memorylib.interface import user_scope_for
from memorylib.ranking import ScoreFunction
from memorylib.seed import TEACHING_AS_OF
from memorylib.store import RemoteMemoryStore
from memorylib.synthetic import write_synthetic_store
from memorylib.timestamps import CHAPTER_CLOCK

__all__ = [
    "DATASETS",
    "GENERATED_AS_OF",
    "GENERATED_RECORDS",
    "USERS",
    "DatasetSpec",
    "PlaygroundCatalog",
]

GENERATED_RECORDS = 10_000
# memorylib.synthetic's newest capture is 2026-08-01: read the generated stores at the
# chapter's clock, a day and a half later.
GENERATED_AS_OF = CHAPTER_CLOCK
USERS: tuple[str, ...] = (CHAPTER_USER, *COURSE_USERS)


@dataclass(frozen=True)
class DatasetSpec:
    key: str
    label: str
    as_of: str  # the dataset's clock: the playground's default as_of for it
    default_user: str
    about: str


DATASETS: dict[str, DatasetSpec] = {
    spec.key: spec
    for spec in (
        DatasetSpec(
            "chapter",
            "chapter demo (7 records)",
            TEACHING_AS_OF,
            CHAPTER_USER,
            "the chapter's teaching store: one profile and six conversations of local-user",
        ),
        DatasetSpec(
            "course",
            "course corpus (Northwind Labs)",
            COURSE_AS_OF,
            COURSE_USERS[0],
            "a year of four engineers' memories, English and Chinese, with retractions",
        ),
        DatasetSpec(
            "generated",
            f"generated ({GENERATED_RECORDS:,} records)",
            GENERATED_AS_OF,
            COURSE_USERS[0],
            f"{GENERATED_RECORDS:,} seeded synthetic records per user (memorylib.synthetic)",
        ),
    )
}


# -- stores -------------------------------------------------------------------------------


class PlaygroundCatalog:
    """One read-only ``RecallEngine`` per (dataset, user), built on first use and kept.

    A user who owns nothing in a dataset (every course user in the chapter demo, for
    instance) gets an empty store of their own: recall searches 0 records. Stores live
    in ``root`` (default: a temporary directory removed with the catalog). It also holds
    the scoring function of your own that the "yours" scorer runs (``use_scorer``).
    """

    def __init__(
        self, root: str | Path | None = None, *, generated_records: int = GENERATED_RECORDS
    ) -> None:
        if root is None:  # removed when the catalog is garbage-collected or the kernel exits
            self._tmp = tempfile.TemporaryDirectory(prefix="memorylib-playground-")
            self.root = Path(self._tmp.name)
        else:
            self.root = Path(root)
        self.generated_records = generated_records
        self._engines: dict[tuple[str, str], RecallEngine] = {}
        self.build_seconds: dict[tuple[str, str], float] = {}
        self.own_scorer: ScoreFunction | None = None

    def use_scorer(self, score: ScoreFunction | None) -> None:
        """Register a scoring function of your own (``score_recall_candidate``'s signature)
        as the playground's "yours" scorer; ``None`` removes it."""
        if score is not None and not callable(score):
            raise TypeError(f"use_scorer takes a scoring function, not {type(score).__name__}")
        self.own_scorer = score

    def is_built(self, dataset: str, user: str) -> bool:
        return (dataset, user) in self._engines

    def engine(self, dataset: str, user: str) -> RecallEngine:
        key = (dataset, user)
        if key not in self._engines:
            if dataset not in DATASETS:
                raise KeyError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
            start = time.perf_counter()
            engine = RecallEngine(self._build(dataset, user))
            # warm the inverted index, so later recalls measure recall, not indexing
            engine.recall("warm up", limit=1, as_of=DATASETS[dataset].as_of, query_id="warm")
            self._engines[key] = engine
            self.build_seconds[key] = time.perf_counter() - start
        return self._engines[key]

    def store(self, dataset: str, user: str) -> RemoteMemoryStore:
        return self.engine(dataset, user).store

    def _build(self, dataset: str, user: str) -> RemoteMemoryStore:
        folder = self.root / dataset
        folder.mkdir(parents=True, exist_ok=True)
        empty = RemoteMemoryStore(folder / f"{user_scope_for(user)}.jsonl", user_id=user)
        if dataset == "chapter":
            return build_chapter_store(folder) if user == CHAPTER_USER else empty
        if dataset == "course":
            return build_course_store(folder, user) if user in COURSE_USERS else empty
        return write_synthetic_store(
            empty.path,
            self.generated_records,
            seed=USERS.index(user) if user in USERS else 0,
            user_id=user,
            bulk=True,
        )
