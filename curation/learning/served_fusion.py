"""A version's served fusion, chosen on dev: how much its dense model moves the concept search's order.

The text fusion of :func:`curation.learning.build.choose_fusion` ranks rendered query text; the Curate
page ranks with the concept search (:func:`curation.retrieval.relation_search.search_relation`), whose
hybrid mode orders each result group by ``(1 - share) · lexical + share · dense``. This module runs that
very search over the dev queries (their typed slot values) for each candidate share and keeps the best
dev NDCG@10, so a version whose dense model ranks better on dev is given more of the order, and one whose
dense model does not keeps the lexical order. Ties go to the smaller share (closer to the lexical order,
which needs no model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from curation.entities.matching import Matcher
from curation.entities.postings import PostingsSource
from curation.entities.query import QueryLinker
from curation.learning.statistics import per_query
from curation.records import Document
from curation.retrieval.relation_search import SearchInputError, SearchOptions, search_relation
from curation.schemas import RelationSchema
from curation.versions.manifest import Served
from index.hits import RunDict
from index.search import Retriever

DENSE_SHARES = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
METRIC = "ndcg@10"


@dataclass(frozen=True)
class ServedSearch:
    """What the concept search needs besides the engine: the same parts the app serves with.

    Attributes:
        linker: typed names → concepts.
        matcher: the text check of lexical candidates.
        source: the concept index (postings).
        documents: PMIDs → documents.
        schema: the relation schema of the queries.
    """

    linker: QueryLinker
    matcher: Matcher
    source: PostingsSource
    documents: Callable[[Sequence[str]], Mapping[str, Document]]
    schema: RelationSchema


def served_run(engine: Retriever, search: ServedSearch, values: Mapping[str, Mapping[str, str]], options: SearchOptions
               ) -> RunDict:
    """The concept search's ranking of each query (qid → typed slot values) as a run (score: 1 / rank).

    A query the search refuses (nothing typed it can read) ranks nothing.
    """
    run: RunDict = {}
    for qid, typed in values.items():
        try:
            found = search_relation(engine, search.linker, search.matcher, search.source, search.documents,
                                    search.schema, typed, options)
        except SearchInputError:
            run[qid] = {}
            continue
        run[qid] = {hit.pmid: 1.0 / rank for rank, hit in enumerate(found.hits, start=1)}
    return run


def choose_dense_share(
    engine: Retriever, search: ServedSearch, values: Mapping[str, Mapping[str, str]],
    qrels: Mapping[str, Mapping[str, int]], shares: Sequence[float] = DENSE_SHARES, k: int = 50, dev_source: str = "kb",
) -> Served | None:
    """The dense share with the best mean dev ``METRIC`` of the served search (None: no dev query, no dense model).

    Args:
        engine: the new version's retriever (BM25 index, dense index, encoder).
        search: the linker, matcher, concept index and documents the search uses.
        values: dev qid → typed slot values; qrels: dev qid → relevant PMIDs.
        shares: the candidate shares, in [0, 1].
        k: how deep each ranking goes.
        dev_source: where the dev queries came from (recorded).
    """
    judged = {q: v for q, v in values.items() if q in qrels and v}
    if not judged or engine.dense is None or engine.encoder is None:
        return None
    scores = {}
    for share in shares:
        run = served_run(engine, search, judged, SearchOptions(mode="hybrid", k=k, dense_share=share))
        scored = per_query(run, {q: qrels[q] for q in judged}, METRIC)
        scores[share] = sum(scored.values()) / len(scored)
    best = max(scores, key=lambda s: (round(scores[s], 6), -s))
    return Served(dense_share=float(best), metric=METRIC,
                  dev_scores={f"{s:.2f}": round(v, 6) for s, v in scores.items()}, queries=len(judged),
                  dev_source=dev_source)


def served_search_for(matcher: Matcher, annotations: Mapping[str, Sequence], documents: Mapping[str, Document],
                      schema: RelationSchema) -> ServedSearch:
    """The search parts the app would serve a snapshot with: its matcher, its stored annotations as the
    concept index, and a query linker over the same lexicon (no learned linker: the build has none loaded)."""
    from curation.entities.normalise import Normaliser
    from curation.entities.postings import MemoryPostings
    from curation.entities.variants import variant_keys

    source = MemoryPostings(annotations)
    keys = {k for text in source.texts("variant") for k in variant_keys(text)}
    linker = QueryLinker(matcher.lexicon, Normaliser(matcher.lexicon), None, keys)
    return ServedSearch(linker, matcher, source, lambda pmids: {p: documents[p] for p in pmids if p in documents},
                        schema)
