"""The Milvus engine behind :mod:`index.milvus`: connecting to a server or a Milvus Lite file, and Lite's
one-process-per-file rule.

Milvus Lite runs its engine inside the process that opens a file and takes a lock on it: this module counts
the clients of each file in this process (the last one to close stops the embedded server and frees the file)
and gives a process that finds a file locked by another a private read copy (a version's collection is written
once and only read afterwards). A server URI needs none of this.
"""

from __future__ import annotations

import re
from pathlib import Path

from index.dense import DenseIndexError


class MilvusUnavailable(DenseIndexError):
    """The engine cannot be reached, or refuses the collection (down, locked, missing)."""


def is_lite(uri: str) -> bool:
    """A Milvus Lite file (a local path ending in .db), as pymilvus decides."""
    return not uri.startswith(("http://", "https://", "tcp://", "unix:")) and uri.endswith(".db")


def engine_version(client) -> str:
    """The engine's version as it reports it ("v2.3.5-lite": the ``milvus`` package's server; "milvus_lite-3.2.2")."""
    try:
        return str(client.get_server_version())
    except Exception as exc:  # noqa: BLE001 - pymilvus raises several types for "cannot connect"
        raise MilvusUnavailable(f"the Milvus engine does not answer ({type(exc).__name__}: {exc})") from None


def bm25_missing(version: str) -> str:
    """Why an engine of ``version`` cannot keep texts with a BM25 function ("" when it can).

    Milvus Lite 3.x has the BM25 function; a server has it from 2.5 (sparse vectors came in 2.4), so the 2.3.5
    server of the ``milvus`` package has neither.
    """
    if version.startswith("milvus_lite"):
        return ""
    numbers = re.match(r"v?(\d+)\.(\d+)", version)
    if numbers and (int(numbers[1]), int(numbers[2])) < (2, 5):
        return (f"Milvus {version} has no BM25 function (Milvus 2.5 and later): the collection keeps no texts, "
                "and lexical search stays in the version's own BM25 files")
    return ""


def connect(uri: str, token: str = "", timeout: float = 10.0):
    """A ``MilvusClient`` for ``uri`` (a ``.db`` file: Milvus Lite; ``http://host:19530``: a server).

    Raises:
        MilvusUnavailable: pymilvus is not installed, the server does not answer, or the Lite file is
            held by another process.
    """
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise MilvusUnavailable(
            "the Milvus backend needs pymilvus (and milvus-lite for a local file): pip install pymilvus milvus-lite"
        ) from None
    if is_lite(uri):
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    try:
        client = MilvusClient(uri=uri, token=token, timeout=timeout)
        if is_lite(uri):
            _LITE_USERS[_key(uri)] = _LITE_USERS.get(_key(uri), 0) + 1
        return client
    except Exception as exc:  # noqa: BLE001 - pymilvus raises several types for "cannot connect"
        detail = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        if is_lite(uri):
            raise MilvusUnavailable(
                f"Milvus Lite file {uri} cannot be opened ({detail}); a Lite file serves one process at a time: "
                "stop the other process that has it open (the app, a search, a job), or use a Milvus server "
                "(CURATION_MILVUS_URI=http://host:19530)"
            ) from None
        raise MilvusUnavailable(f"the Milvus server at {uri} does not answer ({detail}); start it or fix "
                                "CURATION_MILVUS_URI") from None


# Milvus Lite runs one embedded server per file in a process and keeps it (and the file's lock) until the
# process exits, whatever the clients do; these counts let the last user of a file stop its server, so a
# worker that built a version leaves the file free for the app.
_LITE_USERS: dict[str, int] = {}


def _key(uri: str) -> str:
    return str(Path(uri).resolve())


def serving_here(uri: str) -> bool:
    """This process already runs the Lite server of ``uri`` (a second client shares it: no copy needed)."""
    return _LITE_USERS.get(_key(uri), 0) > 0


def disconnect(client, uri: str) -> None:
    """Close a client; the last one of a Lite file stops its embedded server and frees the file."""
    client.close()
    if not is_lite(uri):
        return
    left = _LITE_USERS.get(_key(uri), 0) - 1
    if left > 0:
        _LITE_USERS[_key(uri)] = left
        return
    _LITE_USERS.pop(_key(uri), None)
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return
    server_manager_instance.release_server(uri)


def locked_by_another(folder: Path) -> bool:
    """A Milvus Lite folder another process has open (it holds an exclusive lock on its LOCK file)."""
    import fcntl

    lock = folder / "LOCK"
    if not lock.exists():
        return False
    with open(lock, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


_COPIES: list[Path] = []


def reading_copy(folder: Path) -> str:
    """A private copy of a Lite folder another process serves from, to read it here.

    A version's collection is written once by the job that builds it and only read afterwards, so a copy
    is the same data; it is removed when this process exits. Lite is for corpora that copy in seconds;
    a Milvus server has no such step.
    """
    import atexit
    import shutil
    import tempfile

    target = Path(tempfile.mkdtemp(prefix="milvus-lite-copy-")) / folder.name
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("LOCK"))
    if not _COPIES:
        atexit.register(lambda: [shutil.rmtree(c.parent, ignore_errors=True) for c in _COPIES])
    _COPIES.append(target)
    return str(target)
