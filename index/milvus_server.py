"""A Milvus standalone server process on this machine (the ``milvus`` package's binary), for tests and benchmarks.

The ``milvus`` package (2.3.5) ships the Milvus standalone binary with an embedded etcd and message queue; this
module starts it in a folder of its own, on loopback ports that nothing else holds (every port the server opens is
picked free, so two test runs or two test workers never meet), waits until its health endpoint answers, and stops
it. It is a real server process reached over gRPC, the path a lab's ``CURATION_MILVUS_URI`` takes, not Milvus
Lite's embedded engine. A deployment runs a Milvus cluster instead (docs/SCALING.md).

What the 2.3.5 server lacks against Milvus Lite 3.2 (see :data:`SERVER_LIMITS`): BM25 functions and sparse
vectors (Milvus 2.5 / 2.4), so a collection built on it holds no texts; it builds IVF_PQ, which Lite refuses.
"""

from __future__ import annotations

import socket
import time
import urllib.request
from pathlib import Path

#: Differences of the 2.3.5 server from Milvus Lite 3.2, as measured here (tests/index/test_milvus.py).
SERVER_LIMITS = {
    "bm25_function": "absent: sparse vectors came in Milvus 2.4 and the BM25 function in 2.5; a collection keeps "
                     "no texts and lexical search stays in the version's bm25s files",
    "index_kinds": "FLAT, HNSW, IVF_FLAT, IVF_SQ8 and IVF_PQ build and search (Lite 3.2 refuses IVF_PQ)",
}

#: Polling intervals lowered from the defaults (1 s, 0.5 s, 5 s) so that a load or a handoff is seen sooner; the
#: defaults only make a small test collection wait longer.
_FAST_CHECKS = {"queryCoord.checkInterval": 200, "queryCoord.distPullInterval": 200,
                "queryCoord.checkHandoffInterval": 1000}


class ServerUnavailable(RuntimeError):
    """The server process cannot start here (the binary does not run, or it never became healthy)."""


def free_port() -> int:
    """A TCP port on loopback that is free now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalMilvus:
    """One Milvus standalone process, its data under ``base_dir``; ``port`` is the gRPC port clients use.

    A restart (:meth:`stop` then :meth:`start`) keeps the folder and the port, so collections, and clients that
    recorded the URI, find the same server again.
    """

    def __init__(self, base_dir: str | Path, port: int = 0) -> None:
        self.base_dir = Path(base_dir)
        self.port = port or free_port()
        self._ports: dict[str, int] = {}  # every port the process opens, kept across a restart (see start)
        self._server = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.server_proc is not None \
            and self._server.server_proc.poll() is None

    def start(self, timeout_s: float = 120.0) -> LocalMilvus:
        """Start the process and wait until it answers its health check.

        Raises:
            ServerUnavailable: the ``milvus`` package is missing, the process exits, or it is not healthy in time
                (the message carries the end of its log).
        """
        try:
            from milvus import MilvusServer, MilvusServerConfig
        except ImportError:
            raise ServerUnavailable("the Milvus server needs the milvus package: pip install milvus==2.3.5") from None

        class _Config(MilvusServerConfig):
            def try_bind_port(self, port):  # a restarted server's port may linger in TIME_WAIT: reuse it
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind(("127.0.0.1", port))
                    sock.listen()
                    return sock
                except OSError:
                    sock.close()
                    return None

        config = _Config()
        # The same ports at a restart: the coordinators' sessions in the embedded etcd name their addresses, and a
        # restarted process on other ports waits for the old sessions to expire (about a minute) before serving.
        if not self._ports:
            self._ports = {key: free_port() for key in config.configurable_items if key.endswith("_port")}
            self._ports |= {"proxy_port": self.port, "metrics_port": free_port()}
        ports = {key: port for key, port in self._ports.items() if key != "metrics_port"}
        server = MilvusServer(config, wait_for_started=False, **ports)
        server.set_base_dir(str(self.base_dir))
        for key, value in _FAST_CHECKS.items():
            server.config.set(key, value)
        server.webservice_port = self._ports["metrics_port"]
        try:
            server.start()
        except (OSError, RuntimeError) as exc:
            raise ServerUnavailable(f"the Milvus server binary did not start in {self.base_dir}: {exc}") from None
        self._server = server
        health = f"http://127.0.0.1:{server.webservice_port}/healthz"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            code = server.server_proc.poll()
            if code is not None:
                self.stop()
                raise ServerUnavailable(f"the Milvus server exited at start (code {code}): {self.log_tail()}")
            try:
                with urllib.request.urlopen(health, timeout=2) as answer:
                    if b"OK" in answer.read():
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise ServerUnavailable(f"the Milvus server was not healthy within {timeout_s:.0f} s: {self.log_tail()}")

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs (for its memory figures)."""
        return self._server.server_proc.pid if self.running else None

    def stop(self) -> None:
        """Stop the process (a kill after one second, as a crash would: the folder recovers at the next start)."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of the server's stderr and stdout logs (why it did not start)."""
        tail: list[str] = []
        for name in ("milvus-stderr.log", "milvus-stdout.log"):
            path = self.base_dir / "logs" / name
            if path.is_file():
                tail += path.read_text(errors="replace").splitlines()[-lines:]
        return " | ".join(line.strip() for line in tail if line.strip()) or "no log written"
