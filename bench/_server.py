"""The Streamlit server the browser benchmarks and tests drive, and the store it serves.

The server runs ``streamlit run app.py`` on 127.0.0.1 and a free port, in its own process group,
against the store and model folder it is given (``app_server``), or is started by a shell command
exactly as the README gives it, with only the store's variables and the port set (``command_server``).
The pages are driven by :mod:`bench._browser`.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from curation.store.base import stats
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CIVIC_FILE = Path("civic") / "civic_evidence_2026-05.tsv"
START_ATTEMPTS = 3


def build_store(db_path: str | Path, data_dir: str | Path) -> dict:
    """A store with CIViC's current export and the BioRED and BC5CDR abstracts; returns its counts."""
    data_dir = Path(data_dir)
    corpus = sorted((data_dir / "biored").glob("*.PubTator")) + sorted((data_dir / "bc5cdr").glob("*.PubTator.txt"))
    con = open_store(db_path)
    try:
        ingest_kb(con, "civic", data_dir / CIVIC_FILE)
        for path in corpus:
            ingest_corpus(con, "pubtator", path)
        return stats(con)
    finally:
        con.close()


def real_data_app(folder: str | Path, data_dir: str | Path) -> tuple[Path, Path]:
    """The store a real-browser test serves (:func:`build_store` in ``folder``) and an empty models folder (the
    app ranks with BM25 alone); returns both paths."""
    db, models = Path(folder) / "store.duckdb", Path(folder) / "models"
    build_store(db, data_dir)
    models.mkdir(exist_ok=True)
    return db, models


def free_port() -> int:
    """A TCP port nobody listens on right now (the server may still lose a race for it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    # No proxy: a proxy set in the environment must not see (or break) requests to localhost.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it if it has not gone in 15 s."""
    if process.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _launch(port: int, env: dict[str, str], log_path: Path, extra_args: Sequence[str] = ()) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        # No file watcher: nothing is edited while it runs, and watching .venv costs CPU the timings feel.
        "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false", *extra_args,
    ]  # fmt: skip
    return _spawn(command, env, log_path)


def _spawn(command: list[str], env: Mapping[str, str], log_path: Path) -> subprocess.Popen:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        # Its own process group (session), so stopping it stops everything it started.
        return subprocess.Popen(
            command, cwd=ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def _serves(log_path: Path, url: str) -> bool:
    """Whether the server's log says it listens on ``url``'s port: Streamlit prints "URL: http://127.0.0.1:<port>"
    (or "Local URL: http://localhost:<port>" without an address) once it has bound it."""
    try:
        log = log_path.read_text(errors="replace")
    except OSError:
        return False
    port = url.rsplit(":", 1)[1]
    return re.search(rf"URL: http://[^\s/]+:{port}\b", log) is not None and "already in use" not in log


def _wait_healthy(process: subprocess.Popen, url: str, log_path: Path, timeout_s: float) -> bool:
    """True once *this* server answers; False when it exited because its port was taken; raises otherwise.

    Another test's server can take the port between :func:`free_port` and this one's bind: its health answer
    must not count. So this server must also be alive and have said in its own log that it serves ``url``.
    """
    deadline = time.monotonic() + timeout_s
    while not (_healthy(url) and process.poll() is None and _serves(log_path, url)):
        if process.poll() is not None or time.monotonic() > deadline:
            log = log_path.read_text(errors="replace")
            if process.poll() is not None and "already in use" in log:
                return False
            state = f"exited with {process.returncode}" if process.poll() is not None else f"not up in {timeout_s}s"
            raise RuntimeError(f"streamlit server on {url} {state}; log {log_path}:\n{log[-2000:]}")
        time.sleep(0.1)
    return True


@dataclass(frozen=True)
class Served:
    """A running server: its URL, the command that started it, and when (``time.perf_counter``) it started."""

    url: str
    args: tuple[str, ...]
    started: float


@contextmanager
def _serve(launch: Callable[[int], subprocess.Popen], log_path: Path, timeout_s: float) -> Iterator[Served]:
    """Start a server with ``launch(port)`` on a free port until it answers; yields it and always stops it.

    A port taken between choosing it and binding it is replaced by another (three tries).
    """
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        started = time.perf_counter()
        process = launch(port)
        try:
            if _wait_healthy(process, url, log_path, timeout_s):
                break
        except BaseException:
            _stop(process)
            raise
        _stop(process)
        if attempt == START_ATTEMPTS:
            raise RuntimeError(f"no free port for the streamlit server after {attempt} tries; log {log_path}")
    try:
        yield Served(url, tuple(process.args), started)
    finally:
        _stop(process)


@contextmanager
def app_server(
    db_path: str | Path, models_dir: str | Path, log_path: str | Path, timeout_s: float = 120,
    extra_env: Mapping[str, str] | None = None, extra_args: Sequence[str] = (),
) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free local port; yields its URL and always stops it.

    The server's output goes to ``log_path``; its tail is in the error when it does not come up.
    A port taken between choosing it and binding it is replaced by another (three tries). When
    the context exits the process group is gone, so the store can be opened again. ``extra_env`` and
    ``extra_args`` (Streamlit options, e.g. ``--secrets.files``) are added to the server's.
    """
    env = {**os.environ, "CURATION_DB": str(db_path), "CURATION_MODELS_DIR": str(models_dir), **(extra_env or {})}
    log_path = Path(log_path)
    with _serve(lambda port: _launch(port, env, log_path, extra_args), log_path, timeout_s) as served:
        yield served.url


def readme_first_command(readme: str | Path = README) -> str:
    """The README's first command as a newcomer copies it: the first line of its first ```bash block.

    A trailing comment (`` # ...`` after a blank) is cut; nothing else is changed.
    """
    text = Path(readme).read_text()
    block = re.search(r"^```bash\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    if block is None or not block.group(1).strip():
        raise AssertionError(f"{readme} has no ```bash block")
    first = block.group(1).strip("\n").splitlines()[0]
    return re.sub(r"\s+#.*$", "", first).strip()


def first_run_env(folder: str | Path) -> dict[str, str]:
    """The variables that put a first run's store, models, jobs, cache and backups under ``folder``."""
    folder = Path(folder)
    return {
        "CURATION_DB": str(folder / "store.duckdb"),
        "CURATION_MODELS_DIR": str(folder / "models"),
        "CURATION_JOBS_DIR": str(folder / "jobs"),
        "CURATION_CACHE_DIR": str(folder / "cache"),
        "CURATION_BACKUPS_DIR": str(folder / "backups"),
    }


@contextmanager
def command_server(
    command: str, store_env: Mapping[str, str], log_path: str | Path, timeout_s: float = 600
) -> Iterator[Served]:
    """Run a shell command that starts the app (the README's first command) as a newcomer would; always stop it.

    ``bash -c command`` in the repository's root, with this process's environment plus ``store_env``
    and ``STREAMLIT_SERVER_PORT`` (a free port): nothing else is added, so the command runs with the
    project's ``.streamlit/config.toml`` and Streamlit's defaults. Yields once the server answers
    (``timeout_s`` covers a setup step that installs); the whole process group is stopped on exit.
    """
    log_path = Path(log_path)

    def launch(port: int) -> subprocess.Popen:
        env = {**os.environ, **store_env, "STREAMLIT_SERVER_PORT": str(port)}
        return _spawn(["bash", "-c", command], env, log_path)

    with _serve(launch, log_path, timeout_s) as served:
        yield served
