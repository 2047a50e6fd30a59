"""ASReview LAB 3's default model as a screening peer, run in its own virtual environment.

asreview 3.0.8 pins pandas<3 and the app runs pandas 3, so the peer lives in ``.bench-asreview-venv`` (built from
bench/requirements-asreview.txt on first use) and is driven through one subprocess per batch of topics
(bench/_asreview_worker.py, JSON over stdin and stdout): asreview's import is paid once per batch, not per topic.
Nothing here imports asreview.

Example:
    >>> orders = simulate_many([{"texts": texts, "labels": labels, "prior": [3, 17], "seed": 0}])
    >>> peer_versions()["classifier"]
    'svm'
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = Path(__file__).with_name("requirements-asreview.txt")
WORKER = Path(__file__).with_name("_asreview_worker.py")
VENV_DIR = ".bench-asreview-venv"
#: The requirements text of the last successful install, inside the venv.
STAMP = ".installed"
INSTALL_TIMEOUT_S = 1800


def _fail(what: str, result: subprocess.CompletedProcess) -> SystemExit:
    lines = [line for line in (result.stderr or result.stdout or "").splitlines() if line.strip()]
    last = lines[-1].strip() if lines else "no output"
    return SystemExit(f"{what} failed (exit {result.returncode}): {last}")


def ensure_venv(root: Path | None = None) -> Path:
    """Build the peer's virtual environment on first use, and again only when its requirements change.

    Args:
        root: The folder to hold ``.bench-asreview-venv``; the repository root by default.

    Returns:
        The venv's python.

    Raises:
        SystemExit: One line saying which step failed and pip's (or venv's) last line of output.
    """
    venv = (root or ROOT) / VENV_DIR
    python = venv / "bin" / "python"
    wanted = REQUIREMENTS.read_text(encoding="utf-8")
    stamp = venv / STAMP
    venv.mkdir(parents=True, exist_ok=True)
    # A bench run and a test may build it at once: the second waits, then finds the stamp.
    with open(venv / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
            return python
        stamp.unlink(missing_ok=True)
        if not python.exists():
            # The same interpreter choice as .ci/setup: $PYTHON, else python3.
            base = os.environ.get("PYTHON", "python3")
            result = subprocess.run([base, "-m", "venv", str(venv)], capture_output=True, text=True)
            if result.returncode != 0:
                raise _fail(f"creating {venv} with {base} -m venv", result)
        result = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        if result.returncode != 0:
            raise _fail(f"installing {REQUIREMENTS.name} into {venv}", result)
        stamp.write_text(wanted, encoding="utf-8")
    return python


def _ask(request: dict, python: Path | None) -> dict:
    """Send one request to a fresh worker process of the peer's venv and return its JSON answer."""
    python = python or ensure_venv()
    # In a scratch folder: importing asreview leaves synergy_dataset's HTTP cache (synergy_cache.sqlite) in the cwd.
    with tempfile.TemporaryDirectory(prefix="asreview-peer-") as scratch:
        # Isolated (-I): no PYTHONPATH or user site from the app's side reaches the peer's imports.
        result = subprocess.run([str(python), "-I", str(WORKER)], input=json.dumps(request), capture_output=True,
                                text=True, cwd=scratch)
    if result.returncode != 0:
        raise _fail(f"the ASReview peer ({request['command']})", result)
    return json.loads(result.stdout)


def _checked(topic: Mapping, number: int) -> dict:
    """The topic as the worker reads it, after the checks whose failure inside asreview would be obscure."""
    texts, labels, prior = list(topic["texts"]), [int(v) for v in topic["labels"]], [int(i) for i in topic["prior"]]
    where = f"topic {number}"
    if len(texts) != len(labels):
        raise ValueError(f"{where}: {len(texts)} texts but {len(labels)} labels; give one label per text")
    if set(labels) - {0, 1}:
        raise ValueError(f"{where}: labels must be 0 or 1, got {sorted(set(labels) - {0, 1})}")
    if len(set(prior)) != len(prior) or any(not 0 <= i < len(texts) for i in prior):
        raise ValueError(f"{where}: prior must be distinct record indices in 0..{len(texts) - 1}, got {prior}")
    return {"texts": [str(t) for t in texts], "labels": labels, "prior": prior, "seed": int(topic.get("seed", 0))}


def simulate_many(topics: Sequence[Mapping], python: Path | None = None, workers: int = 1) -> list[list[int]]:
    """Every topic's reading order under ASReview 3's default model, from one subprocess of the peer's venv.

    Args:
        topics: One mapping per topic: ``texts`` (title + abstract per record), ``labels`` (0/1 per record),
            ``prior`` (record indices labelled first, in this order) and optionally ``seed`` (default 0).
        python: The peer venv's python; :func:`ensure_venv` by default.
        workers: Processes forked inside the subprocess to share the topics out; orders do not depend on it.

    Returns:
        Per topic, every record index once, in the order ASReview screens them (the prior first).
    """
    if not topics:
        return []
    request = {"command": "simulate", "workers": workers,
               "topics": [_checked(topic, number) for number, topic in enumerate(topics)]}
    return _ask(request, python)["orders"]


def simulate(texts: Sequence[str], labels: Sequence[int], prior: Sequence[int], seed: int = 0,
             python: Path | None = None) -> list[int]:
    """One topic's reading order under ASReview 3's default model (see :func:`simulate_many`).

    Args:
        texts: Title + abstract per record.
        labels: 1 for relevant, 0 for not, per record.
        prior: Record indices labelled first, in this order.
        seed: Seeds numpy's global state, as ``asreview simulate --seed`` does.
        python: The peer venv's python; :func:`ensure_venv` by default.

    Returns:
        Every record index once, in screening order, the prior first.
    """
    return simulate_many([{"texts": texts, "labels": labels, "prior": prior, "seed": seed}], python=python)[0]


def peer_versions(python: Path | None = None) -> dict:
    """What the peer is, for the benchmark's JSON: asreview's version and its default model's parts.

    Returns:
        ``asreview``, ``model`` (``elas_u4``), ``feature_extractor``, ``classifier``, ``querier``, ``balancer``
        with their ``*_param`` dicts, ``n_query``, the implementing ``classes``, the warm-up and stop rule, and
        the python, numpy, pandas, scikit-learn and scipy versions of the venv.
    """
    return _ask({"command": "versions"}, python)
