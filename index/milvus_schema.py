"""How a model version maps onto Milvus: its collection's name, and the Milvus index of a :class:`DenseConfig`.

Index kinds map to Milvus's: flat → ``FLAT``, hnsw → ``HNSW`` (M, efConstruction; ef at search),
ivfpq → ``IVF_SQ8`` (nlist; nprobe at search). No engine is needed here: :mod:`index.milvus` creates and
searches the collection with these names and parameters, and writes them into the version's manifest.
"""

from __future__ import annotations

import re

from index.dense import DenseConfig, DenseIndexError

DEFAULT_PREFIX = "curation"
_NAME = re.compile(r"[^A-Za-z0-9_]")


def collection_name(version: str, prefix: str = DEFAULT_PREFIX) -> str:
    """A valid Milvus collection name for a model version (letters, digits, underscores; 255 at most)."""
    name = f"{prefix}_{_NAME.sub('_', version)}"
    return name[:255]


def index_params(config: DenseConfig) -> tuple[str, dict, dict]:
    """(Milvus index type, build params, search params) for a :class:`DenseConfig`."""
    if config.kind == "flat":
        return "FLAT", {}, {}
    if config.kind == "hnsw":
        return "HNSW", {"M": config.hnsw_m, "efConstruction": config.ef_construction}, {"ef": config.ef_search}
    if config.kind == "ivfpq":
        if config.refine not in ("", "flat", "sq8"):
            raise DenseIndexError(f"unknown refine '{config.refine}'; use flat, sq8 or nothing")
        # Milvus Lite 3.2 accepts IVF_PQ when the collection is created but refuses to build it when segments are
        # sealed ("reserved for a future phase"; it builds HNSW, HNSW_SQ, IVF_FLAT, IVF_SQ8 and brute force), so the
        # compressed kind is IVF_SQ8 on every Milvus: 8-bit codes scored exactly, no separate re-ranking store.
        return "IVF_SQ8", {"nlist": config.nlist}, {"nprobe": config.nprobe}
    raise DenseIndexError(f"unknown dense index kind '{config.kind}'; use flat, hnsw or ivfpq")
