"""pytest at the repository root: notebook kernels import THIS checkout's memorylib.

nbval starts each notebook's kernel in ``notebooks/``; without this, a kernel would
import whichever memorylib the virtual environment's editable install points at (a
different worktree, say) instead of the code under test.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent)
_paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, *_paths])
