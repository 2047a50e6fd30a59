"""Dense index: FAISS inner product over unit vectors (= cosine similarity).

Exact flat search by default; HNSW and IVF-PQ for large corpora. Saved as plain versioned
files: ``dense.faiss`` (FAISS's own format), ``ids.json`` (row → document id) and
``manifest.json`` (model, dimension, count, index type, library versions, creation time).
No pickle. New documents are added without re-embedding old ones.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import faiss
import numpy as np

from index.errors import RetrievalError
from index.hits import Ranking

INDEX_FILE = "dense.faiss"
IDS_FILE = "ids.json"
MANIFEST_FILE = "manifest.json"
FORMAT_VERSION = 1


class DenseIndexError(RetrievalError):
    """A dense index that cannot be built, loaded or searched as asked."""


@dataclass(frozen=True)
class DenseConfig:
    """Index type and its parameters.

    Attributes:
        kind: "flat" (exact), "hnsw" or "ivfpq".
        hnsw_m, ef_construction, ef_search: HNSW graph degree and search breadth (efSearch 128
            reaches recall@50 ≥ 0.95 at 1M vectors in bench/scale.py; 64 does not).
        nlist, pq_m, pq_bits, nprobe: IVF cells, PQ sub-quantisers and bits, cells probed.
        refine: re-score IVF-PQ candidates with "flat" (exact vectors) or "sq8" (8-bit) codes;
            "" for none. PQ alone loses too much recall for curation.
        k_factor: how many candidates per wanted hit the refine step re-scores.
    """

    kind: str = "flat"
    hnsw_m: int = 32
    ef_construction: int = 80
    ef_search: int = 128
    nlist: int = 1024
    pq_m: int = 48
    pq_bits: int = 8
    nprobe: int = 16
    refine: str = ""
    k_factor: int = 8


class DenseIndex:
    """FAISS index plus the document ids of its rows."""

    backend = "faiss"

    def __init__(self, index: faiss.Index, ids: list[str], config: DenseConfig, model: str) -> None:
        self.index = index
        self.ids = ids
        self.config = config
        self.model = model
        self._row_of = {doc_id: row for row, doc_id in enumerate(ids)}

    @classmethod
    def build(cls, vectors: np.ndarray, ids: Sequence[str], model: str, config: DenseConfig = DenseConfig()):
        """Build an index over unit vectors ``(n, dim)``."""
        vectors = _as_matrix(vectors)
        if len(ids) != vectors.shape[0]:
            raise DenseIndexError(f"{len(ids)} ids for {vectors.shape[0]} vectors")
        index = _new_index(vectors, config)
        if gpu_count() and config.kind == "flat":
            index = _on_gpus(index)  # exact search reads every vector: the GPU's bandwidth is what it needs
        index.add(vectors)
        return cls(index, list(ids), config, model)

    def close(self) -> None:
        """Nothing to let go of (the index is in memory); :class:`index.milvus.MilvusIndex` has an engine to leave."""

    def __len__(self) -> int:
        return self.index.ntotal

    @property
    def dimension(self) -> int:
        return self.index.d

    def add(self, vectors: np.ndarray, ids: Sequence[str]) -> int:
        """Add new documents; ids already indexed are skipped. Returns how many were added."""
        vectors = _as_matrix(vectors)
        keep = [i for i, doc_id in enumerate(ids) if doc_id not in self._row_of]
        if not keep:
            return 0
        if vectors.shape[1] != self.dimension:
            raise DenseIndexError(f"vectors have dimension {vectors.shape[1]}, the index {self.dimension}")
        self.index.add(vectors[keep])
        for i in keep:
            self._row_of[ids[i]] = len(self.ids)
            self.ids.append(ids[i])
        return len(keep)

    def search(self, queries: np.ndarray, k: int) -> list[Ranking]:
        """Top-k (doc id, cosine) per query row of ``queries`` ``(n_queries, dim)``."""
        queries = _as_matrix(queries)
        if queries.shape[1] != self.dimension:
            raise DenseIndexError(
                f"query vectors have dimension {queries.shape[1]} but the index was built with {self.dimension} "
                f"(model {self.model}); rebuild the index or load the matching model"
            )
        k = min(k, len(self))
        if k == 0:
            return [[] for _ in range(queries.shape[0])]
        scores, rows = self.index.search(queries, k)  # (n_queries, k) each
        return [
            [(self.ids[r], float(s)) for r, s in zip(row_ids, row_scores, strict=True) if r >= 0]
            for row_ids, row_scores in zip(rows, scores, strict=True)
        ]

    def set_search(self, **params: int) -> None:
        """Change search-time parameters (ef_search, nprobe, k_factor) without rebuilding."""
        unknown = set(params) - {"ef_search", "nprobe", "k_factor"}
        if unknown:
            raise DenseIndexError(f"not search-time parameters: {sorted(unknown)}")
        self.config = replace(self.config, **params)
        _set_search_params(self.index, self.config)

    def known(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are indexed."""
        return {i for i in ids if i in self._row_of}

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of some documents (exact for flat; reconstructed approximations otherwise)."""
        return (
            np.vstack([self.index.reconstruct(self._row_of[i]) for i in ids]) if ids else np.zeros((0, self.dimension))
        )

    def manifest(self) -> dict[str, object]:
        return {
            "format_version": FORMAT_VERSION,
            "model": self.model,
            "dimension": self.dimension,
            "documents": len(self),
            "backend": self.backend,
            "index": asdict(self.config),
            "metric": "inner_product_on_unit_vectors",
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "versions": {"faiss": faiss.__version__, "numpy": np.__version__, "python": platform.python_version()},
        }

    def save(self, folder: str | Path) -> Path:
        """Write the three files into ``folder`` (each via a temporary name, then renamed)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(folder / IDS_FILE, json.dumps(self.ids))
        tmp = folder / (INDEX_FILE + ".tmp")
        faiss.write_index(_on_cpu(self.index), str(tmp))
        tmp.replace(folder / INDEX_FILE)
        _atomic_write(folder / MANIFEST_FILE, json.dumps(self.manifest(), indent=2))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> DenseIndex:
        """Load a saved index, checking that its files agree with each other.

        Raises:
            DenseIndexError: a file is missing or unreadable, or the counts disagree.
        """
        folder = Path(folder)
        # faiss reports a missing file as a RuntimeError, so look before reading.
        for name in (MANIFEST_FILE, IDS_FILE, INDEX_FILE):
            if not (folder / name).is_file():
                raise DenseIndexError(f"dense index in {folder} is incomplete: {name} is missing")
        try:
            manifest = json.loads((folder / MANIFEST_FILE).read_text())
            ids = json.loads((folder / IDS_FILE).read_text())
            index = faiss.read_index(str(folder / INDEX_FILE))
        except FileNotFoundError as exc:
            raise DenseIndexError(
                f"dense index in {folder} is incomplete: {Path(exc.filename).name} is missing"
            ) from None
        except (json.JSONDecodeError, RuntimeError, UnicodeDecodeError) as exc:
            raise DenseIndexError(
                f"dense index in {folder} is corrupted ({type(exc).__name__}: {exc}); rebuild it"
            ) from None
        if manifest.get("backend", "faiss") != "faiss":
            raise DenseIndexError(f"dense index in {folder} is a {manifest.get('backend')} index; "
                                  "open it with index.loading.load_dense")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise DenseIndexError(
                f"dense index in {folder} has format {manifest.get('format_version')}, "
                f"this code reads {FORMAT_VERSION}; rebuild it"
            )
        if index.ntotal != len(ids) or index.d != manifest.get("dimension"):
            raise DenseIndexError(
                f"dense index in {folder} is inconsistent: {index.ntotal} vectors, {len(ids)} ids, "
                f"dimension {index.d} vs manifest {manifest.get('dimension')}; rebuild it"
            )
        config = DenseConfig(**manifest.get("index", {}))
        _set_search_params(index, config)
        if gpu_count() and config.kind == "flat":
            index = _on_gpus(index)
        return cls(index, ids, config, str(manifest.get("model", "")))


def _as_matrix(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    return np.ascontiguousarray(vectors)


def gpu_count() -> int:
    """GPUs FAISS can use: 0 with the CPU build (faiss-cpu), else ``faiss.get_num_gpus()``."""
    counter = getattr(faiss, "get_num_gpus", None)
    return int(counter()) if counter is not None else 0


def _on_gpus(index: faiss.Index) -> faiss.Index:
    """A copy of ``index`` spread over every GPU (FAISS GPU build only)."""
    return faiss.index_cpu_to_all_gpus(index)


def _on_cpu(index: faiss.Index) -> faiss.Index:
    """``index`` itself, or its CPU copy when it lives on GPUs (what is saved to disk)."""
    to_cpu = getattr(faiss, "index_gpu_to_cpu", None)
    if to_cpu is None or not type(index).__name__.startswith("Gpu"):
        return index
    return to_cpu(index)


def _train(index: faiss.Index, vectors: np.ndarray) -> None:
    """Train an IVF index; its k-means runs on the GPUs when the FAISS build has them (FAISS's
    ``clustering_index``: the assignment step, the costly part, on a GPU flat index)."""
    ivf = faiss.try_extract_index_ivf(index)
    if gpu_count() and ivf is not None:
        ivf.clustering_index = _on_gpus(faiss.IndexFlatIP(vectors.shape[1]))
    index.train(vectors)
    if ivf is not None:
        ivf.clustering_index = None


def _new_index(vectors: np.ndarray, config: DenseConfig) -> faiss.Index:
    dim = vectors.shape[1]
    if config.kind == "flat":
        return faiss.IndexFlatIP(dim)
    if config.kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = config.ef_construction
        _set_search_params(index, config)
        return index
    if config.kind == "ivfpq":
        if dim % config.pq_m:
            raise DenseIndexError(f"IVF-PQ needs pq_m dividing the dimension {dim}; got pq_m={config.pq_m}")
        nlist = min(config.nlist, max(1, vectors.shape[0] // 39))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(quantizer, dim, nlist, config.pq_m, config.pq_bits, faiss.METRIC_INNER_PRODUCT)
        if config.refine == "flat":
            index = faiss.IndexRefineFlat(index)
        elif config.refine == "sq8":
            index = faiss.IndexRefine(
                index, faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
            )
        elif config.refine:
            raise DenseIndexError(f"unknown refine '{config.refine}'; use flat, sq8 or nothing")
        _train(index, vectors)
        _set_search_params(index, config)
        return index
    raise DenseIndexError(f"unknown dense index kind '{config.kind}'; use flat, hnsw or ivfpq")


def _set_search_params(index: faiss.Index, config: DenseConfig) -> None:
    if isinstance(index, faiss.IndexHNSW):
        index.hnsw.efSearch = config.ef_search
    if isinstance(index, faiss.IndexRefine):
        index.k_factor = float(config.k_factor)
        base = faiss.downcast_index(index.base_index)
    else:
        base = index
    ivf = faiss.try_extract_index_ivf(base) if not isinstance(base, faiss.IndexFlat) else None
    if ivf is not None:
        ivf.nprobe = config.nprobe
        # reconstruct() (used to re-rank BM25 candidates by dense score) needs the direct map.
        if ivf.direct_map.type == faiss.DirectMap.NoMap:
            ivf.make_direct_map()


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


# The rule that picks an index kind (measured by bench/scale.py on 1M MiniLM-like vectors, one CPU thread):
# exact flat search costs ~52 ms per query per million vectors, so it stays within the 10 ms goal up to
# ~200k; HNSW (M 32, efSearch 128) gave recall@50 0.96 at p95 0.8 ms but keeps every vector plus its graph
# in memory; IVF-PQ with an 8-bit re-ranking store gave 0.98 at p95 1 ms in a tenth of the memory.
FLAT_MAX_DOCUMENTS = 200_000
MEMORY_SHARE = 0.5  # of the machine's memory the dense index may take (the app, BM25 and the store need the rest)
PQ_SUBQUANTISERS = (48, 32, 24, 16, 12, 8, 6, 4)


def index_bytes(kind: str, documents: int, dimension: int, config: DenseConfig = DenseConfig()) -> int:
    """Resident bytes of a dense index of ``kind`` (vectors, graph or codes, the ids), from its layout."""
    ids = 8 + 60  # an int64 row, and the Python id map's share measured by bench/scale.py
    if kind == "flat":
        per = 4 * dimension
    elif kind == "hnsw":
        per = 4 * dimension + 2 * config.hnsw_m * 4 + 16  # level-0 links of 2M neighbours + upper levels
    elif kind == "ivfpq":
        per = config.pq_m * config.pq_bits // 8 + 8 + (dimension if config.refine == "sq8" else
                                                           4 * dimension if config.refine == "flat" else 0)
    else:
        raise DenseIndexError(f"unknown dense index kind '{kind}'; use flat, hnsw or ivfpq")
    return documents * (per + ids)


def machine_memory() -> int:
    """This machine's physical memory in bytes (0 when the system does not say)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def choose_config(documents: int, dimension: int, memory: int | None = None,
                  kind: str = "auto") -> tuple[DenseConfig, str]:
    """The index to build for ``documents`` vectors of ``dimension`` on a machine with ``memory`` bytes, and why.

    ``kind`` other than "auto" is taken as asked (its parameters sized for the corpus). The rule for "auto":
    flat (exact) up to :data:`FLAT_MAX_DOCUMENTS`; then HNSW while vectors and graph fit in
    :data:`MEMORY_SHARE` of memory; then IVF-PQ with an 8-bit re-ranking store (√n-sized cells).

    On the Milvus backend the same kinds map through :func:`index.milvus_schema.index_params` (ivfpq: IVF_SQ8; on a
    server, IVF_PQ when ``refine`` is ""); there the index lives in the engine, whose limits are in
    :data:`index.milvus_server.SERVER_LIMITS` (the 2.3.5 server: no BM25 function) and docs/SCALING.md.

    Raises:
        DenseIndexError: an unknown kind, or not even IVF-PQ fits in memory (use a Milvus server).
    """
    memory = machine_memory() if memory is None else memory
    budget = int(memory * MEMORY_SHARE) if memory else 0
    pq_m = next((m for m in PQ_SUBQUANTISERS if dimension % m == 0 and m <= max(4, dimension // 8)), 0)
    nlist = 1 << max(4, round(np.log2(max(16.0, 4 * np.sqrt(max(documents, 1))))))
    ivfpq = DenseConfig(kind="ivfpq", nlist=nlist, pq_m=pq_m or 4, refine="sq8", k_factor=8, nprobe=16)
    hnsw = DenseConfig(kind="hnsw")
    if kind == "flat":
        return DenseConfig(kind="flat"), "flat, as asked"
    if kind == "hnsw":
        return hnsw, "hnsw, as asked"
    if kind == "ivfpq":
        return ivfpq, f"ivfpq, as asked ({nlist} cells, {ivfpq.pq_m} sub-quantisers, 8-bit re-ranking)"
    if kind != "auto":
        raise DenseIndexError(f"unknown dense index kind '{kind}'; use auto, flat, hnsw or ivfpq")
    gib = 1024**3
    if documents <= FLAT_MAX_DOCUMENTS:
        return DenseConfig(kind="flat"), (f"flat: {documents:,} documents ≤ {FLAT_MAX_DOCUMENTS:,}, where exact "
                                          "search stays within ~10 ms a query")
    need = index_bytes("hnsw", documents, dimension, hnsw)
    if not budget or need <= budget:
        return hnsw, (f"hnsw: {documents:,} documents; vectors and graph take {need / gib:.1f} GiB"
                      + (f", within half of this machine's {memory / gib:.0f} GiB" if budget else ""))
    need_pq = index_bytes("ivfpq", documents, dimension, ivfpq)
    if need_pq > budget:
        raise DenseIndexError(
            f"{documents:,} documents need {need_pq / gib:.1f} GiB even as IVF-PQ, more than half of this machine's "
            f"{memory / gib:.0f} GiB; use a Milvus server (CURATION_INDEX_BACKEND=milvus, CURATION_MILVUS_URI)")
    return ivfpq, (f"ivfpq: HNSW would take {need / gib:.1f} GiB, over half of this machine's {memory / gib:.0f} GiB; "
                   f"IVF-PQ with 8-bit re-ranking takes {need_pq / gib:.1f} GiB")


def read_manifest(folder: Path) -> dict:
    """A dense folder's manifest (either backend: FAISS here, Milvus in :mod:`index.milvus`).

    Raises:
        DenseIndexError: missing or unreadable.
    """
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        raise DenseIndexError(f"dense index in {folder} is incomplete: {MANIFEST_FILE} is missing")
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DenseIndexError(f"dense index in {folder} is corrupted ({exc}); rebuild it") from None
    if not isinstance(manifest, dict) or manifest.get("format_version") != FORMAT_VERSION:
        raise DenseIndexError(f"dense index in {folder} has an unknown format; rebuild it")
    return manifest
