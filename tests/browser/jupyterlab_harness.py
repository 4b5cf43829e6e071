"""A JupyterLab server and a headless Chromium for browser tests, both bounded and cleaned up.

`jupyterlab(root)` starts JupyterLab on 127.0.0.1 (free port, random token, no browser, nothing
that reaches the network: read-only extension manager, no news feed, no update check) with its
config/data/runtime/settings/workspaces folders in a fresh folder beside `root`, waits for `/api/status`, and on exit
shuts it down through the API (which stops the kernels), then terminate -> wait -> kill.
`chromium()` launches Debian's /usr/bin/chromium through Playwright (no downloaded browser).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = os.environ.get("RAG_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
START_TIMEOUT = 90.0


@dataclass
class Lab:
    port: int
    token: str
    root: Path
    log: Path
    process: subprocess.Popen

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}?token={self.token}"

    def api(self, path: str, method: str = "GET", timeout: float = 5.0) -> dict | list:
        request = urllib.request.Request(
            f"{self.base}/api/{path.lstrip('/')}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError as exc:
            return f"(no JupyterLab log: {exc})"
        return "\n".join(text[-lines:])


def require_browser() -> None:
    """Skip when Debian's Chromium is missing, or fail when RAG_LAB_REQUIRE_BROWSER is set (as .ci/run does)."""
    import pytest

    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("RAG_LAB_REQUIRE_BROWSER", "") not in ("", "0"):
        pytest.fail(f"RAG_LAB_REQUIRE_BROWSER is set but {CHROMIUM} is missing (scripts/ensure_chromium.sh installs it as root)")
    pytest.skip(f"{CHROMIUM} missing (bash scripts/test.sh installs Debian's chromium when run as root)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(root: Path):
    """Run JupyterLab serving `root` (notebooks to open live there); yield a `Lab`."""
    root = Path(root)
    state = root.with_name(root.name + "-jupyter-state")  # beside root, out of the file browser
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(state / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(state / "lab-workspaces"),
        IPYTHONDIR=str(state / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    # User settings: never fetch news nor check for updates (no "get notified?" toast over the page).
    notification = state / "lab-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = free_port(), secrets.token_hex(24)
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.extension_manager=readonly",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--ServerApp.terminals_enabled=False",
        "--allow-root",
    ]  # fmt: skip
    log = state / "jupyterlab.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as log_file:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    lab = Lab(port=port, token=token, root=root, log=log, process=process)
    try:
        _wait_ready(lab)
        yield lab
    finally:
        _stop(lab)


def _wait_ready(lab: Lab) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {lab.process.returncode}; log tail:\n{lab.log_tail()}")
        try:
            lab.api("status", timeout=2.0)
            return
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last_error = exc
            time.sleep(0.25)
    raise TimeoutError(f"JupyterLab not ready after {START_TIMEOUT:.0f} s ({last_error}); log tail:\n{lab.log_tail()}")


def _stop(lab: Lab) -> None:
    process = lab.process
    if process.poll() is None:
        with contextlib.suppress(Exception):  # clean shutdown also stops the kernels it started
            lab.api("shutdown", method="POST", timeout=5.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError, PermissionError):  # anything left in its session
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def chromium(user_data_dir: Path):
    """A headless Playwright page in Debian's Chromium with a fresh profile."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            yield page
        finally:
            context.close()


def open_notebook(page, lab: Lab, name: str, timeout_ms: float) -> None:
    """Open `name` in JupyterLab; return once the page shows it and its kernel is connected and idle."""
    page.goto(lab.url(f"lab/tree/{name}"), timeout=timeout_ms)
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.wait_for(state="visible", timeout=timeout_ms)
    page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
        state="attached", timeout=timeout_ms
    )
    deadline = time.monotonic() + timeout_ms / 1000
    kernels: list | str = []
    while not any(k.get("connections", 0) > 0 and k.get("execution_state") == "idle" for k in kernels):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no idle kernel connected to {name} after {timeout_ms / 1000:.0f} s: {kernels}")
        page.wait_for_timeout(250)
        kernels = _kernels(lab)


def _kernels(lab: Lab) -> list:
    """The server's kernels; [] while it cannot say (listing a kernel still starting can answer 500)."""
    try:
        return lab.api("kernels")
    except (urllib.error.URLError, OSError, ValueError):
        return []


def run_all_cells(page, timeout_ms: float, attempts: int = 3) -> int:
    """Run → Run All Cells through the menu bar, as a user would, until the first cell is queued or done;
    return the number of attempts.

    Right after the page loads, JupyterLab can swallow the first menu command; a retry is safe because
    it only happens while no cell shows `[*]` or `[n]`.
    """
    started = re.compile(r"\[(\*|\d+)\]")
    prompts = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .jp-InputPrompt", has_text=started)
    for attempt in range(1, attempts + 1):
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.click()  # the notebook has focus
        page.keyboard.press("Escape")  # command mode, not editing the cell
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        label = page.locator(".lm-Menu-itemLabel", has_text="Run All Cells")
        page.locator(".lm-Menu-item:not(.lm-mod-disabled)", has=label).first.click(timeout=timeout_ms)
        try:
            prompts.first.wait_for(timeout=15_000 if attempt < attempts else timeout_ms)
            return attempt
        except Exception:
            if attempt == attempts:
                raise
