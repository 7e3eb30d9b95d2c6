"""The lazy runtime: where the teaching state lives, created on first use only.

Importing memorylib writes no file and builds no model client. ``default_runtime()``
creates (and seeds, when empty) the teaching store the first time something needs it;
``runtime_client()`` checks ``MODEL_ID`` and the API key only when the online loop is
about to call the model. Environment, read at first use:

* ``WORKBUDDY_HOME``: state root (default ``~/.learn_workbuddy``); files go under
  ``remote-memory/``;
* ``WORKBUDDY_USER_ID``: the user (default ``local-user``); only its hash reaches disk;
* ``MODEL_ID`` and ``ANTHROPIC_API_KEY``: the live agent only.

When a live call fails, ``live_error(exc, model)`` says why in one line, and ``redact``
replaces any copy of the key in a text by ``[redacted]``.
"""

from __future__ import annotations

import json
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
    "NOT_THE_API",
    "ConfigurationError",
    "Runtime",
    "default_runtime",
    "live_error",
    "redact",
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


_SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
NOT_THE_API = (
    "the server did not answer like the Messages API: if you set ANTHROPIC_BASE_URL, "
    "check that it points at the API"
)


def redact(text: str) -> str:
    """``text`` with the value of any API key variable replaced by ``[redacted]``."""
    for name in _SECRET_VARIABLES:
        secret = os.environ.get(name) or ""
        if len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


def live_error(exc: Exception, model: str) -> str | None:
    """Why a live call failed, in one line (not yet redacted), or None when ``exc`` is not
    an error of the API call (a fault of the harness, to be raised)."""
    if isinstance(exc, json.JSONDecodeError):  # the SDK passes a non-JSON body through
        return NOT_THE_API
    try:
        import anthropic
    except ImportError:  # pragma: no cover - runtime_client already needed it
        return None
    if isinstance(exc, anthropic.APIConnectionError):
        return (
            "could not reach the Messages API (connection failed or timed out): check the "
            "network, or ANTHROPIC_BASE_URL if you set one"
        )
    if not isinstance(exc, anthropic.APIStatusError):
        if isinstance(exc, anthropic.APIError):  # e.g. a response that does not validate
            return f"the API call failed ({type(exc).__name__})"
        return None
    if isinstance(exc, anthropic.AuthenticationError):
        hint = "the API rejected the key: check ANTHROPIC_API_KEY"
    elif isinstance(exc, anthropic.PermissionDeniedError):
        hint = "the key is not allowed to do this: check the key's workspace and permissions"
    elif isinstance(exc, anthropic.NotFoundError):
        hint = f"not found: is MODEL_ID ({model!r}) a model id your account can use?"
    elif isinstance(exc, anthropic.RateLimitError):
        hint = "rate limited: wait a minute and run the cell again"
    else:
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = (body.get("error") or {}).get("message") if body else None
        hint = f"the API rejected the request: {detail or type(exc).__name__}"
    return f"{hint} (HTTP {exc.status_code})"
