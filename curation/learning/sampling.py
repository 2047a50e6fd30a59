"""EDEL training pairs from a knowledge base: graded positives and classed negatives (§4, app. A).

Positives: every KB record with an answer and an abstract in the corpus gives
(query from the schema's template, its abstract); its margin class comes from the text-match
pattern g — which of the record's entities the abstract mentions.

Negatives, for each positive: other records' abstracts, classed by the KB-match pattern h
(query entities coincide; the answer slot matches when both records have one) and by g over
their own abstract; BM25 hits for the query that mention the same gene/protein; random
abstracts. An abstract that is a positive for the query is never its negative. At most
``per_class`` negatives of each class are drawn per positive (seeded).

Ablations follow the paper (cumulative, as its Table 3 rows): ``no_multimargin`` (margins 0
for positives and 1 for negatives, class-2 negatives dropped), ``no_noisy_pos`` (also only
complete positives), ``no_hard_neg`` (also random negatives instead of all others).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from curation.learning.margins import MarginClass, MarginTable
from curation.learning.training import TrainingPair
from curation.records import Document, KBRecord
from curation.schemas import RelationSchema
from index.hits import Ranking

TextMatch = Callable[[str, str, Document], bool]
Bm25Search = Callable[[list[str], int], list[Ranking]]  # queries, k -> each query's ranking


class Ablation(StrEnum):
    EDEL = "edel"
    NO_MULTIMARGIN = "no_multimargin"
    NO_NOISY_POS = "no_noisy_pos"
    NO_HARD_NEG = "no_hard_neg"


@dataclass(frozen=True)
class SamplingConfig:
    """Negative sampling caps and the ablation.

    Attributes:
        per_class: KB-derived negatives per class per positive.
        bm25_negatives: BM25 negatives (same gene/protein) per positive.
        random_negatives: random negatives per positive.
        bm25_depth: how deep to look in the BM25 ranking.
        candidate_pool: random records examined per positive for classes sharing no query entity.
        seed: sampling seed.
        ablation: which of the paper's ablations to build.
    """

    per_class: int = 2
    bm25_negatives: int = 2
    random_negatives: int = 2
    bm25_depth: int = 30
    candidate_pool: int = 40
    seed: int = 13
    ablation: Ablation = Ablation.EDEL


@dataclass(frozen=True)
class TrainingSet:
    pairs: tuple[TrainingPair, ...]
    margins: Mapping[str, float]

    def counts(self) -> dict[str, dict[str, int]]:
        """{class: {"positive": n, "negative": n}} like the paper's Table 2."""
        table: dict[str, dict[str, int]] = defaultdict(lambda: {"positive": 0, "negative": 0})
        for pair in self.pairs:
            table[pair.margin_class]["positive" if pair.positive else "negative"] += 1
        return dict(table)

    def sources(self) -> dict[str, int]:
        return dict(Counter(p.source for p in self.pairs))

    def report(self) -> dict[str, dict[str, dict[str, int]]]:
        """{source: {class: {"positive": n, "negative": n}}}: what each source contributed."""
        table: dict[str, dict[str, dict[str, int]]] = {}
        for pair in self.pairs:
            row = table.setdefault(pair.source, {}).setdefault(pair.margin_class, {"positive": 0, "negative": 0})
            row["positive" if pair.positive else "negative"] += 1
        return table

    def format_report(self) -> str:
        """A plain-text table of source, class, margin and counts."""
        rows = [f"{'source':<10} {'class':<17} {'margin':>6} {'positives':>10} {'negatives':>10}"]
        for source, classes in sorted(self.report().items()):
            for name in sorted(classes, key=lambda n: (self.margins.get(n, 9), n)):
                c = classes[name]
                rows.append(f"{source:<10} {name:<17} {self.margins.get(name, float('nan')):>6.2f} "
                            f"{c['positive']:>10} {c['negative']:>10}")
        rows.append(f"{'total':<10} {'':<17} {'':>6} {sum(p.positive for p in self.pairs):>10} "
                    f"{sum(not p.positive for p in self.pairs):>10}")
        return "\n".join(rows)

    def format_table(self) -> str:
        """A plain-text table of class, margin and counts."""
        rows = ["class        margin   positives   negatives"]
        counts = self.counts()
        for name in sorted(counts, key=lambda n: (self.margins.get(n, 9), n)):
            c = counts[name]
            margin = self.margins.get(name, float("nan"))
            rows.append(f"{name:<12} {margin:>6.2f} {c['positive']:>11} {c['negative']:>11}")
        rows.append(f"{'total':<12} {'':>6} {sum(c['positive'] for c in counts.values()):>11} "
                    f"{sum(c['negative'] for c in counts.values()):>11}")
        return "\n".join(rows)


def entity_key(kind: str, value: str) -> str:
    """How KB matching compares two entity values: notation-normalised variants, case-folded names."""
    value = " ".join(value.split()).casefold()
    if kind == "variant" and value:
        from curation.entities.variants import normalise_variant

        return (normalise_variant(value) or value).casefold()
    return value


class _Records:
    """KB records with abstracts, indexed for KB matching."""

    def __init__(self, schema: RelationSchema, records: Sequence[KBRecord], documents: Mapping[str, Document]):
        self.schema = schema
        self.query_types = schema.query_types
        self.records = [r for r in records if r.schema == schema.name and r.pmid and r.pmid in documents]
        self.keys = [
            tuple(entity_key(schema.kind(t), r.get(t)) for t in self.query_types) for r in self.records
        ]
        self.answered = [bool(r.get(schema.answer).strip()) for r in self.records]
        self.by_value: dict[tuple[int, str], list[int]] = defaultdict(list)
        for i, key in enumerate(self.keys):
            for slot, value in enumerate(key):
                if value:
                    self.by_value[(slot, value)].append(i)
        self.positive_pmids: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for i, r in enumerate(self.records):
            if self.answered[i]:
                self.positive_pmids[self.keys[i]].add(r.pmid)

    def kb_match(self, i: int, j: int) -> tuple[bool, ...]:
        """h over the schema's entity types (answer: both records have one)."""
        query = dict(zip(self.query_types, (a == b and a != "" for a, b in zip(self.keys[i], self.keys[j],
                                                                                  strict=True)), strict=True))
        answer = self.answered[i] and self.answered[j]
        return tuple(answer if t == self.schema.answer else query[t] for t in self.schema.entity_types)


def build_training_set(
    schema: RelationSchema,
    records: Sequence[KBRecord],
    documents: Mapping[str, Document],
    text_match: TextMatch,
    table: MarginTable,
    config: SamplingConfig = SamplingConfig(),
    bm25: Bm25Search | None = None,
) -> TrainingSet:
    """Positives and negatives for one schema's records whose abstracts are in ``documents``."""
    ablation = Ablation(config.ablation)
    rng = random.Random(config.seed)
    kb = _Records(schema, records, documents)
    types = schema.entity_types
    g_cache: dict[tuple[str, str, str], bool] = {}

    def g(record: KBRecord) -> tuple[bool, ...]:
        doc = documents[record.pmid]
        out = []
        for t in types:
            value = record.get(t)
            key = (t, value, record.pmid)
            if key not in g_cache:
                g_cache[key] = bool(value) and text_match(value, schema.kind(t), doc)
            out.append(g_cache[key])
        return tuple(out)

    margins: dict[str, float] = {}
    best: dict[tuple[str, str], tuple[TrainingPair, int]] = {}
    for i, record in enumerate(kb.records):
        if not kb.answered[i]:
            continue
        margin_class = table.positive_class(g(record))
        if ablation is not Ablation.EDEL and ablation is not Ablation.NO_MULTIMARGIN and margin_class.margin > 0:
            continue  # without noisy positives: only complete ones
        query = schema.render_query({t: record.get(t) for t in kb.query_types})
        pair = _pair(query, record.pmid, margin_class, ablation, "kb")
        key = (query, record.pmid)
        if key not in best or pair.margin < best[key][0].margin:
            best[key] = (pair, i)
        margins[pair.margin_class] = pair.margin

    pairs: list[TrainingPair] = []
    corpus = sorted(documents)
    for (query, pmid), (positive, i) in best.items():
        pairs.append(positive)
        excluded = kb.positive_pmids[kb.keys[i]] | {pmid}
        negatives: list[TrainingPair] = []
        if ablation is not Ablation.NO_HARD_NEG:
            negatives += _kb_negatives(kb, i, excluded, g, table, config, rng, ablation, query)
            if bm25 is not None and config.bm25_negatives:
                gene_type = kb.query_types[0]
                gene = kb.records[i].get(gene_type)
                hits = [d for d, _ in bm25([query], config.bm25_depth)[0] if d not in excluded and d in documents]
                hits = [d for d in hits if text_match(gene, schema.kind(gene_type), documents[d])]
                for doc in hits[: config.bm25_negatives]:
                    negatives.append(_pair(query, doc, table.bm25, ablation, "bm25"))
                    excluded = excluded | {doc}
            random_count = config.random_negatives
        else:
            classes = 3 if table.negatives else 1
            random_count = config.per_class * classes + config.bm25_negatives + config.random_negatives
        tries = 0
        drawn = 0
        while drawn < random_count and tries < random_count * 20 and corpus:
            tries += 1
            doc = corpus[rng.randrange(len(corpus))]
            if doc in excluded:
                continue
            negatives.append(_pair(query, doc, table.random, ablation, "random"))
            excluded = excluded | {doc}
            drawn += 1
        for negative in negatives:
            margins[negative.margin_class] = negative.margin
        pairs.extend(negatives)
    return TrainingSet(tuple(pairs), margins)


def _kb_negatives(kb: _Records, i: int, excluded: set[str], g, table: MarginTable, config: SamplingConfig,
                  rng: random.Random, ablation: Ablation, query: str) -> list[TrainingPair]:
    candidates: set[int] = set()
    for slot, value in enumerate(kb.keys[i]):
        if value:
            candidates.update(kb.by_value[(slot, value)])
    if kb.records:
        candidates.update(rng.randrange(len(kb.records)) for _ in range(config.candidate_pool))
    by_class: dict[str, list[tuple[MarginClass, str]]] = defaultdict(list)
    for j in sorted(candidates):
        other = kb.records[j]
        if j == i or other.pmid in excluded:
            continue
        h = kb.kb_match(i, j)
        if all(h):
            continue  # another positive for this query
        # An empty slot (a record without an answer) has nothing its abstract could fail to mention.
        own = tuple(matched or not other.get(t) for matched, t in zip(g(other), kb.schema.entity_types, strict=True))
        margin_class = table.negative_class(h, own)
        if margin_class is None:
            continue
        if ablation is not Ablation.EDEL and margin_class.name == "neg-2":
            continue  # the ablations drop the negatives that most resemble noisy positives
        by_class[margin_class.name].append((margin_class, other.pmid))
    out = []
    for name in sorted(by_class):
        choices = list(dict.fromkeys(by_class[name]))
        rng.shuffle(choices)
        taken: set[str] = set()
        for margin_class, pmid in choices:
            if len(taken) >= config.per_class:
                break
            if pmid in taken:
                continue
            taken.add(pmid)
            out.append(_pair(query, pmid, margin_class, ablation, "kb"))
    return out


def _pair(query: str, pmid: str, margin_class: MarginClass, ablation: Ablation, source: str) -> TrainingPair:
    pair = TrainingPair(query, pmid, margin_class.positive, margin_class.margin, margin_class.name, source)
    if ablation is Ablation.EDEL:
        return pair
    # Binary margins: pull positives all the way in, push every negative to orthogonality.
    return replace(pair, margin=0.0 if pair.positive else 1.0)
