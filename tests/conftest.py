"""Shared fixtures: small hand-written files, and the real data folder when it is there.

Also how a parallel run (``pytest -n 2 --dist loadgroup``, pytest-xdist, as CI runs it) splits the tests:
each test file is one unit of work (its module fixtures are built once, on one worker), except the real-browser
tests, which are one unit together: one worker runs them one after another, so that no two of them (each a
Streamlit server, a Chromium and the waits on both) compete for the two cores. The files marked ``milvus_server``
are one unit too, so that one worker starts the Milvus server process once for all of them. Units start longest
first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores: each worker's torch (and every process it starts: training workers, Streamlit
    # servers) computes on one thread. With torch's default of one thread per core, the two workers' thread pools
    # spin against each other: a training test took twice as long beside a busy core (62 s vs 33 s).
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

from curation.config import load_settings
from curation.store.opening import open_store

FIXTURES = Path(__file__).parent / "fixtures"


BROWSER_GROUP = "browser"
MILVUS_SERVER_GROUP = "milvus_server"
#: CI sets it (.ci/run): a Milvus server that cannot start there fails the tests that need it, with the reason.
REQUIRE_MILVUS_SERVER = "CURATION_REQUIRE_MILVUS_SERVER"


def _marked_files(tests_dir: Path, mark: str) -> frozenset[str]:
    """The test files (paths as in node ids) whose module is marked ``mark`` (its ``pytestmark`` line)."""
    pattern = re.compile(rf"^pytestmark\s*=.*pytest\.mark\.{mark}\b", re.MULTILINE)
    root = tests_dir.parent
    return frozenset(path.relative_to(root).as_posix() for path in sorted(tests_dir.rglob("test_*.py"))
                     if pattern.search(path.read_text(encoding="utf-8")))


def pytest_xdist_make_scheduler(config: pytest.Config, log) -> object | None:
    """``--dist loadgroup``: one unit of work per test file, one for all the browser test files together, one for
    the files that use the Milvus server process.

    xdist's own loadgroup reads a group from a suffix it appends to each node id, which pytest 9's read-only
    node ids no longer take (every test became a unit of its own, and module fixtures were built on both
    workers); this scheduler does the same grouping from the node ids as they are.
    """
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    groups = {path: group for group in (MILVUS_SERVER_GROUP, BROWSER_GROUP)
              for path in _marked_files(Path(__file__).parent, group)}

    class FileOrBrowserScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return groups.get(path, path)

    return FileOrBrowserScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` the workers are handed the browser tests first, then the files with a test
    marked slow, then the rest (each in collection order); run alone, the order is left as collected.

    CI passes ``--no-loadscope-reorder``, which keeps this order: the longest units start first, so that no
    worker is left with a long one at the end while the other idles.
    """
    # The controller has --dist; a worker has it reset and xdist's own ``loadgroup`` flag set instead.
    if getattr(config.option, "dist", "no") != "loadgroup" and not getattr(config.option, "loadgroup", False):
        return
    slow_files = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("browser"):
            return 0
        return 1 if item.nodeid.split("::")[0] in slow_files else 2

    items.sort(key=rank)  # stable: collection order within each rank


@pytest.fixture(autouse=True)
def _private_jobs_dir(tmp_path, monkeypatch):
    """Retraining jobs of a test write under its own folder, never the project's data/jobs."""
    monkeypatch.setenv("CURATION_JOBS_DIR", str(tmp_path / "jobs"))


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared real data; tests that need it are skipped cleanly when it is absent."""
    path = load_settings().data_dir
    if not (path / "README.md").exists():
        pytest.skip(f"real data not found at {path} (set CURATION_DATA_DIR)")
    return path


@pytest.fixture
def con(tmp_path):
    connection = open_store(tmp_path / "test.duckdb")
    yield connection
    connection.close()


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """A Milvus standalone server process (the ``milvus`` package), on free loopback ports, for this test session.

    Started on first use and stopped at the end. Where it cannot start, its tests are skipped with the reason, except
    under ``CURATION_REQUIRE_MILVUS_SERVER`` (CI), where they fail with it: the server half never passes unseen.
    """
    from index.milvus_server import LocalMilvus, ServerUnavailable

    server = LocalMilvus(tmp_path_factory.mktemp("milvus-server"))
    try:
        server.start()
    except ServerUnavailable as exc:
        if os.environ.get(REQUIRE_MILVUS_SERVER):
            pytest.fail(f"the Milvus server process did not start, and {REQUIRE_MILVUS_SERVER} is set: {exc}")
        pytest.skip(f"the Milvus server process did not start here: {exc}")
    yield server
    server.stop()
