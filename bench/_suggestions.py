"""Suggestion queries and systems for bench/suggest.py (see its docstring for the design).

Queries come from gold document-level relations of one split: for a concept A related to B, the partial query
"A → which concepts of B's kind?", gold = every concept of that kind related to A in the split; n-ary queries
take a variant with its gene (the gene most often in a sentence with it) → the chemicals or diseases related
to the variant. Candidates are ranked per system over a pool of documents; metrics use ranx through
``curation.learning.statistics.per_query`` (candidate concept ids play the documents' part).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curation.entities.synonyms import PUBTATOR_KINDS
from curation.ingest.problems import Problems
from curation.records import Document, Mention
from curation.relations.pairs import concept_ids, sentences
from curation.relations.scorer import RelationScorer
from curation.relations.stored_pairs import score_document
from curation.relations.suggestions import PairEvidence, aggregate

ANSWER_KINDS = ("gene", "chemical", "disease", "variant")
METRICS = {"map": "map", "mrr": "mrr", "hits@1": "hit_rate@1", "recall@10": "recall@10"}
GENERIC_TOP = 3  # a generic concept is counted when it is in a query's top GENERIC_TOP


def kind_of(mention_type: str) -> str | None:
    return PUBTATOR_KINDS.get(mention_type) or (mention_type if mention_type in ANSWER_KINDS else None)


@dataclass(frozen=True)
class Query:
    qid: str
    kind: str  # the query kind: "biored_binary", "bc5cdr_cid", "biored_nary"
    slots: tuple[tuple[str, str, str], ...]  # (slot, entity kind, gold concept id)
    answer_kind: str
    gold: frozenset[str]


@dataclass
class Pool:
    """Documents, their mentions (gold or predicted) grouped by concept, and each concept's kind."""

    documents: dict[str, Document]
    mentions: dict[str, list[Mention]]
    kinds: dict[str, str] = field(default_factory=dict)  # concept → kind (first seen)
    by_concept: dict[str, dict[str, list[Mention]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for pmid, found in self.mentions.items():
            grouped: dict[str, list[Mention]] = defaultdict(list)
            for m in found:
                kind = kind_of(m.type)
                for cid in concept_ids(m):
                    grouped[cid].append(m)
                    if kind:
                        self.kinds.setdefault(cid, kind)
            self.by_concept[pmid] = dict(grouped)

    def mentioning(self, concept: str) -> list[str]:
        return [p for p, g in self.by_concept.items() if concept in g]


def _related(document: Document) -> set[tuple[str, str]]:
    out = set()
    for r in document.relations:
        for a in r.concept1.split(","):
            for b in r.concept2.split(","):
                if a.strip() and b.strip() and a.strip() != b.strip():
                    out.add((a.strip(), b.strip()))
    return out


def make_queries(docs: Sequence[Document], corpus: str, cid_only: bool = False) -> list[Query]:
    """Binary queries from every relation of ``docs`` (both directions), and, for BioRED, n-ary ones."""
    kinds: dict[str, str] = {}
    for d in docs:
        for m in d.mentions:
            kind = kind_of(m.type)
            for cid in concept_ids(m):
                if kind:
                    kinds.setdefault(cid, kind)
    related: dict[tuple[str, str], set[str]] = defaultdict(set)  # (concept, answer kind) → related concepts
    for d in docs:
        for a, b in _related(d):
            ka, kb = kinds.get(a), kinds.get(b)
            if ka not in ANSWER_KINDS or kb not in ANSWER_KINDS:
                continue
            if cid_only and {ka, kb} != {"chemical", "disease"}:
                continue
            related[(a, kb)].add(b)
            related[(b, ka)].add(a)
    label = "bc5cdr_cid" if cid_only else f"{corpus}_binary"
    slot_names = {"gene": "Gene", "chemical": "Chemical", "disease": "Disease", "variant": "Variant"}
    out = [Query(f"{label}:{a}>{k}", label, ((slot_names[kinds[a]], kinds[a], a),), k, frozenset(gold))
           for (a, k), gold in sorted(related.items())]
    if corpus == "biored" and not cid_only:
        genes = _variant_genes(docs)
        for (a, k), gold in sorted(related.items()):
            if kinds[a] == "variant" and k in ("chemical", "disease") and a in genes:
                out.append(Query(f"biored_nary:{genes[a]}+{a}>{k}", "biored_nary",
                                 (("Gene", "gene", genes[a]), ("Variant", "variant", a)), k, frozenset(gold)))
    return out


def _variant_genes(docs: Sequence[Document]) -> dict[str, str]:
    """Variant concept → the gene concept most often in one sentence with it (its gene, as a curator types it)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for d in docs:
        starts = [s for s, _ in sentences(d.text)]
        genes: dict[int, set[str]] = defaultdict(set)
        variants: dict[int, set[str]] = defaultdict(set)
        for m in d.mentions:
            kind = kind_of(m.type)
            for cid in concept_ids(m):
                if kind == "gene":
                    genes[bisect_right(starts, m.start) - 1].add(cid)
                elif kind == "variant":
                    variants[bisect_right(starts, m.start) - 1].add(cid)
        for i, vs in variants.items():
            for v in vs:
                counts[v].update(genes.get(i, ()))
    return {v: c.most_common(1)[0][0] for v, c in counts.items() if c}


def score_pool(pool: Pool, scorer: RelationScorer) -> dict[str, dict[tuple[str, str], tuple[float, bool]]]:
    """PMID → (concept, concept) (both orders) → (probability, same sentence), for every co-mentioned pair."""
    out: dict[str, dict[tuple[str, str], tuple[float, bool]]] = {}
    for pmid, document in pool.documents.items():
        mentions = pool.mentions.get(pmid, [])
        pairs = score_document(document, mentions, scorer)
        table = {}
        for p in pairs:
            table[(p.concept_a, p.concept_b)] = table[(p.concept_b, p.concept_a)] = (p.score or 0.0, p.same_sentence)
        out[pmid] = table
    return out


def evidence(pool: Pool, scores: Mapping[str, Mapping[tuple[str, str], tuple[float, bool]]],
             ranks: Mapping[str, int], slot_ids: Mapping[str, Mapping[str, set[str]]], answer_kind: str,
             cooccurrence: bool = False) -> list[PairEvidence]:
    """Per ranked document, candidate of ``answer_kind`` and slot: the best probability over the slot's concepts
    there (``cooccurrence``: 1.0 for any co-mention)."""
    out = []
    for pmid, rank in ranks.items():
        grouped = pool.by_concept.get(pmid, {})
        table = scores.get(pmid, {})
        for slot, per_doc in slot_ids.items():
            mine = per_doc.get(pmid, set())
            if not mine:
                continue
            for cand in grouped:
                if cand in mine or pool.kinds.get(cand) != answer_kind:
                    continue
                best = max((table.get((q, cand), (0.0, False)) for q in mine), default=(0.0, False))
                p = 1.0 if cooccurrence else best[0]
                out.append(PairEvidence(pmid, rank, slot, cand, cand, p, (0, 0), best[1]))
    return out


def ranked(evidence_rows: Iterable[PairEvidence], slots: Sequence[str], aliases: Mapping[str, str] | None = None,
           exclude: frozenset[str] = frozenset(), **rule) -> dict[str, float]:
    """A run for one query: candidate (mapped through ``aliases`` to the gold id space) → score; ``exclude``:
    candidates (as found, before the mapping) left out, as the product leaves generic concepts out."""
    rows = [e for e in evidence_rows if e.candidate not in exclude]
    if aliases is not None:
        rows = [PairEvidence(e.pmid, e.rank, e.slot, aliases.get(e.candidate, "?" + e.candidate), e.name,
                             e.probability, e.evidence, e.same_sentence) for e in rows]
    out = aggregate(rows, slots, **rule)
    n = len(out)
    return {c.concept_id: float(n - i) for i, c in enumerate(out)}  # rank-preserving scores (ties broken)


def frequency_prior(pool: Pool, answer_kind: str, exclude: Iterable[str],
                    aliases: Mapping[str, str] | None = None) -> dict[str, float]:
    counts: Counter = Counter()
    for grouped in pool.by_concept.values():
        for cid in grouped:
            if pool.kinds.get(cid) == answer_kind:
                counts[aliases.get(cid, "?" + cid) if aliases is not None else cid] += 1
    for cid in exclude:
        counts.pop(cid, None)
    top = counts.most_common(200)
    return {c: float(len(top) - i) for i, (c, _) in enumerate(top)}


def align(pool: Pool, gold: Mapping[str, Sequence[Mention]]) -> dict[str, str]:
    """Predicted concept → the gold concept its mentions overlap most often (documents with gold mentions)."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for pmid, found in pool.mentions.items():
        golds = gold.get(pmid)
        if not golds:
            continue
        for m in found:
            overlapping = [g for g in golds
                           if g.start < m.end and m.start < g.end and kind_of(g.type) == kind_of(m.type)]
            for g in overlapping:
                for gid in concept_ids(g):
                    for pid in concept_ids(m):
                        votes[pid][gid] += 1
    return {pid: c.most_common(1)[0][0] for pid, c in votes.items()}


def realistic_lexicon(data_dir: Path, training_docs, vocabularies: bool = True):
    """The dictionaries a deployment has: DrugBank, CIViC, the gold mention names of Train documents only, and
    (``vocabularies``) every installed vocabulary "Load the sample" loads (MeSH, the drug vocabulary, gene
    aliases), read with the Train mentions only where a reader takes gold (MeSH kinds, mouse gene ids)."""
    from curation.entities.dictionaries import (
        MINED_FORMATS,
        assemble_lexicon,
        merged_synonyms,
        read_dictionary,
        vocabulary_kinds,
    )
    from curation.entities.synonyms import drugbank_synonyms
    from curation.entities.vocabularies import installed
    from curation.ingest.civic import read_civic
    from curation.schemas import PO

    drugbank = data_dir / "dicts" / "drugbank_vocabulary.csv"
    dictionary = list(drugbank_synonyms(drugbank)) if drugbank.exists() else []
    train_mentions = [m for d in training_docs for m in d.mentions]
    for kind in vocabulary_kinds() if vocabularies else ():
        if kind in MINED_FORMATS or (kind in ("mesh", "drug-ner") and not installed(kind)):
            continue  # code names are mined from a store's text; this pool has no store
        dictionary += list(read_dictionary(kind, None, train_mentions))
    records = []
    for path in sorted((data_dir / "civic").glob("*.tsv")):
        records += [r for r in read_civic(path, Problems(path, lenient=True)) if r.schema == PO.name]
    synonyms = merged_synonyms(dictionary, [(PO, records)], [m for d in training_docs for m in d.mentions])
    return assemble_lexicon(synonyms, training_docs)


def run_name(n: int, rule: str, weight: str, sentence: bool, combine: str) -> str:
    return f"scorer_served@{n}:{rule}/{weight}" + ("/sentence" if sentence else "") + (f"/{combine}" if combine else "")


def generic_report(runs, queries, generic: frozenset[str], aliases) -> dict:
    """How often each candidate is in a query's top :data:`GENERIC_TOP` and how often it is gold there, for the
    product's rule without the generic filter (what :data:`curation.relations.generic_concepts.GENERIC` was
    chosen from, on dev), and how many queries a concept of that list tops with and without the filter."""
    from curation.learning.statistics import per_query
    from curation.relations.suggestions import NARY_COMBINE, RULE, SENTENCE

    out: dict = {"list": sorted({aliases.get(c, c) for c in generic})}
    for corpus, qs in queries.items():
        shown, right = Counter(), Counter()
        with_list = without = 0
        qrels = {q.qid: {g: 1 for g in q.gold} for q in qs}
        names = {q.qid: run_name(20, RULE["rule"], RULE["weight"], SENTENCE, NARY_COMBINE if len(q.slots) > 1 else "")
                 for q in qs}
        maps = {kind: per_query({q.qid: runs[corpus].get(names[q.qid] + suffix, {}).get(q.qid, {}) for q in qs},
                                qrels, "map") for kind, suffix in (("filtered", ""), ("unfiltered", "/unfiltered"))}
        for q in qs:
            name = names[q.qid]
            plain = runs[corpus].get(name + "/unfiltered", {}).get(q.qid, {})
            filtered = runs[corpus].get(name, {}).get(q.qid, {})
            top = sorted(plain, key=lambda c: -plain[c])[:GENERIC_TOP]
            shown.update(top)
            right.update(c for c in top if c in q.gold)
            listed = {aliases.get(c, c) for c in generic}
            without += any(c in listed for c in top)
            with_list += any(c in listed for c in sorted(filtered, key=lambda c: -filtered[c])[:GENERIC_TOP])
        out[corpus] = {"queries": len(qs), "queries_with_listed_in_top3": {"unfiltered": without,
                                                                           "filtered": with_list},
                       "map_top20": {k: round(sum(v.values()) / max(1, len(v)), 4) for k, v in maps.items()},
                       "most_in_top3": [{"concept": c, "top3": n, "gold": right[c]} for c, n in shown.most_common(25)]}
    return out
