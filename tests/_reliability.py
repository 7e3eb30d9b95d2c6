"""Shared helpers of the reliability suite (tests/test_reliability_*.py, test_secrets.py).

* ``python_env()``: the environment for real child processes (the repo on PYTHONPATH,
  so the children import this checkout of memorylib);
* ``record_figures(section, **figures)``: merge figures into ``artifacts/reliability.json``
  (gitignored), which ``scripts/reliability_report.py`` prints and RELIABILITY.md quotes;
* ``xml_sanitized(text)``: what the renderer must turn a stored value into (an
  independent oracle of the XML 1.0 Char production, not memorylib's own regex).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from memorylib import MemorySource

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"
FIGURES = ARTIFACTS / "reliability.json"
PYTHON = sys.executable
PROCESS_TIMEOUT = 60.0  # seconds; every wait on a child process is bounded by this

_figures_lock = threading.Lock()


def python_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if "PYTHONPATH" in env else "")
    env.pop("COVERAGE_PROCESS_START", None)
    env.update(extra)
    return env


def record_figures(section: str, **figures: Any) -> None:
    """Replace one section of artifacts/reliability.json (atomic replace)."""
    with _figures_lock:
        ARTIFACTS.mkdir(exist_ok=True)
        try:
            data = json.loads(FIGURES.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            data = {}
        data[section] = {
            **figures,
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        temp = FIGURES.with_name(f"{FIGURES.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temp, FIGURES)


def src(n: object = 1, captured_at: str = "2026-08-01T12:00:00Z") -> MemorySource:
    return MemorySource(f"source-{n}", "conversation_transcript", f"title {n}", captured_at)


def xml_char_ok(ch: str) -> bool:
    """XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]."""
    cp = ord(ch)
    return (
        cp in (0x9, 0xA, 0xD)
        or 0x20 <= cp <= 0xD7FF
        or 0xE000 <= cp <= 0xFFFD
        or 0x10000 <= cp <= 0x10FFFF
    )


def xml_sanitized(text: str) -> str:
    return "".join(ch if xml_char_ok(ch) else "\ufffd" for ch in text)


def folded(text: str) -> str:
    return " ".join(text.split())


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# -- real child processes ---------------------------------------------------------------------

CHILD_PRELUDE = """
import json, os, random, sys, time
from pathlib import Path
from memorylib import (MemoryKind, MemorySource, RecallEngine, RemoteMemoryDuplicateError,
    RemoteMemoryError, RemoteMemoryStore, RemoteMemoryValidationError, TEACHING_AS_OF,
    render_recall_context)

def barrier(workdir, name, timeout=60.0):
    # announce readiness, then wait for the parent's go file (bounded)
    workdir = Path(workdir)
    (workdir / f"ready-{name}").touch()
    deadline = time.monotonic() + timeout
    while not (workdir / "go").exists():
        if time.monotonic() > deadline:
            sys.exit("barrier timeout")
        time.sleep(0.001)
"""


def spawn(code: str, *args: object, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, "-c", CHILD_PRELUDE + code, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=python_env(),
        cwd=cwd or REPO,
    )


def release_when_ready(workdir: Path, names: list[str], procs: list[subprocess.Popen[str]]) -> None:
    """Wait (bounded) until every child reached its barrier, then let them all go at once."""
    deadline = time.monotonic() + PROCESS_TIMEOUT
    while not all((workdir / f"ready-{name}").exists() for name in names):
        dead = [p for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            details = [(p.returncode, p.communicate(timeout=10)[1][-2000:]) for p in procs]
            raise AssertionError(f"children did not reach the barrier: {details}")
        time.sleep(0.005)
    (workdir / "go").touch()


def finish(procs: list[subprocess.Popen[str]], timeout: float = PROCESS_TIMEOUT) -> list[Any]:
    """Collect each child's last stdout line as JSON; kill everything on timeout."""
    results = []
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert p.returncode == 0, f"child exited {p.returncode}: {err[-3000:]}"
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate(timeout=10)
    return results
