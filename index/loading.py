"""Opening a model version folder as a ready Retriever (query encoder, dense index, BM25 index)."""

from __future__ import annotations

import json
from pathlib import Path

from index.dense import DenseIndex
from index.encoder import EncoderConfig, embedding_dimension, load_encoder
from index.errors import RetrievalError
from index.lexical import LexicalIndex
from index.search import FusionConfig, Retriever


def load_dense(folder: str | Path, milvus_uri: str = "", milvus_token: str = ""):
    """A version's dense index, on the backend its ``dense/manifest.json`` names (FAISS or Milvus).

    Raises:
        RetrievalError: missing, corrupted, or (Milvus) the engine is unreachable or lacks the collection.
    """
    from index.dense import read_manifest
    from index.milvus import BACKEND, MilvusIndex

    folder = Path(folder)
    if (folder / "manifest.json").is_file() and read_manifest(folder).get("backend") == BACKEND:
        return MilvusIndex.load(folder, uri=milvus_uri, token=milvus_token)
    return DenseIndex.load(folder)


def open_retriever(path: str | Path, fusion: FusionConfig | None = None, device: str = "", milvus_uri: str = "",
                   milvus_token: str = "") -> Retriever:
    """Load ``path/model``, ``path/dense`` and ``path/lexical``.

    ``milvus_uri`` / ``milvus_token``: the Milvus server of a version built on one, when it is not the one
    its manifest records (see :meth:`index.milvus.MilvusIndex.load`).

    The hybrid fusion is ``fusion`` when given, else the one the version's manifest records
    (chosen on dev when it was built), else the default.

    Queries are encoded by :class:`index.query_encoder.QueryEncoder` (numpy, no torch import) when the model
    folder has its shape (every version this project builds has), else by sentence-transformers on ``device``;
    both give the same vectors (to float32 rounding).

    Raises:
        RetrievalError: a part is missing or corrupted, or the model and index disagree.
    """
    path = Path(path)
    if not (path / "model").is_dir():
        raise RetrievalError(f"model version {path.name} has no model/ folder")
    dense = load_dense(path / "dense", milvus_uri, milvus_token)
    lexical = LexicalIndex.load(path / "lexical")
    model = _query_encoder(path, device)
    if embedding_dimension(model) != dense.dimension:
        raise RetrievalError(f"model version {path.name}: model dimension {embedding_dimension(model)} does not match "
                            f"its index ({dense.dimension})")
    reranker, rerank_k = manifest_reranker(path, device)
    return Retriever(lexical=lexical, dense=dense, encoder=model, fusion=fusion or manifest_fusion(path),
                     version=path.name, served_dense_share=manifest_served_share(path), reranker=reranker,
                     rerank_k=rerank_k)


def _query_encoder(path: Path, device: str):
    """The version's query encoder: numpy when the folder allows it, else the sentence-transformers model."""
    from index.query_encoder import UnsupportedEncoder, load_query_encoder

    folder = (path / "model").resolve()
    config = EncoderConfig(model=str(folder), device=device)
    try:
        return load_query_encoder(folder, config.max_seq_length)
    except UnsupportedEncoder:
        pass  # another shape, or a damaged file: sentence-transformers loads it or says what is wrong
    try:
        return load_encoder(config)
    except Exception as exc:  # weights that do not load are a corrupted version, not a crash
        raise RetrievalError(
            f"model version {path.name}: the model does not load ({type(exc).__name__}: {exc})"
        ) from None


def _served(path: Path) -> dict:
    try:
        served = json.loads((path / "manifest.json").read_text()).get("served") or {}
    except (OSError, ValueError) as exc:
        raise RetrievalError(f"model version {path.name}: its manifest is unreadable ({exc})") from None
    if not isinstance(served, dict):
        raise RetrievalError(f"model version {path.name}: its manifest's 'served' is not an object")
    return served


def manifest_reranker(path: Path, device: str = "") -> tuple[object | None, int]:
    """The version's cross-encoder and its depth when its manifest serves one (else None, 0).

    Serving it was decided when the version was built (dev gain, and the measured CPU latency rule when no
    GPU is present); a version whose manifest says so but whose cross-encoder folder is damaged does not load.

    Raises:
        RetrievalError: the manifest says to serve a cross-encoder that cannot be loaded.
    """
    from index.rerank import CrossEncoderReranker

    if not (path / "manifest.json").exists():
        return None, 0
    served = _served(path)
    k = int(served.get("rerank_k") or 0)
    if not served.get("rerank") or k <= 0:
        return None, 0
    if served.get("rerank_gpu_only"):
        from index.encoder import pick_device

        if pick_device(device) != "cuda":
            return None, 0
    return CrossEncoderReranker.load(path / "cross_encoder", device=device), k


def manifest_served_share(path: Path) -> float | None:
    """The concept search's dense share a version's manifest records as chosen on dev (None when it has none)."""
    if not (path / "manifest.json").exists():
        return None
    try:
        served = _served(path)
        share = served.get("dense_share")
        if share is None:
            return None
        share = float(share)
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise RetrievalError(f"model version {path.name}: its manifest's served fusion is unreadable ({exc})") from None
    if not 0.0 <= share <= 1.0:
        raise RetrievalError(f"model version {path.name}: its manifest's served dense share {share} is not in [0, 1]")
    return share


def manifest_fusion(path: Path) -> FusionConfig:
    """The fusion a version's manifest.json records (the default when it has none)."""
    if not (path / "manifest.json").exists():
        return FusionConfig()
    try:
        recorded = json.loads((path / "manifest.json").read_text()).get("fusion") or {}
        return FusionConfig(**{k: v for k, v in recorded.items() if k in FusionConfig.__dataclass_fields__})
    except (OSError, ValueError, TypeError) as exc:
        raise RetrievalError(f"model version {path.name}: its manifest's fusion is unreadable ({exc})") from None
