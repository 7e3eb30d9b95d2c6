"""The index, saved beside its store so a new process need not tokenize it all again.

A process that has indexed a large store (``MIN_BYTES`` and more) writes a snapshot of
the index, ``<store>.index``: numpy arrays in one ``.npz`` file (owner-only, written to a
temporary name and renamed, so a reader never sees half of one). A new process loads
it instead of re-reading and re-tokenizing the file, then reads only the lines added
since, as it would after any recall.

The snapshot is a cache, never a source of truth. It is used only when everything it
was built from is still there, byte for byte: it records how many bytes of the store
it covers and their CRC-32, and the loader recomputes that CRC over the store's first
bytes (about 0.1 s for 100 MB); it also records the store's user_scope and the
``FORMAT`` of the tokenizer and arrays. Anything else (a rewritten or shorter store,
another format, a file of another OS user, any read error) and the snapshot is
ignored and the index is built from the file. Writing it is best effort: a read-only
folder or a full disk only means no snapshot.

``save_index`` and ``load_index`` turn an ``IndexState`` (and the ``FileLog`` that read
it) into that file and back; the rest is the file format.
"""

from __future__ import annotations

import json
import os
import uuid
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from .log import FileLog
from .state import IndexState, new_vocabulary

__all__ = [
    "FORMAT",
    "MIN_BYTES",
    "crc_of_prefix",
    "load_index",
    "load_snapshot",
    "pack_strings",
    "save_index",
    "save_snapshot",
    "snapshot_path",
    "unpack_strings",
]

FORMAT = 3  # bump when the arrays or the tokenizer change meaning (3: each doc's source)
MIN_BYTES = 4 << 20  # smaller stores index in well under a second: no snapshot


def snapshot_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".index")


def pack_strings(values: list[str]) -> np.ndarray:
    """Strings without newlines (ids, words) as one UTF-8 array."""
    return np.frombuffer("\n".join(values).encode("utf-8"), dtype=np.uint8)


def unpack_strings(blob: np.ndarray, count: int) -> list[str]:
    if count == 0:
        return []
    return blob.tobytes().decode("utf-8").split("\n")


def save_snapshot(store_path: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bool:
    """Write ``<store>.index`` atomically (0600). False when it could not be written."""
    target = snapshot_path(store_path)
    temp = target.with_name(f"{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    header = np.frombuffer(json.dumps({**meta, "format": FORMAT}).encode("utf-8"), np.uint8)
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, meta=header, **arrays)
        os.replace(temp, target)
    except OSError:
        temp.unlink(missing_ok=True)
        return False
    return True


def load_snapshot(store_path: Path, user_scope: str) -> tuple[dict[str, Any], dict] | None:
    """(meta, arrays) of a snapshot that still matches the store's bytes, else None."""
    target = snapshot_path(store_path)
    try:
        with open(target, "rb") as handle:
            st = os.fstat(handle.fileno())
            if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
                return None
            with np.load(handle, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        meta = json.loads(arrays.pop("meta").tobytes().decode("utf-8"))
    except (OSError, ValueError, KeyError, EOFError, zlib.error, zipfile.BadZipFile):
        return None
    if meta.get("format") != FORMAT or meta.get("user_scope") != user_scope:
        return None
    covered = meta.get("offset")
    if not isinstance(covered, int) or crc_of_prefix(store_path, covered) != meta.get("crc32"):
        return None
    return meta, arrays


def crc_of_prefix(path: Path, size: int, block: int = 8 << 20) -> int | None:
    """CRC-32 of the first ``size`` bytes of ``path``, or None if it is shorter."""
    crc = 0
    try:
        with open(path, "rb") as handle:
            remaining = size
            while remaining:
                data = handle.read(min(block, remaining))
                if not data:
                    return None
                crc = zlib.crc32(data, crc)
                remaining -= len(data)
    except OSError:
        return None
    return crc


# -- an index state as a snapshot, and back ----------------------------------------------------


def save_index(state: IndexState, log: FileLog) -> bool:
    """Save ``state``, read by ``log`` from its file (pending runs are merged first: a
    snapshot holds the CSR arrays only). False when it could not be written, or when
    the state holds another analyzer's terms than the chapter's (built per process)."""
    if not state.analyzer.is_chapter:
        return False
    if state.runs:
        state.merge_runs()
    words = [key for key in state.vocab if isinstance(key, str)]
    codes = [key for key in state.vocab if isinstance(key, int)]
    meta = {
        "user_scope": log.user_scope,
        "offset": log.offset,
        "crc32": log.crc32,
        "lines": log.lines,
        "docs": len(state.ids),
        "dead": state.dead,
        "alive_length": state.alive_length,
        "words": len(words),
        "all_ids": len(log.ids),
        "hidden": len(state.hidden_ids),
    }
    arrays = {
        "csr_offsets": state.csr_offsets,
        "csr_docs": state.csr_docs,
        "csr_tf": state.csr_tf,
        "term_lengths": state.term_lengths.view,
        "doc_offsets": state.offsets.view,
        "doc_lengths": state.lengths.view,
        "captured": state.captured.view,
        "alive": state.alive.view,
        "source_of": state.source_of.view,
        # source_ids in code order (dicts keep it), as JSON: one may hold any character
        "sources": np.frombuffer(json.dumps(list(state.sources)).encode("utf-8"), np.uint8),
        "doc_ids": pack_strings(state.ids),
        "all_ids": pack_strings(sorted(log.ids)),
        "hidden": pack_strings(sorted(state.hidden_ids)),
        "words": pack_strings(words),
        "word_ids": np.asarray([state.vocab[w] for w in words], dtype=np.int64),
        "codes": np.asarray(codes, dtype=np.int64),
        "code_ids": np.asarray([state.vocab[c] for c in codes], dtype=np.int64),
    }
    return save_snapshot(log.path, meta, arrays)


def load_index(log: FileLog) -> IndexState | None:
    """The saved index of ``log``'s file if it still matches the file's bytes (``log``
    then continues after what it covers), else None."""
    loaded = load_snapshot(log.path, log.user_scope)
    if loaded is None:
        return None
    meta, arrays = loaded
    words = unpack_strings(arrays["words"], meta["words"])
    vocab = new_vocabulary(len(words) + len(arrays["codes"]))
    vocab.update(zip(words, arrays["word_ids"].tolist(), strict=True))
    vocab.update(zip(arrays["codes"].tolist(), arrays["code_ids"].tolist(), strict=True))
    state = IndexState(
        generation=log.generation,
        ids=unpack_strings(arrays["doc_ids"], meta["docs"]),
        alive_length=meta["alive_length"],
        dead=meta["dead"],
        hidden_ids=set(unpack_strings(arrays["hidden"], meta["hidden"])),
        sources={
            name: code
            for code, name in enumerate(json.loads(arrays["sources"].tobytes().decode("utf-8")))
        },
        vocab=vocab,
        csr_offsets=arrays["csr_offsets"],
        csr_docs=arrays["csr_docs"],
        csr_tf=arrays["csr_tf"],
    )
    for name, growable in (
        ("doc_offsets", state.offsets),
        ("doc_lengths", state.lengths),
        ("captured", state.captured),
        ("alive", state.alive),
        ("source_of", state.source_of),
        ("term_lengths", state.term_lengths),
    ):
        growable.extend(arrays[name])
    log.restore(
        offset=meta["offset"],
        lines=meta["lines"],
        ids=set(unpack_strings(arrays["all_ids"], meta["all_ids"])),
        crc32=meta["crc32"],
    )
    return state
