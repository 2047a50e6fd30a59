"""2-D maps of a model version's embedding space: documents and queries, labelled for colouring.

One version's points are a sample of its indexed documents (their stored vectors, never
re-encoded) and the queries of the schema's decided and worklist relations (encoded with the
version's own model), projected together to two dimensions. PCA is the default: exact,
deterministic and instant; UMAP shows local neighbourhoods better but costs seconds per
thousand points (and its first call compiles for ~15 s), so the sample is capped.

Labels come from the store: the best active decision grade of a document, the gene (first
query entity) and answer entities of its KB records and decisions, and, when a text-match
function is given, the margin class EDEL training gives the document as a KB positive. The
manifest only counts pairs per class (``training_classes``), so the class is recomputed with
the same margin table and matcher that training uses. ``curation.workflows.projection`` loads a version's
index and model and calls :func:`build_projection` (the Explore page).
"""

from __future__ import annotations

import html
import random
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import duckdb
import numpy as np

from curation.errors import CurationError, SchemaError
from curation.grades import GRADES
from curation.learning.margins import margin_table
from curation.records import Document, KBRecord
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents
from curation.store.decisions import list_decisions
from curation.store.kb import list_kb_records
from curation.store.worklist import list_worklist

if TYPE_CHECKING:
    from index.dense import DenseIndex

TextMatch = Callable[[str, str, Document], bool]
UNDECIDED = "undecided"
DOCUMENT = "document"
QUERY = "query"
NOT_POSITIVE = "not a KB positive"
NOT_COMPUTED = "not computed"
NONE = "none"
OTHER = "other"
MIN_UMAP_POINTS = 4
HOVER_TITLE = 120


class ProjectionError(CurationError):
    """A projection that cannot be made as asked."""


class Method(StrEnum):
    PCA = "pca"
    UMAP = "umap"


class ColourBy(StrEnum):
    GRADE = "grade"
    MARGIN_CLASS = "margin_class"
    GENE = "gene"
    ANSWER = "answer"


@dataclass(frozen=True)
class ProjectionConfig:
    """What to project and how.

    Attributes:
        method: PCA (default, instant) or UMAP (slower, local structure).
        seed: the document sample's and UMAP's seed; the same seed gives the same map.
        max_documents: documents sampled besides the decided ones (which are always shown).
        max_queries: decided / worklist relations shown as query points.
    """

    method: Method = Method.PCA
    seed: int = 13
    max_documents: int = 1500
    max_queries: int = 300


@dataclass(frozen=True)
class Point:
    """One projected embedding.

    Attributes:
        kind: "document" or "query".
        key: the PMID, or the query text.
        x, y: projected coordinates.
        grade: best active decision grade of a document ("undecided" when none; "query" for queries).
        margin_class: the document's positive margin class ("pos-1 (0.0)"), "not a KB positive",
            "not computed" without a matcher, or "query".
        gene: the most frequent first query entity (gene / protein) of its records, "" when none.
        answer: the most frequent answer entity of its records and decisions, "" when none.
        hover: escaped hover text (PMID and title, or the query).
    """

    kind: str
    key: str
    x: float
    y: float
    grade: str
    margin_class: str
    gene: str
    answer: str
    hover: str


@dataclass(frozen=True)
class Projection:
    version: str
    method: str
    points: tuple[Point, ...]
    notes: tuple[str, ...] = ()

    def labels(self, by: ColourBy | str, top: int = 12) -> list[str]:
        """One colour label per point: the ``top`` most frequent values, the rest as "other"."""
        name = ColourBy(by).value
        values = [getattr(p, name) or NONE for p in self.points]
        keep = {v for v, _ in Counter(values).most_common(top)}
        return [v if v in keep else OTHER for v in values]


def project(vectors: np.ndarray, method: Method | str = Method.PCA, seed: int = 13) -> np.ndarray:
    """Project ``vectors`` (n, dim) to (n, 2) float32; the same seed gives the same result.

    Raises:
        ProjectionError: an unknown method, or too few points for UMAP.
    """
    try:
        method = Method(method)
    except ValueError:
        raise ProjectionError(f"unknown projection '{method}'; use one of {[m.value for m in Method]}") from None
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ProjectionError(f"expected a matrix of vectors (n, dim), got shape {vectors.shape}")
    n, dim = vectors.shape
    out = np.zeros((n, 2), dtype=np.float32)
    if n < 2 or dim == 0:
        return out  # nothing to spread out
    if method is Method.PCA:
        from sklearn.decomposition import PCA

        components = min(2, n, dim)
        # The full SVD is exact and sklearn fixes component signs, so the map is reproducible.
        out[:, :components] = PCA(n_components=components, svd_solver="full", random_state=seed).fit_transform(vectors)
        return out
    if n < MIN_UMAP_POINTS:
        raise ProjectionError(f"UMAP needs at least {MIN_UMAP_POINTS} points, got {n}; use PCA")
    import umap

    neighbours = min(15, n - 1)
    # Spectral initialisation fails on tiny graphs; random initialisation is fine there.
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=neighbours,
        metric="cosine",
        random_state=seed,
        init="spectral" if n >= 100 else "random",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "n_jobs overridden by random_state": determinism is the point
        return np.asarray(reducer.fit_transform(vectors), dtype=np.float32)


def sample_documents(
    indexed: Sequence[str], decided: Iterable[str], preferred: Iterable[str], cap: int, seed: int
) -> list[str]:
    """Indexed PMIDs to show: every decided one, then up to ``cap`` more, ``preferred`` ones first.

    The draw depends only on the ids and the seed, so two versions indexing the same corpus show
    the same documents.
    """
    available, preferred = set(indexed), set(preferred)
    chosen = sorted(set(decided) & available)
    rng = random.Random(seed)
    room = max(cap, 0)
    for pool in (sorted((preferred & available) - set(chosen)), sorted(available - set(chosen) - preferred)):
        picked = pool if len(pool) <= room else rng.sample(pool, room)
        chosen += sorted(picked)
        room -= len(picked)
    return chosen


def _most_common(counter: Counter) -> str:
    return min(counter.items(), key=lambda item: (-item[1], item[0]))[0] if counter else ""


def _hover_document(document: Document | None, pmid: str) -> str:
    title = document.title if document else ""
    if len(title) > HOVER_TITLE:
        title = title[: HOVER_TITLE - 1] + "…"
    return f"PMID {pmid}" + (f"<br>{html.escape(title)}" if title else "")


def build_projection(
    con: duckdb.DuckDBPyConnection,
    schema: RelationSchema,
    dense: DenseIndex,
    encoder,
    config: ProjectionConfig = ProjectionConfig(),
    version: str = "",
    text_match: TextMatch | None = None,
) -> Projection:
    """Project one version's documents and the schema's relation queries together.

    Args:
        con: the store (decisions, worklist, KB records, documents).
        schema: the relation schema whose decisions and records label the points.
        dense: the version's :class:`~index.dense.DenseIndex` (document vectors).
        encoder: the version's sentence-transformers model (query vectors).
        config: method, seed and caps.
        version: the version's name, for the result.
        text_match: g(e, d), e.g. ``Matcher.matched``; without it margin classes are not computed.
    """
    from index.encoder import encode_queries

    notes: list[str] = []
    gene_type = schema.query_types[0]
    decisions = list_decisions(con, schema=schema.name)
    records = list_kb_records(con, schema.name)

    grades: dict[str, str] = {}
    genes: dict[str, Counter] = defaultdict(Counter)
    answers: dict[str, Counter] = defaultdict(Counter)
    query_genes: dict[str, Counter] = defaultdict(Counter)
    query_answers: dict[str, Counter] = defaultdict(Counter)
    for d in decisions:
        values = dict(d.query_entities)
        if d.pmid not in grades or GRADES.index(d.grade) < GRADES.index(grades[d.pmid]):
            grades[d.pmid] = d.grade
        if values.get(gene_type):
            genes[d.pmid][values[gene_type]] += 1
            query_genes[d.query][values[gene_type]] += 1
        if d.answer:
            answers[d.pmid][d.answer] += 1
            query_answers[d.query][d.answer] += 1
    for r in records:
        query = _query_of(schema, {t: r.get(t) for t in schema.query_types})
        if r.get(gene_type):
            if r.pmid:
                genes[r.pmid][r.get(gene_type)] += 1
            if query:
                query_genes[query][r.get(gene_type)] += 1
        if r.get(schema.answer):
            if r.pmid:
                answers[r.pmid][r.get(schema.answer)] += 1
            if query:
                query_answers[query][r.get(schema.answer)] += 1

    # --- documents: decided ones always, then KB evidence, then the rest ----------------------
    indexed = list(dense.ids)
    pmids = sample_documents(indexed, grades, {r.pmid for r in records if r.pmid}, config.max_documents, config.seed)
    missing = sorted(set(grades) - set(indexed))
    if missing:
        notes.append(f"{len(missing)} decided documents are not in this version's index (added after it was built)")
    documents = {d.pmid: d for d in get_documents(con, pmids)}
    margins = _margin_classes(schema, records, documents, text_match) if text_match is not None else None

    # --- queries: the schema's decided relations, then its worklist -----------------------------
    queries = list(dict.fromkeys(d.query for d in decisions))
    for item in list_worklist(con, schema):
        query = _query_of(schema, item["values"])
        if query:
            queries.append(query)
    queries = list(dict.fromkeys(queries))
    if len(queries) > config.max_queries:
        notes.append(f"showing {config.max_queries} of {len(queries)} relations as queries")
        queries = queries[: config.max_queries]

    vectors = np.vstack([dense.vectors(pmids), encode_queries(encoder, queries)])  # (n_docs + n_queries, dim)
    xy = project(vectors, config.method, config.seed)  # (n_docs + n_queries, 2)
    points = [
        Point(
            DOCUMENT,
            pmid,
            float(xy[i, 0]),
            float(xy[i, 1]),
            grades.get(pmid, UNDECIDED),
            NOT_COMPUTED if margins is None else margins.get(pmid, NOT_POSITIVE),
            _most_common(genes.get(pmid, Counter())),
            _most_common(answers.get(pmid, Counter())),
            _hover_document(documents.get(pmid), pmid),
        )
        for i, pmid in enumerate(pmids)
    ]
    offset = len(pmids)
    points += [
        Point(
            QUERY,
            query,
            float(xy[offset + j, 0]),
            float(xy[offset + j, 1]),
            QUERY,
            QUERY,
            _most_common(query_genes.get(query, Counter())),
            _most_common(query_answers.get(query, Counter())),
            f"query: {html.escape(query)}",
        )
        for j, query in enumerate(queries)
    ]
    return Projection(version, Method(config.method).value, tuple(points), tuple(notes))


def _query_of(schema: RelationSchema, values: dict[str, str]) -> str:
    try:
        return schema.render_query(values)
    except SchemaError:
        return ""  # a relation no template can phrase has no query point


def _margin_classes(
    schema: RelationSchema, records: Sequence[KBRecord], documents: dict[str, Document], text_match: TextMatch
) -> dict[str, str]:
    """PMID → the smallest-margin positive class any of its KB records gives it (as training does)."""
    table = margin_table(schema)
    best: dict[str, tuple[float, str]] = {}
    for r in records:
        if not r.pmid or r.pmid not in documents or not r.get(schema.answer):
            continue
        document = documents[r.pmid]
        g = tuple(bool(r.get(t)) and text_match(r.get(t), schema.kind(t), document) for t in schema.entity_types)
        margin_class = table.positive_class(g)
        if r.pmid not in best or margin_class.margin < best[r.pmid][0]:
            best[r.pmid] = (margin_class.margin, f"{margin_class.name} ({margin_class.margin:.1f})")
    return {pmid: label for pmid, (_, label) in best.items()}
