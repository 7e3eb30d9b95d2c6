"""Real-browser test plumbing: Debian's Chromium via Playwright, JupyterLab and Voila servers.

Every server runs in its own session (process group) with its output in a log file, is
waited on with a bounded timeout, and is stopped by its PID in a ``finally`` block:
SIGTERM first (so Jupyter shuts its kernels down), then SIGKILL of the group.
Never calls ``playwright install``: the browser is ``/usr/bin/chromium``.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"

# A browser test module's marks: `pytestmark = BROWSER_MARKS`.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"{CHROMIUM} is missing: install Debian's chromium (scripts/ensure-chromium.sh)",
    ),
]


@contextmanager
def launched_chromium() -> Iterator[object]:
    """Debian's Chromium, headless, through Playwright."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            yield chromium
        finally:
            chromium.close()


def block_remote(context, allowed: tuple[str, ...], blocked: list[str] | None = None) -> None:
    """Let a browser context load only URLs starting with one of ``allowed`` (the page
    stays offline); every other URL is aborted and, with ``blocked``, recorded there."""

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith(allowed):
            request_route.continue_()
        else:
            if blocked is not None:
                blocked.append(url)
            request_route.abort()

    context.route("**/*", route)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cleared_copy(source: Path, folder: Path) -> Path:
    """``source`` without outputs, execution counts or widget state, written into ``folder``."""
    nb = nbformat.read(source, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    target = folder / source.name
    nbformat.write(nb, target)
    return target


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: Path
    token: str = ""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def _wait_for_port(server: Server, timeout: float) -> None:
    """Wait for the TCP port only: a GET on Voila's ``/`` would start another kernel."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"server exited with {server.process.returncode}:\n{server.log_tail()}"
            )
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", server.port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"port {server.port} not open after {timeout:.0f} s:\n{server.log_tail()}")


def _stop(process: subprocess.Popen, timeout: float = 10) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)  # the group we created: server + its kernels
    except ProcessLookupError:
        return
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # anything left in the group (kernels)
    process.wait(timeout=timeout)


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    settings = home / "lab-settings"
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_DATA_DIR=str(home / "data"),  # the notebook-signing key, not in ~/.local
        JUPYTER_CONFIG_DIR=str(home / "config"),
        WORKBUDDY_HOME=str(home / "workbuddy"),
        PYTHONUNBUFFERED="1",
    )
    return env


@contextmanager
def _serve(
    command: Sequence[str],
    *,
    cwd: Path,
    home: Path,
    port: int,
    token: str,
    name: str,
    timeout: float,
) -> Iterator[Server]:
    log = home / f"{name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=_environment(home),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = Server(process, port, log, token)
    try:
        _wait_for_port(server, timeout)
        yield server
    finally:
        _stop(process)


@contextmanager
def jupyter_lab(root: Path, home: Path, *, timeout: float = 60) -> Iterator[Server]:
    """JupyterLab serving ``root`` with a token, news silenced and its own workspaces dir."""
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(BIN / "jupyter"),
        "lab",
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
    ]
    with _serve(
        command, cwd=root, home=home, port=port, token=token, name="lab", timeout=timeout
    ) as server:
        deadline = time.monotonic() + timeout
        url = f"{server.base}/api/status?token={token}"
        while True:  # the port opens slightly before the API answers
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"JupyterLab API not ready:\n{server.log_tail()}")
            time.sleep(0.2)
        yield server


@contextmanager
def voila(notebook: Path, home: Path, *, timeout: float = 60) -> Iterator[Server]:
    port = free_port()
    command = [
        str(BIN / "voila"),
        str(notebook),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--Voila.port_retries=0",
    ]
    with _serve(
        command, cwd=notebook.parent, home=home, port=port, token="", name="voila", timeout=timeout
    ) as server:
        yield server


RUN_ALL_STEP_TIMEOUT_MS = 30_000
QUIZ_PLACEHOLDER = "Not answered yet for 1, 2, 3"  # what every notebook's quiz check prints


ZH_QUIZ_PLACEHOLDER = "尚未作答：1, 2, 3"  # the same, in the Chinese edition


def run_all_outputs(browser: object, tmp_path: Path, stem: str, edition: str = "") -> str:
    """Run All on a cleared copy of ``notebooks/<stem>.ipynb`` (``edition="zh"``: its Chinese
    twin in ``notebooks/zh/``) in a fresh JupyterLab and
    return every output's text, after checking that no cell wrote to stderr or raised.
    The notebook's last code cell is its quiz's check, which prints "Not answered yet for 1,
    2, ..." (QUIZ_PLACEHOLDER: that is how the wait knows every cell has run; an earlier
    exercise's own "Not answered yet" does not count)."""
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    copy = cleared_copy(ROOT / "notebooks" / edition / f"{stem}.ipynb", root)
    placeholder = ZH_QUIZ_PLACEHOLDER if edition == "zh" else QUIZ_PLACEHOLDER
    with jupyter_lab(root, home) as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(RUN_ALL_STEP_TIMEOUT_MS)
            url = f"{lab.base}/lab/workspaces/{stem}/tree/{copy.name}?reset&token={lab.token}"
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            status = page.locator("#jp-main-statusbar")
            status.get_by_text("Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator('[data-command="runmenu:run-all"]').click()
            page.locator(".jp-OutputArea-output", has_text=placeholder).last.wait_for(
                state="attached", timeout=180_000
            )
            status.get_by_text("Idle").wait_for(timeout=60_000)
            # textContent: JupyterLab does not lay out cells scrolled out of view
            shown = "\n".join(page.locator(".jp-OutputArea-output").all_text_contents())
            errors = page.locator('.jp-OutputArea-output[data-mime-type*="stderr"]')
            assert errors.count() == 0, errors.all_text_contents()
            assert "Traceback" not in shown
            return shown
        except Exception:
            print(lab.log_tail())
            raise
        finally:
            context.close()
