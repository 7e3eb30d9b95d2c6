"""What the composition root (``memorylib/__init__.py``) plugs in for the lower layers.

``tool.recall_history`` without an engine calls ``engine_factory()``; the package's
``__init__`` sets it to the teaching runtime's engine, and ``tool.set_default_engine``
replaces it. It lives in a module of its own, below everything, so that neither
``import memorylib`` has to load the tool to wire it nor the tool has to import the
runtime, which sits above it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

engine_factory: Callable[[], Any] | None = None
