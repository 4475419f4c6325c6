"""Start and stop the dashboard as ``make run`` does, on a free port of 127.0.0.1.

The one home of the server's start and stop for the browser tests (``tests/e2e/conftest.py``,
``tests/e2e/test_live_browser.py``) and the browser benchmark (``bench/bench_browser.py``):

* the command is ``python dashboard/serve.py`` with Streamlit's options for a headless server
  on loopback only (``make run`` starts it the same way);
* the server runs in its own process group, its output goes to files (a pipe nobody reads
  would block a long session), and it is ready once ``/_stcore/health`` answers ``ok``;
* stopping sends SIGTERM to the group, then SIGKILL after 10 s.

The caller passes the whole environment (user catalog folders, AWS endpoints, ...).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVE_ENTRY = REPO / "dashboard" / "serve.py"
#: Seconds the server may take to answer its health check after the start.
START_TIMEOUT_S = 60.0
#: Seconds between SIGTERM and SIGKILL, and to wait for the exit after SIGKILL.
STOP_TIMEOUT_S = 10.0
#: Characters of each log quoted when the server does not start.
LOG_TAIL_CHARS = 4000


class ServerStartError(RuntimeError):
    """The dashboard exited or did not answer its health check in time (message: why, the
    command and the tails of its logs)."""


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_command(port: int) -> list[str]:
    """The command line of a headless dashboard on ``127.0.0.1:port``."""
    return [sys.executable, str(SERVE_ENTRY), "--server.address", "127.0.0.1",
            "--server.port", str(port), "--server.headless", "true",
            "--browser.gatherUsageStats", "false"]


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    except OSError:
        return ""


def _wait_for_health(proc: subprocess.Popen[bytes], url: str, timeout_s: float) -> str | None:
    """Poll the health endpoint; ``None`` once it answers "ok", else why it did not."""
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"streamlit exited with code {proc.returncode}"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                body = response.read().decode(errors="replace").strip()
            if body == "ok":
                return None
            last_error = f"health answered {body!r}"
        except (urllib.error.URLError, OSError) as exc:
            last_error = str(exc)
        time.sleep(0.25)
    return f"no 'ok' from {url} within {timeout_s:.0f} s ({last_error})"


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group, SIGKILL if it is still there after 10 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        proc.wait(timeout=STOP_TIMEOUT_S)


#: Starts on a fresh port when the chosen one was taken before Streamlit bound it (another
#: process, such as a second xdist worker, may bind it between free_port and the start).
START_ATTEMPTS = 3


def start_server(env: Mapping[str, str], logs: Path,
                 timeout_s: float = START_TIMEOUT_S) -> tuple[subprocess.Popen[bytes], str]:
    """Start the dashboard with ``env``, its output in ``logs``/stdout.log and stderr.log;
    return the process and its base URL (no trailing slash) once it is healthy. A port taken
    in the meantime is replaced by a fresh one (up to ``START_ATTEMPTS`` starts).

    Raises:
        ServerStartError: it exited or did not answer in time (it is stopped first).
    """
    logs.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = logs / "stdout.log", logs / "stderr.log"
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port()
        cmd = serve_command(port)
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            proc = subprocess.Popen(cmd, cwd=REPO, env={**env, "PYTHONUNBUFFERED": "1"},
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)  # own group, stopped as a whole
        url = f"http://127.0.0.1:{port}"
        failure = _wait_for_health(proc, f"{url}/_stcore/health", timeout_s)
        if failure is None:
            return proc, url
        stop_server(proc)
        logged = _tail(stderr_path) + _tail(stdout_path)
        if attempt < START_ATTEMPTS and f"Port {port} is not available" in logged:
            continue
        raise ServerStartError(f"Streamlit did not start: {failure}\n"
                               f"command: {' '.join(cmd)}\n"
                               f"--- stderr ---\n{_tail(stderr_path)}\n"
                               f"--- stdout ---\n{_tail(stdout_path)}")
    raise AssertionError("unreachable")


@contextmanager
def running_server(env: Mapping[str, str], logs: Path,
                   timeout_s: float = START_TIMEOUT_S) -> Iterator[str]:
    """:func:`start_server`, yield its base URL, :func:`stop_server` at the end."""
    proc, url = start_server(env, logs, timeout_s)
    try:
        yield url
    finally:
        stop_server(proc)
