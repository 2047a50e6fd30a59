"""Moved to :mod:`curation.learning.recogniser.data` (the recogniser's home); these names stay here for bench/ and the
shared test fixtures, which import them from this path."""

from __future__ import annotations

from curation.learning.recogniser.data import (
    ALL,
    BC5CDR,
    BIORED,
    Corpora,
    CorpusPart,
    gene_variant_spans,
    load_corpora,
)

__all__ = ["ALL", "BC5CDR", "BIORED", "Corpora", "CorpusPart", "gene_variant_spans", "load_corpora"]
