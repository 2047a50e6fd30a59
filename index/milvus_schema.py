"""How a model version maps onto Milvus: its collection's name, and the Milvus index of a :class:`DenseConfig`.

Index kinds map to Milvus's: flat → ``FLAT``, hnsw → ``HNSW`` (M, efConstruction; ef at search),
ivfpq → ``IVF_SQ8`` (nlist; nprobe at search), or ``IVF_PQ`` (nlist, m, 8 bits) on a server when no
re-ranking store is asked (``refine=""``): Milvus Lite cannot build IVF_PQ. No engine is needed here:
:mod:`index.milvus` creates and searches the collection with these names, schema and parameters, and writes them
into the version's manifest.
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


def index_params(config: DenseConfig, lite: bool = True) -> tuple[str, dict, dict]:
    """(Milvus index type, build params, search params) for a :class:`DenseConfig` on Milvus Lite or a server."""
    if config.kind == "flat":
        return "FLAT", {}, {}
    if config.kind == "hnsw":
        return "HNSW", {"M": config.hnsw_m, "efConstruction": config.ef_construction}, {"ef": config.ef_search}
    if config.kind == "ivfpq":
        if config.refine not in ("", "flat", "sq8"):
            raise DenseIndexError(f"unknown refine '{config.refine}'; use flat, sq8 or nothing")
        # Milvus Lite 3.2 accepts IVF_PQ when the collection is created but refuses to build it when segments are
        # sealed ("reserved for a future phase"; it builds HNSW, HNSW_SQ, IVF_FLAT, IVF_SQ8 and brute force), so the
        # compressed kind there is IVF_SQ8: 8-bit codes scored exactly, which is what FAISS's 8-bit re-ranking store
        # gives. A server (2.3.5 and later) builds IVF_PQ, but with no re-ranking store its recall is PQ's alone: it
        # is built only when no re-ranking is asked.
        if not lite and not config.refine:
            return "IVF_PQ", {"nlist": config.nlist, "m": config.pq_m, "nbits": 8}, {"nprobe": config.nprobe}
        return "IVF_SQ8", {"nlist": config.nlist}, {"nprobe": config.nprobe}
    raise DenseIndexError(f"unknown dense index kind '{config.kind}'; use flat, hnsw or ivfpq")


def collection_schema(client, dimension: int, config: DenseConfig, full_text: bool, lite: bool):
    """A version's collection: schema and index parameters (``client`` only makes the objects; nothing is sent).

    Fields: ``pmid`` (primary key), ``vector`` (inner product on unit vectors) and, with ``full_text``, ``text``
    with the engine's BM25 function filling a ``sparse`` field.
    """
    from pymilvus import DataType, Function, FunctionType

    index_type, build_params, _ = index_params(config, lite)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pmid", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
    params = client.prepare_index_params()
    params.add_index(field_name="vector", index_type=index_type, metric_type="IP", params=build_params)
    if full_text:
        schema.add_field("text", DataType.VARCHAR, max_length=65535, enable_analyzer=True)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                     input_field_names=["text"], output_field_names=["sparse"]))
        params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return schema, params
