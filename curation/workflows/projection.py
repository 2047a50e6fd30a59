"""The Explore page's map of a model version: load the version's dense index and model, project them
(:mod:`curation.learning.projection`), and what a cached map depends on."""

from __future__ import annotations

import duckdb

from curation.errors import CurationError
from curation.learning.projection import (
    DOCUMENT,
    NONE,
    NOT_COMPUTED,
    NOT_POSITIVE,
    OTHER,
    QUERY,
    UNDECIDED,
    ColourBy,
    Method,
    Projection,
    ProjectionConfig,
    TextMatch,
    build_projection,
)
from curation.schemas import RelationSchema
from curation.store.base import content_counts, stats
from curation.store.worklist import list_worklist
from curation.versions.catalog import RegisteredVersion
from curation.versions.registry import ModelVersion

# The map's vocabulary, which the page colours by (pages import it from here).
__all__ = [
    "DOCUMENT", "NONE", "NOT_COMPUTED", "NOT_POSITIVE", "OTHER", "QUERY", "UNDECIDED", "ColourBy", "Method",
    "Projection", "ProjectionConfig", "project_version", "projection_inputs",
]


def project_version(
    con: duckdb.DuckDBPyConnection,
    version: RegisteredVersion | ModelVersion,
    schema: RelationSchema,
    config: ProjectionConfig = ProjectionConfig(),
    text_match: TextMatch | None = None,
    device: str = "",
) -> Projection:
    """:func:`curation.learning.projection.build_projection` for a model version folder (registered or registry).

    Loads only what the map needs: the dense index and the model, not the BM25 index.

    Raises:
        CurationError: the version's folder is missing, incomplete or corrupted.
    """
    from curation.config import load_settings
    from index.encoder import EncoderConfig, load_encoder
    from index.loading import load_dense

    settings = load_settings()
    dense = load_dense(version.path / "dense", settings.milvus_uri, settings.milvus_token)
    try:
        encoder = load_encoder(EncoderConfig(model=str((version.path / "model").resolve()), device=device))
    except Exception as exc:  # weights that do not load are a corrupted version, not a crash
        raise CurationError(
            f"model version {version.version}: the model does not load ({type(exc).__name__}: {exc})"
        ) from None
    return build_projection(con, schema, dense, encoder, config, version=version.version, text_match=text_match)


def projection_inputs(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> tuple[int, ...]:
    """What a version's map depends on besides the version: documents, KB records, synonyms, decisions, worklist.

    A cached map is recomputed when this changes (every widget reruns the page, and UMAP takes seconds).
    """
    return (*content_counts(con), int(stats(con)["decisions"]), len(list_worklist(con, schema)))
