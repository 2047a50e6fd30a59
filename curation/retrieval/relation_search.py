"""The served search: a partial relation → linked concepts → the documents that mention them, ranked.

One function, :func:`search_relation`, serves the Curate page, ``python -m curation search`` and the
benchmark's "served" system, so all three rank exactly alike:

1. every typed slot is linked (:class:`curation.entities.query.QueryLinker`): a confident link is
   applied, a weak one is offered and the slot is searched as typed until the curator applies it;
2. each slot becomes a concept query (:func:`curation.entities.postings.concept_query`): its postings
   in the concept index and its surface forms;
3. :func:`index.concepts.concept_search` ranks: documents that mention every concept first, then
   those that mention some; never a document that mentions none. The lexical stage is BM25 over the
   expanded forms (optionally with RM3); in hybrid mode the active version's dense model re-scores the
   candidates with the dense share the version chose on dev (:mod:`curation.learning.served_fusion`;
   older versions: the share their text fusion gives dense);
4. when the version serves a cross-encoder (chosen at build time on dev, and on a CPU only within the
   measured latency budget), it re-orders the best ``rerank_k`` hits within their groups
   (:mod:`index.rerank`, seed 004's re-ranking stage);
5. when the engine carries a learned ranking stage (``engine.learned``: a LightGBM ranker over features the
   product already has, :mod:`curation.ranking`), it re-orders the best ``depth`` hits, so the hits
   every caller sees are the learned order;
6. when the options carry the curator's grades of this query (in-session feedback,
   :mod:`curation.ranking.session`), the ungraded among the best 50 re-rank from them, the graded keep their places.

A lexical candidate counts for a slot when the matcher finds one of its concept's names in it, or the name as
typed (a phrase, :mod:`curation.retrieval.written`). A slot still found nowhere is looked up in the whole text (the
BM25 index narrows, the phrase check reads): the abstracts that write it are searched as the concept's. A note says
when only the typed name found a slot the concept index lists nowhere ("written in N abstracts that the concept
index does not link to X"); only a name no abstract writes is reported as mentioned nowhere, with close names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from curation.entities.matching import Matcher
from curation.entities.postings import ALTERNATIVE_WEIGHT, PostingsSource, concept_query
from curation.entities.query import QueryConcept, QueryError, QueryLinker
from curation.errors import CurationError
from curation.ranking.session import SessionConfig, apply_session
from curation.records import Document
from curation.retrieval.written import Written, phrase_regex, written_in
from curation.schemas import RelationSchema
from index.concepts import ConceptSearchConfig, concept_search
from index.expansion import RM3Config
from index.hits import Hit
from index.search import Retriever

MODES = ("hybrid", "bm25")


class SearchInputError(CurationError):
    """A typed relation that cannot be searched; the message names the slot."""


@dataclass(frozen=True)
class SearchOptions:
    """How to search.

    Attributes:
        mode: "hybrid" (lexical + the active version's dense model) or "bm25" (lexical only).
        k: how many hits.
        rm3: RM3 pseudo-relevance feedback on the lexical stage.
        applied: slot → concept id the curator applied from the suggestions.
        depth: lexical candidates per concept checked for a mention the concept index lacks (and, for a concept it
            lists nowhere, the abstracts holding the typed name's words read for it).
        alternative_weight: an alias's weight in the expanded query.
        dense_share: the dense share of the order in hybrid mode (None: the one the served version chose on dev,
            see :func:`served_share`).
        rerank: re-order the best hits with the version's cross-encoder in hybrid mode (None: when the version
            serves one; False: never). The cross-encoder re-orders within a group, never across.
        learned: apply the engine's learned ranking stage (None: when it carries one; False: never, e.g. to
            compute the stage's own training candidates or its baseline).
        grades: pmid → gain the curator gave this query's results in this session (2 complete, 1 partial, 0 not
            relevant); when any is among the best hits the ungraded re-rank from them (empty: no feedback).
    """

    mode: str = "hybrid"
    k: int = 20
    rm3: bool = False
    applied: Mapping[str, str] = field(default_factory=dict)
    depth: int = 50
    alternative_weight: float = ALTERNATIVE_WEIGHT
    dense_share: float | None = None
    rerank: bool | None = None
    learned: bool | None = None
    grades: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RelationSearch:
    """What a search found, for the page, the CLI and the benchmark.

    Attributes:
        query: the query text the dense stage encodes (canonical names of linked slots).
        concepts: each slot as linked.
        hits: the ranked documents (each with per-stage scores and the concepts it mentions).
        groups: how many documents mention all / some of the concepts.
        per_concept: per slot, how many documents mention it.
        problems: sentences for the curator: slots nothing mentions (with close names), offered links.
        version: the model version whose indexes served.
        mode: the mode used.
    """

    query: str
    concepts: tuple[QueryConcept, ...]
    hits: tuple[Hit, ...]
    groups: Mapping[str, int]
    per_concept: tuple[int, ...]
    problems: tuple[str, ...]
    version: str
    mode: str


def dense_share(fusion) -> float:
    """The share of the order a version's fusion gives its dense model (0: the lexical order)."""
    method = str(getattr(fusion, "method", "rerank"))
    if method == "rerank":
        return float(fusion.mix)
    if method in ("weighted", "rrf"):
        total = sum(fusion.weights)
        return float(fusion.weights[1] / total) if total else 0.0
    return 0.5


def served_share(engine: Retriever) -> float:
    """The dense share a served engine uses: the one its version chose on dev for this search, else its fusion's."""
    chosen = engine.served_dense_share
    return float(chosen) if chosen is not None else dense_share(engine.fusion)


def search_relation(
    engine: Retriever,
    linker: QueryLinker,
    matcher: Matcher,
    source: PostingsSource,
    documents: Callable[[Sequence[str]], Mapping[str, Document]],
    schema: RelationSchema,
    values: Mapping[str, str],
    options: SearchOptions = SearchOptions(),
) -> RelationSearch:
    """Link, search and rank one partial relation (see the module docstring).

    Args:
        engine: the served :class:`index.search.Retriever` (its BM25 index, dense index and fusion).
        linker: links typed names.
        matcher: the text matcher (checks a lexical candidate really writes a concept's form).
        source: the concept index.
        documents: PMIDs → documents (for the text check).
        schema: the relation schema (slot kinds, the dense query template).
        values: slot → typed text.

    Raises:
        SearchInputError: nothing typed, a value too long, or a mode the engine cannot serve.
    """
    if options.mode not in MODES:
        raise SearchInputError(f"unknown ranking mode '{options.mode}'; use one of {', '.join(MODES)}")
    if engine.lexical is None:
        raise SearchInputError("no BM25 index is loaded; build the indexes first")
    kinds = {slot: schema.kind(slot) for slot in schema.query_types}
    unknown = sorted(set(options.applied) - set(kinds))
    if unknown:
        raise SearchInputError(f"'{unknown[0]}' is not a query slot of {schema.name}; slots: {', '.join(kinds)}")
    try:
        concepts = linker.link_all(kinds, values, options.applied, schema.species)
    except QueryError as exc:
        raise SearchInputError(str(exc)) from None
    if not concepts:
        raise SearchInputError(f"fill in at least one of {', '.join(schema.query_types)} to search")
    queries = [concept_query(c, source, options.alternative_weight) for c in concepts]
    text = schema.render_query({c.slot: c.canonical if c.linked else c.typed for c in concepts})

    def verify(position: int, pmids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        concept = concepts[position]
        name = concept.canonical if concept.linked and concept.how != "codon" else concept.typed
        # what the curator typed, as written: the dictionaries may spell the concept otherwise ("Reye Syndrome")
        typed = phrase_regex(concept.typed)
        found = {}
        for pmid, document in documents(pmids).items():
            forms = [s.text for s in matcher.matches(name, concept.kind, document)]
            if forms and concept.linked:
                by_names.add(position)
            elif not forms and typed is not None:
                forms = [m.group(0) for m in typed.finditer(document.text)]
            if forms:
                found[pmid] = tuple(dict.fromkeys(forms))
        return found

    by_names: set[int] = set()  # the linked concepts whose dictionary names some candidate writes

    dense = None
    mix = 0.0
    if options.mode == "hybrid" and engine.dense is not None and engine.encoder is not None:
        mix = served_share(engine) if options.dense_share is None else float(options.dense_share)

        def dense(pmids: Sequence[str]) -> dict[str, float]:
            return engine.dense_scores({"q": text}, {"q": list(pmids)})["q"]

    reranker = engine.reranker if options.mode == "hybrid" and options.rerank is not False else None
    rerank_k = engine.rerank_k if reranker is not None else 0
    learned = getattr(engine, "learned", None) if options.learned is not False else None
    depth = max(options.k, rerank_k, learned.depth if learned is not None else 0,
                SessionConfig().depth if options.grades else 0)
    config = ConceptSearchConfig(depth=options.depth, rm3=RM3Config() if options.rm3 else None, dense_mix=mix)
    ranking = concept_search(queries, engine.lexical, depth, config, verify=verify, dense=dense)
    # Nothing found for a concept: the abstracts that write it as typed, beyond the lexical candidates, if any.
    written = {i: written_in(engine.lexical, documents, concepts[i].typed, options.depth) for i in ranking.missing}
    if any(w.found for w in written.values()):
        queries = [q._replace(texts=written[i].found) if i in written else q for i, q in enumerate(queries)]
        ranking = concept_search(queries, engine.lexical, depth, config, verify=verify, dense=dense)
    hits = list(ranking.hits)
    if rerank_k and hits:
        head = [h.pmid for h in hits[:rerank_k]]
        texts = {pmid: document.text for pmid, document in documents(head).items()}
        hits = reranker.rerank(text, hits, texts, rerank_k)
    if learned is not None and hits:
        head = [h.pmid for h in hits[: learned.depth]]
        answer = getattr(schema, "answer", "")  # a schema without an answer slot has no answer-kind features
        hits = learned.rerank(concepts, values, hits, documents(head), schema.kind(answer) if answer else "")
    if options.grades and hits:
        answer = getattr(schema, "answer", "")
        hits = apply_session(engine, concepts, values, hits, options.grades, documents,
                             schema.kind(answer) if answer else "")
    hits = hits[: options.k]
    problems = [_missing(concepts[i], written.get(i), options.depth) for i in ranking.missing]
    problems += [_unlinked(concepts[i], ranking.per_concept[i], written.get(i), options.depth)
                 for i, q in enumerate(queries) if not q.postings and i not in by_names and i not in ranking.missing]
    problems += [
        f"{c.slot} '{c.typed}' was not linked; did you mean {_names(c)}? Apply one to search for it by concept."
        for c in concepts if c.status == "offered" and c.alternatives and concepts.index(c) not in ranking.missing
    ]
    return RelationSearch(
        text, tuple(concepts), tuple(hits), dict(ranking.groups), ranking.per_concept, tuple(problems),
        engine.version, options.mode,
    )


def _names(concept: QueryConcept, n: int = 3) -> str:
    return ", ".join(f"'{c.canonical}'" for c in concept.alternatives[:n])


def _missing(concept: QueryConcept, written: Written | None, depth: int) -> str:
    """A slot nothing was found for: absent from the text too, or (a name the index cannot look up, more
    candidates than were read) not linked, without a claim about the whole text."""
    forms = len(concept.forms)
    close = f" Close names: {_names(concept)}." if concept.alternatives else ""
    if written is not None and not written.checked:
        return (f"No abstract is linked to {concept.slot} '{concept.typed}', and a name this short (or made of common "
                f"words only) cannot be looked up in the abstracts' text.{close}")
    if written is not None and not written.complete:
        return (f"No abstract is linked to {concept.slot} '{concept.typed}', and none of the {depth} abstracts that "
                f"best match its words writes it as typed.{close}")
    also = f" or any of its {forms} written forms" if forms > 1 else ""
    return f"No abstract mentions {concept.slot} '{concept.typed}'{also}.{close}"


def _unlinked(concept: QueryConcept, n: int, written: Written | None, depth: int) -> str:
    """A slot the concept index lists nowhere and the dictionaries' names find nowhere, found by the name as
    typed (``n`` abstracts: the lexical candidates' and, when those had none, the text's)."""
    target = f"'{concept.canonical}'" if concept.linked else "any concept"
    read = len(written.found) if written is not None else 0
    bound = (written is not None and not written.complete) or n - read >= depth  # more may write it than were read
    many = f"{'at least ' if bound else ''}{n} abstract{'s' if n > 1 else ''}"
    return (f"{concept.slot} '{concept.typed}' is written in {many} that the concept index does not link to "
            f"{target}; {'they are' if n > 1 else 'it is'} shown, found by the text (marked 'text').")
