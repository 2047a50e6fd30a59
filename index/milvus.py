"""Dense index on Milvus (through ``pymilvus``): the same interface as :class:`index.dense.DenseIndex`.

One collection per model version holds each document's id (``pmid``, the primary key), its vector and,
when asked, its text with Milvus's built-in BM25 function (a sparse field filled by the engine).
The same code runs against

* **Milvus Lite**, an embedded file (``milvus.db`` inside the version's ``dense/`` folder by default):
  tests, CI and one-person use. Milvus Lite serves one process per file (it takes a file lock), so the
  retraining worker writes the file of the version it builds and the app reads the versions it serves;
  a second process opening a served file gets :class:`MilvusUnavailable`.
* **a Milvus standalone or cluster** (``http://host:19530``, optionally a token): every version is a
  collection on the server, named ``<prefix>_<version>``.

The version folder keeps ``dense/manifest.json`` with ``"backend": "milvus"``, the collection, the URI
it was built against (a URI given when loading wins: the app's ``CURATION_MILVUS_URI``), the index
parameters and the count, so a version is still one folder to register, activate and delete; the vectors
live in the engine. Serving swaps a whole Retriever, so activating a version swaps collections atomically.

Index kinds map to Milvus's (:func:`index.milvus_schema.index_params`): flat → ``FLAT``, hnsw → ``HNSW``,
ivfpq → ``IVF_SQ8`` (``IVF_PQ`` on a server when no re-ranking is asked; Milvus Lite 3.2 cannot build it).
Inserted rows are sealed (flushed) and the collection reloaded after a build or an ``add``: rows left in
growing segments are searched without their index. The BM25 function works on Lite; a server older than 2.5 has
none (:func:`index.milvus_engine.bm25_missing`), so a build there keeps no texts and says so in the manifest.
Session consistency: a process sees its own writes, a reader of a finished version never waits for the engine's
clock. A failed search is retried once after reloading the collection (a restarted server has released it).
"""

from __future__ import annotations

import contextlib
import json
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from index.dense import FORMAT_VERSION, MANIFEST_FILE, DenseConfig, DenseIndexError, read_manifest
from index.hits import Ranking
from index.milvus_engine import (  # noqa: F401 - MilvusUnavailable and connect are also this module's interface
    MilvusUnavailable,
    bm25_missing,
    connect,
    disconnect,
    engine_version,
    is_lite,
    locked_by_another,
    reading_copy,
    serving_here,
)
from index.milvus_schema import collection_schema, index_params

#: Waits between load attempts while a background index build may still be writing (about 3 s in all).
LOAD_RETRY_WAITS_S = (0.2, 0.5, 1.0, 1.5)

BACKEND = "milvus"
LITE_FILE = "milvus.db"
INSERT_BATCH = 2000
MAX_TEXT_CHARS = 60000  # the text field's limit is 65,535 bytes; abstracts are far shorter


class MilvusIndex:
    """A model version's collection: ids, vectors and (optionally) texts with the engine's BM25."""

    backend = BACKEND

    def __init__(self, client, collection: str, uri: str, config: DenseConfig, model: str, dimension: int,
                 full_text: bool) -> None:
        self.client = client
        self.collection = collection
        self.uri = uri
        self.config = config
        self.model = model
        self._dimension = dimension
        self.full_text = full_text
        self.text_note = ""  # why the collection keeps no texts although they were given (an engine without BM25)
        self._search_params = index_params(config, is_lite(uri))[2]
        self._ids: list[str] | None = None
        self._count: int | None = None

    # -- building ---------------------------------------------------------------------------------
    @classmethod
    def create(cls, uri: str, collection: str, dimension: int, model: str, config: DenseConfig = DenseConfig(),
               full_text: bool | None = True, token: str = "", replace_existing: bool = False) -> MilvusIndex:
        """Create an empty collection with its indexes (``replace_existing``: drop one of that name first).

        ``full_text``: keep texts with the engine's BM25; None: when the engine has BM25 (else ``text_note`` says why).

        Raises:
            MilvusUnavailable: the engine is down, or the collection exists and ``replace_existing`` is False,
                or ``full_text`` is True on an engine without BM25.
        """
        client = connect(uri, token)
        missing = bm25_missing(engine_version(client)) if full_text is not False else ""
        if full_text and missing:
            raise MilvusUnavailable(f"Milvus at {uri} cannot keep texts for collection {collection}: {missing}")
        full_text = full_text is not False and not missing
        try:
            if client.has_collection(collection):
                if not replace_existing:
                    raise MilvusUnavailable(f"Milvus collection {collection} already exists at {uri}; "
                                            "a version's collection is written once")
                client.drop_collection(collection)
            schema, params = collection_schema(client, dimension, config, full_text, is_lite(uri))
            client.create_collection(collection, schema=schema, index_params=params, consistency_level="Session")
        except MilvusUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - the engine's refusal, named
            raise MilvusUnavailable(f"Milvus at {uri} refused to create collection {collection}: {exc}") from None
        index = cls(client, collection, uri, config, model, dimension, full_text)
        index.text_note = missing
        return index

    @classmethod
    def build(cls, vectors: np.ndarray, ids: Sequence[str], model: str, config: DenseConfig = DenseConfig(), *,
              uri: str, collection: str, texts: Sequence[str] | None = None, token: str = "",
              replace_existing: bool = False) -> MilvusIndex:
        """Create the collection and insert every document; ``texts`` are kept where the engine has BM25 (see
        ``text_note``)."""
        vectors = _as_matrix(vectors)
        if len(ids) != vectors.shape[0]:
            raise DenseIndexError(f"{len(ids)} ids for {vectors.shape[0]} vectors")
        index = cls.create(uri, collection, vectors.shape[1], model, config, full_text=None if texts else False,
                           token=token, replace_existing=replace_existing)
        index.insert(vectors, ids, texts if index.full_text else None)
        index.seal()
        return index

    def seal(self) -> None:
        """Flush inserted rows into sealed, indexed segments and load them for search. Lite searches rows of growing
        segments without the index (about 30× slower at 50,000 vectors: bench/scale.py, ``sealing``) until the
        collection is loaded again; a server hands a flushed segment over to search once it is indexed."""
        self._call("flush", self.client.flush, self.collection)
        if is_lite(self.uri):
            self._call("release", self.client.release_collection, self.collection)
            self._load_retrying()

    def _load_retrying(self) -> None:
        """Load the collection, retrying while Milvus Lite's background indexer is still writing a segment's index.

        Lite 3.2 writes a flushed segment's index file in a thread, not atomically; a load meanwhile reads it half
        written ("No data left in file"). A failure past the last attempt is raised as ``MilvusUnavailable``.
        """
        for wait in LOAD_RETRY_WAITS_S:
            try:
                self.client.load_collection(self.collection)
                return
            except Exception:  # noqa: BLE001 - retried below, raised named after the last attempt
                time.sleep(wait)
        self._call("load", self.client.load_collection, self.collection)

    def insert(self, vectors: np.ndarray, ids: Sequence[str], texts: Sequence[str] | None = None) -> int:
        """Upsert documents in batches (an id written again replaces its row: a resumed load adds no duplicate)."""
        vectors = _as_matrix(vectors)
        if vectors.shape[0] and vectors.shape[1] != self._dimension:
            raise DenseIndexError(f"vectors have dimension {vectors.shape[1]}, the collection {self._dimension}")
        if self.full_text and texts is None:
            raise DenseIndexError(f"collection {self.collection} keeps texts for BM25; pass the documents' texts")
        for begin in range(0, len(ids), INSERT_BATCH):
            rows = []
            for i in range(begin, min(begin + INSERT_BATCH, len(ids))):
                row = {"pmid": str(ids[i]), "vector": vectors[i].tolist()}
                if self.full_text:
                    row["text"] = str(texts[i])[:MAX_TEXT_CHARS]
                rows.append(row)
            try:
                self.client.upsert(self.collection, rows)
            except Exception as exc:  # noqa: BLE001
                raise MilvusUnavailable(f"Milvus at {self.uri} refused rows {begin}–{begin + len(rows)} of "
                                        f"collection {self.collection}: {exc}") from None
        self._ids = None
        self._count = None
        return len(ids)

    def add(self, vectors: np.ndarray, ids: Sequence[str], texts: Sequence[str] | None = None) -> int:
        """Add new documents; ids already in the collection are skipped. Returns how many were added."""
        known = self.known(ids)
        keep = [i for i, doc_id in enumerate(ids) if doc_id not in known]
        if not keep:
            return 0
        vectors = _as_matrix(vectors)
        added = self.insert(vectors[keep], [ids[i] for i in keep],
                            [texts[i] for i in keep] if texts is not None else None)
        self.seal()
        return added

    # -- reading ----------------------------------------------------------------------------------
    def _call(self, what: str, function, *args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - an engine that went away mid-session
            raise MilvusUnavailable(f"Milvus at {self.uri} failed to {what} in collection {self.collection} "
                                    f"({type(exc).__name__}: {exc}); if the engine is down or restarting, start it "
                                    "(or fix CURATION_MILVUS_URI): the next search reconnects") from None

    def _read(self, what: str, function, *args, **kwargs):
        """A read, retried once after reloading the collection (a restarted server has it released)."""
        try:
            return function(*args, **kwargs)
        except Exception:  # noqa: BLE001 - retried below, raised named if it fails again
            with contextlib.suppress(Exception):  # the engine is still down: the search below says so
                self.client.load_collection(self.collection, timeout=60)
        return self._call(what, function, *args, **kwargs)

    def __len__(self) -> int:
        if self._count is None:
            rows = self._read("count rows", self.client.query, self.collection, filter="", output_fields=["count(*)"])
            self._count = int(rows[0]["count(*)"]) if rows else 0
        return self._count

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def ids(self) -> list[str]:
        """Every document id in the collection (read once, then kept; for maps and checks, not for PubMed)."""
        if self._ids is None:
            ids: list[str] = []
            iterator = self._call("list ids", self.client.query_iterator, self.collection, batch_size=5000,
                                  filter="", output_fields=["pmid"])
            while batch := iterator.next():
                ids.extend(row["pmid"] for row in batch)
            iterator.close()
            self._ids = ids
        return self._ids

    def search(self, queries: np.ndarray, k: int) -> list[Ranking]:
        """Top-k (doc id, inner product = cosine on unit vectors) per query row."""
        queries = _as_matrix(queries)
        if queries.shape[1] != self.dimension:
            raise DenseIndexError(
                f"query vectors have dimension {queries.shape[1]} but the collection {self.collection} holds "
                f"{self.dimension} (model {self.model}); rebuild the index or load the matching model"
            )
        if k <= 0 or not queries.shape[0]:
            return [[] for _ in range(queries.shape[0])]
        answers = self._read("search", self.client.search, self.collection, data=queries.tolist(),
                             anns_field="vector", limit=min(k, 16384), output_fields=["pmid"],
                             search_params={"metric_type": "IP", "params": self._search_params})
        return [[(hit["entity"]["pmid"], float(hit["distance"])) for hit in answer] for answer in answers]

    def search_text(self, texts: Sequence[str], k: int) -> list[Ranking]:
        """Top-k by the engine's BM25 over the stored texts, per query text (higher = better).

        Raises:
            DenseIndexError: the collection was built without texts.
        """
        if not self.full_text:
            raise DenseIndexError(f"collection {self.collection} was built without texts; it has no BM25"
                                  + (f" ({self.text_note})" if self.text_note else ""))
        if k <= 0 or not texts:
            return [[] for _ in texts]
        answers = self._read("search text", self.client.search, self.collection, data=list(texts),
                             anns_field="sparse", limit=min(k, 16384), output_fields=["pmid"],
                             search_params={"metric_type": "BM25"})
        # Milvus Lite reports BM25 as a negated distance (best first, most negative); servers report the score.
        return [[(hit["entity"]["pmid"], abs(float(hit["distance"]))) for hit in answer] for answer in answers]

    def known(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are in the collection."""
        if not ids:
            return set()
        found: set[str] = set()
        unique = list(dict.fromkeys(str(i) for i in ids))
        for begin in range(0, len(unique), 1000):
            rows = self._read("look up ids", self.client.get, self.collection, ids=unique[begin: begin + 1000],
                              output_fields=["pmid"])
            found.update(row["pmid"] for row in rows)
        return found

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of some documents, in the order asked.

        Raises:
            DenseIndexError: an id is not in the collection.
        """
        if not ids:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = self._read("read vectors", self.client.get, self.collection, ids=list(dict.fromkeys(ids)),
                          output_fields=["vector"])
        by_id = {row["pmid"]: row["vector"] for row in rows}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise DenseIndexError(f"{len(missing)} documents are not in collection {self.collection} "
                                  f"(first: {missing[0]})")
        return np.asarray([by_id[i] for i in ids], dtype=np.float32)

    def set_search(self, **params: int) -> None:
        """Change search-time parameters (ef_search, nprobe, k_factor) without rebuilding."""
        unknown = set(params) - {"ef_search", "nprobe", "k_factor"}
        if unknown:
            raise DenseIndexError(f"not search-time parameters: {sorted(unknown)}")
        self.config = replace(self.config, **params)
        self._search_params = index_params(self.config, is_lite(self.uri))[2]

    # -- the version folder -----------------------------------------------------------------------
    def manifest(self) -> dict[str, object]:
        import pymilvus

        return {
            "format_version": FORMAT_VERSION,
            "backend": BACKEND,
            "collection": self.collection,
            "uri": self.uri,
            "full_text": self.full_text,
            **({"full_text_note": self.text_note} if self.text_note else {}),
            "engine": engine_version(self.client),
            "model": self.model,
            "dimension": self.dimension,
            "documents": len(self),
            "index": asdict(self.config),
            "engine_index": dict(zip(("type", "build", "search"), index_params(self.config, is_lite(self.uri)),
                                     strict=True)),
            "metric": "inner_product_on_unit_vectors",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "versions": {"pymilvus": pymilvus.__version__, "numpy": np.__version__,
                         "python": platform.python_version()},
        }

    def save(self, folder: str | Path) -> Path:
        """Write ``manifest.json`` (the vectors are in the engine) and flush the collection."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self._call("flush", self.client.flush, self.collection)
        manifest = self.manifest()
        if is_lite(self.uri) and Path(self.uri).parent.resolve() == folder.resolve():
            manifest["uri"] = Path(self.uri).name  # inside the folder: it moves with it (staged → published)
        tmp = folder / (MANIFEST_FILE + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=2))
        tmp.replace(folder / MANIFEST_FILE)
        return folder

    @classmethod
    def load(cls, folder: str | Path, uri: str = "", token: str = "") -> MilvusIndex:
        """Open the collection a version folder's ``dense/manifest.json`` names.

        ``uri``: the server to use for a server-built version ("" = the one it was built against: a server
        that moved is named here). A Lite-built version always reads the file in its own folder (copied
        first when another process has it open).

        Raises:
            MilvusUnavailable: the engine is down or the collection is missing.
            DenseIndexError: the manifest is unreadable, or the collection disagrees with it.
        """
        folder = Path(folder)
        manifest = read_manifest(folder)
        if manifest.get("backend") != BACKEND:
            raise DenseIndexError(f"dense index in {folder} is not a Milvus index")
        recorded = str(manifest.get("uri") or LITE_FILE)
        if is_lite(recorded):  # a Lite version reads its own file, wherever the folder now is
            uri = recorded if Path(recorded).is_absolute() else str(folder / recorded)
        else:
            uri = uri if uri and not is_lite(uri) else recorded
        collection = str(manifest.get("collection") or "")
        if is_lite(uri) and not serving_here(uri) and locked_by_another(Path(uri)):
            uri = reading_copy(Path(uri))
        client = connect(uri, token)
        try:
            present = client.has_collection(collection)
        except Exception as exc:  # noqa: BLE001
            raise MilvusUnavailable(f"Milvus at {uri} does not answer ({exc}); start it or fix CURATION_MILVUS_URI") \
                from None
        if not present:
            raise MilvusUnavailable(f"Milvus at {uri} has no collection {collection} (model version folder "
                                    f"{folder.parent.name}); rebuild the version or point CURATION_MILVUS_URI at the "
                                    "engine it was built on")
        try:
            client.load_collection(collection)
        except Exception as exc:  # noqa: BLE001
            raise MilvusUnavailable(f"Milvus at {uri} cannot load collection {collection} ({exc})") from None
        config = DenseConfig(**manifest.get("index", {}))
        index = cls(client, collection, uri, config, str(manifest.get("model", "")), int(manifest["dimension"]),
                    bool(manifest.get("full_text")))
        index.text_note = str(manifest.get("full_text_note", ""))
        if len(index) != int(manifest.get("documents", -1)):
            raise DenseIndexError(f"Milvus collection {collection} holds {len(index)} documents, the version's "
                                  f"manifest {manifest.get('documents')}; rebuild the version")
        return index

    def drop(self) -> None:
        """Delete the collection (a version being removed)."""
        self._call("drop the collection", self.client.drop_collection, self.collection)

    def close(self) -> None:
        """Let go of the engine (for a Lite file, its server stops when no other index here uses it)."""
        if self.client is not None:
            disconnect(self.client, self.uri)
            self.client = None


def _as_matrix(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    return np.ascontiguousarray(vectors)
