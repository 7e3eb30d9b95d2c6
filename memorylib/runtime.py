"""The lazy runtime: where the teaching state lives, created on first use only.

Importing memorylib writes no file and builds no model client. ``default_runtime()``
creates (and seeds, when empty) the teaching store the first time something needs it;
``runtime_client()`` checks ``MODEL_ID`` and the API key only when the online loop is
about to call the model. Environment, read at first use:

* ``WORKBUDDY_HOME``: state root (default ``~/.learn_workbuddy``); files go under
  ``remote-memory/``;
* ``WORKBUDDY_USER_ID``: the user (default ``local-user``); only its hash reaches disk;
* ``MODEL_ID`` and ``ANTHROPIC_API_KEY``: the live agent only.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .engine import RecallEngine
from .errors import RemoteMemoryError
from .interface import user_scope_for
from .seed import seed_teaching_store
from .store import RemoteMemoryStore

__all__ = [
    "ConfigurationError",
    "Runtime",
    "default_runtime",
    "reset_runtime",
    "runtime_client",
    "runtime_home",
]


class ConfigurationError(RemoteMemoryError):
    """The live agent is missing MODEL_ID or an API key (the message says which)."""


@dataclass(frozen=True)
class Runtime:
    home: Path
    store: RemoteMemoryStore
    engine: RecallEngine


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def runtime_home() -> Path:
    """``$WORKBUDDY_HOME/remote-memory`` (default ``~/.learn_workbuddy/remote-memory``)."""
    root = os.environ.get("WORKBUDDY_HOME") or str(Path.home() / ".learn_workbuddy")
    return Path(root).expanduser() / "remote-memory"


def default_runtime() -> Runtime:
    """The process's teaching runtime, created and seeded on first call."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            home = runtime_home()
            user_id = os.environ.get("WORKBUDDY_USER_ID") or "local-user"
            scope = user_scope_for(user_id)
            store = RemoteMemoryStore(home / f"memories-{scope}.jsonl", user_id=user_id)
            seed_teaching_store(store)
            _runtime = Runtime(home=home, store=store, engine=RecallEngine(store))
        return _runtime


def reset_runtime() -> None:
    """Forget the cached runtime (tests and notebooks that change the environment)."""
    global _runtime
    with _runtime_lock:
        _runtime = None


def runtime_client() -> tuple[Any, str]:
    """(anthropic client, model id) for the live loop; imports anthropic only now.

    Raises ConfigurationError naming what is missing. The key is never echoed.
    """
    model_id = (os.environ.get("MODEL_ID") or "").strip()
    if not model_id:
        raise ConfigurationError(
            "MODEL_ID is not set: export MODEL_ID=<a model id your account can use> "
            "to run the live agent (the offline demo needs none: python -m memorylib --demo)"
        )
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise ConfigurationError(
            "ANTHROPIC_API_KEY is not set: export it to run the live agent "
            "(the offline demo needs none: python -m memorylib --demo)"
        )
    try:
        import anthropic
    except ImportError:
        raise ConfigurationError(
            "the anthropic package is not installed: pip install 'memorylib[agent]'"
        ) from None
    return anthropic.Anthropic(), model_id
