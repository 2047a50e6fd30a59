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
        index.add(vectors)
        return cls(index, list(ids), config, model)

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
        faiss.write_index(self.index, str(tmp))
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
        return cls(index, ids, config, str(manifest.get("model", "")))


def _as_matrix(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    return np.ascontiguousarray(vectors)


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
        index.train(vectors)
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
