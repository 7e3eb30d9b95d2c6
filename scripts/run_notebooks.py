"""Re-execute every course notebook top to bottom on a fresh kernel, then tidy it.

    .venv/bin/python scripts/run_notebooks.py            # all notebooks
    .venv/bin/python scripts/run_notebooks.py 04 07b     # those whose name starts so
    .venv/bin/python scripts/run_notebooks.py zh/04      # a Chinese twin (notebooks/zh/)
    .venv/bin/python scripts/run_notebooks.py --check    # run them, write nothing

``--check`` (the pre-flight check, ``make check``) runs each notebook the same way but keeps
the files as they are; a notebook stops at its first cell that raises, which is printed, and
the run goes on with the next one (the exit status is 1 when any failed).

Tidying removes what changes run to run but teaches nothing: widget state
(``metadata.widgets``), per-cell execution timing, the Python patch version. The
kernelspec is kept. Prints each notebook's run time.

The kernel imports the ``memorylib`` of THIS checkout (``PYTHONPATH`` is set to it): the
kernel's working directory is the notebook's folder, where an editable install made from another
checkout (a git worktree's main one, say) would otherwise win.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"


def shown(path: Path) -> str:
    """``03_candidates.ipynb`` or, for a Chinese twin, ``zh/03_candidates.ipynb``."""
    return path.relative_to(NOTEBOOKS).as_posix()


KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def tidy(nb: nbformat.NotebookNode) -> None:
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    language = nb.metadata.get("language_info", {})
    language.pop("version", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
        if cell.cell_type == "code":
            for output in cell.get("outputs", []):
                output.get("metadata", {}).pop("transient", None)


def run(path: Path, timeout: int = 120, write: bool = True) -> float:
    nb = nbformat.read(path, as_version=4)
    env_backend = os.environ.pop("MPLBACKEND", None)
    start = time.perf_counter()
    try:
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},  # as JupyterLab and nbval
        ).execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    elapsed = time.perf_counter() - start
    if write:
        tidy(nb)
        nbformat.write(nb, path)
    return elapsed


def main(prefixes: list[str]) -> int:
    write = "--check" not in prefixes
    prefixes = [p for p in prefixes if p != "--check"]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    # both editions: the English notebooks, then their Chinese twins ("zh/03" selects one)
    pattern = "[0-9][0-9]*_*.ipynb"  # 07b_retraction too
    paths = [*sorted(NOTEBOOKS.glob(pattern)), *sorted(ZH.glob(pattern))]
    if prefixes:
        paths = [p for p in paths if any(shown(p).startswith(x) for x in prefixes)]
    if not paths:
        print("no notebook matched", file=sys.stderr)
        return 1
    total, failed = 0.0, []
    for path in paths:
        try:
            elapsed = run(path, write=write)
        except CellExecutionError as error:
            failed.append(shown(path))
            print(f"{shown(path):40s} FAILED\n{error}", file=sys.stderr)
            continue
        total += elapsed
        print(f"{shown(path):40s} {elapsed:6.2f} s", flush=True)
    print(f"{'total':40s} {total:6.2f} s")
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
