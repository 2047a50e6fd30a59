"""The benchmark assembled: records → leak-free splits → queries in three forms per relation kind.

A query groups the records of one kind whose query entities have the same canonical names (so a
human and a mouse gene both named "TNF" are one query); its relevant documents are their PMIDs and
its answers (for EntityRecall) their answer concepts. Every form of a query has the same id,
documents and answers: only the names differ. A dev or test query whose text, in any form, equals a
training query's text is dropped from every form (counted), so no evaluated text was trained on.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curation.entities.synonyms import drugbank_synonyms
from curation.learning.benchmark.corpus import BenchmarkError, document_concepts, load_corpus
from curation.learning.benchmark.names import FORM_NAMES, Names, most_frequent
from curation.learning.benchmark.records import (
    KIND_NAMES,
    BenchRecord,
    DerivationStats,
    derive_records,
    kind_of,
    merge_records,
)
from curation.learning.benchmark.splits import (
    SPLITS,
    SplitAssignment,
    SplitResult,
    assign,
    check_disjoint,
    entities_key,
    pin_query_ids,
)
from curation.learning.evaluation import AnswerKey
from curation.records import Document, Synonym


@dataclass(frozen=True)
class QuerySet:
    """The queries of one split, relation kind and form, with everything evaluation needs."""

    split: str
    kind: str
    form: str
    queries: Mapping[str, str]  # query id → text
    qrels: Mapping[str, Mapping[str, int]]  # query id → {pmid: 1}
    answer_key: AnswerKey
    records: Mapping[str, tuple[BenchRecord, ...]]  # query id → the records it groups
    fresh: frozenset[str] = frozenset()  # query ids whose reworded text renames every entity (same in every form)
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # query id → entity type → name typed


@dataclass(frozen=True)
class Benchmark:
    """The whole benchmark: corpus, records per split, and the query sets.

    Attributes:
        corpus: one document per distinct PMID (BioRED, BC5CDR, HoC).
        records: split → the records kept in it.
        assignment: the saved-or-new split assignment this build used (extended by new keys).
        query_sets: (split, kind, form) → queries.
        names: every name of every concept, for the forms and for training records.
        stats: counts for the report (derivation, conflicts, dropped texts, reworded fallbacks).
    """

    corpus: tuple[Document, ...]
    records: Mapping[str, tuple[BenchRecord, ...]]
    assignment: SplitAssignment
    query_sets: Mapping[tuple[str, str, str], QuerySet]
    names: Names
    stats: Mapping[str, object]
    seed: int

    def query_set(self, split: str, kind: str, form: str) -> QuerySet:
        if (split, kind, form) not in self.query_sets:
            raise BenchmarkError(f"no query set '{split}'/'{kind}'/'{form}'; splits are {SPLITS}, kinds "
                                 f"{list(KIND_NAMES)}, forms {list(FORM_NAMES)}")
        return self.query_sets[(split, kind, form)]

    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in KIND_NAMES if any(key[1] == k for key in self.query_sets))

    def counts(self) -> dict[str, object]:
        """Documents, records and queries per split and kind (every form has the same queries)."""
        queries = {
            split: {kind: len(self.query_set(split, kind, "canonical").queries) for kind in self.kinds()}
            for split in SPLITS
        }
        return {
            "corpus_documents": len(self.corpus),
            "records": {split: Counter(r.kind for r in self.records[split]) for split in SPLITS},
            "queries": queries,
            "positive_documents": {split: len({r.pmid for r in self.records[split]}) for split in SPLITS},
            **self.stats,
        }


def normalised(text: str) -> str:
    """A query text as compared for identity: case and spacing aside."""
    return " ".join(text.casefold().split())


def build_benchmark(
    data_dir: str | Path, seed: int = 13, split_file: str | Path | None = None,
    kinds: Sequence[str] = KIND_NAMES,
) -> Benchmark:
    """Build the benchmark from the shared data folder; deterministic given the seed and the split file.

    Args:
        data_dir: the folder with biored/, bc5cdr/ and hoc/.
        seed: the split hash's seed (for a new split) and the reworded form's choice.
        split_file: a saved split to follow (created by the caller with ``benchmark.assignment.save``);
            None or a missing file: a new assignment by the rule.
        kinds: which relation kinds to build.

    Raises:
        BenchmarkError: a source is missing or malformed, an unknown kind, or no curated relation of the
            requested kinds in the data.
    """
    _check_kinds(kinds)
    corpus, annotated = load_corpus(data_dir)
    drugbank = Path(data_dir) / "dicts" / "drugbank_vocabulary.csv"
    dictionary = drugbank_synonyms(drugbank) if drugbank.exists() else []
    return assemble(corpus, annotated, seed, split_file, kinds, dictionary)


def assemble(
    corpus: Sequence[Document], annotated: Sequence[Document], seed: int = 13,
    split_file: str | Path | None = None, kinds: Sequence[str] = KIND_NAMES, dictionary: Sequence[Synonym] = (),
) -> Benchmark:
    """:func:`build_benchmark` on documents already read (``dictionary``: chemical synonyms, see :class:`Names`)."""
    _check_kinds(kinds)
    derived: list[BenchRecord] = []
    stats = DerivationStats()
    for document in annotated:
        found, part = derive_records(document)
        derived += [r for r in found if r.kind in kinds]
        stats.merge(part)
    records = merge_records(derived)
    if not records:
        raise BenchmarkError(
            f"no curated relation of the kinds {list(kinds)} in the data: the benchmark needs PubTator relation "
            "lines between genes, variants, chemicals or diseases (BioRED, BC5CDR)"
        )
    names = Names(annotated, dictionary)
    saved = SplitAssignment.load(split_file) if split_file is not None and Path(split_file).exists() else None
    assignment, split = assign(records, names.canonical, saved, seed)
    check_disjoint({s: {r.pmid for r in rs} for s, rs in split.kept.items()})
    concepts = document_concepts(annotated)
    saved_queries = dict(saved.queries) if saved is not None else {}
    query_sets, dropped_texts, fallbacks, reworded = _query_sets(split, names, concepts, seed, kinds, saved_queries)
    # What a save writes: the saved queries, and every dev/test query of this build.
    assignment.queries = {**saved_queries, **{
        qid: sorted({entities_key(r) for r in rs})
        for (s, _, f), qs in query_sets.items() if f == "canonical" and s != "train" for qid, rs in qs.records.items()
    }}
    gaps = sorted(gap for *_, gap in stats.gene_gaps)
    report = {
        "derivation": {
            "variant_relations": stats.variant_relations,
            "variants_with_gene": stats.variants_with_gene,
            "variants_without_gene": len(set(stats.variants_without_gene)),
            "variant_gene_gap_median_chars": gaps[len(gaps) // 2] if gaps else 0,
            "variant_gene_gap_over_100_chars": sum(g > 100 for g in gaps),
            "records_before_split": dict(Counter(r.kind for r in records)),
        },
        "split": {
            "saved_file_used": saved is not None,
            "new_concepts": assignment.new_concepts,
            "new_documents": assignment.new_documents,
            "records_dropped_as_conflicts": dict(split.dropped),
            "queries_dropped_identical_to_train": dropped_texts,
        },
        "reworded_without_fresh_name": fallbacks,
        "reworded_entities": reworded,
        "chemicals_linked_to_drugbank": names.dictionary_links,
    }
    return Benchmark(tuple(corpus), split.kept, assignment, query_sets, names, report, seed)


def _check_kinds(kinds: Sequence[str]) -> None:
    for kind in kinds:
        try:
            kind_of(kind)
        except KeyError as exc:
            raise BenchmarkError(str(exc.args[0])) from None


def _query_sets(
    split: SplitResult, names: Names, concepts: Mapping[str, frozenset[str]], seed: int, kinds: Sequence[str],
    saved_queries: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[tuple[str, str, str], QuerySet], dict[str, int], dict[str, int], dict[str, dict[str, int]]]:
    """Query sets of every (split, kind, form), identical-to-train texts dropped; the queries dropped, the
    queries whose reworded form kept a canonical name, and per split the query entities renamed / in all."""
    texts: dict[tuple[str, str], dict[str, dict[str, str]]] = {}  # (split, kind) -> qid -> form -> text
    typed: dict[tuple[str, str], dict[str, dict[str, dict[str, str]]]] = {}  # ... -> form -> entity type -> name
    grouped: dict[tuple[str, str], dict[str, tuple[BenchRecord, ...]]] = {}
    fresh_of: dict[tuple[str, str], dict[str, tuple[bool, ...]]] = {}  # (split, kind) -> qid -> renamed, per entity
    for split_name in SPLITS:
        for kind in kinds:
            groups = _group(split.kept[split_name], kind, names)
            if saved_queries and split_name != "train":
                groups = pin_query_ids(groups, saved_queries)
            grouped[(split_name, kind)] = groups
            texts[(split_name, kind)] = {}
            typed[(split_name, kind)] = {}
            fresh_of[(split_name, kind)] = {}
            for qid, records in groups.items():
                forms, renamed, values = _texts(qid, records, kind, names, seed)
                texts[(split_name, kind)][qid] = forms
                typed[(split_name, kind)][qid] = values
                fresh_of[(split_name, kind)][qid] = renamed
    train_texts = {normalised(t) for kind in kinds for forms in texts[("train", kind)].values() for t in forms.values()}
    dropped: Counter[str] = Counter()
    for split_name in SPLITS[1:]:
        for kind in kinds:
            for qid, forms in list(texts[(split_name, kind)].items()):
                if any(normalised(t) in train_texts for t in forms.values()):
                    del texts[(split_name, kind)][qid]
                    del grouped[(split_name, kind)][qid]
                    dropped[f"{kind}:{split_name}"] += 1
    fallbacks: Counter[str] = Counter()  # counted over the queries kept (not those dropped above)
    entities: Counter[str] = Counter()  # "<split>:renamed" / "<split>:total": query entities the reworded form renamed
    out = {}
    for (split_name, kind), groups in grouped.items():
        renamed = fresh_of[(split_name, kind)]
        fallbacks[f"{kind}:{split_name}"] += sum(not all(renamed[qid]) for qid in groups)
        entities[f"{split_name}:renamed"] += sum(sum(renamed[qid]) for qid in groups)
        entities[f"{split_name}:total"] += sum(len(renamed[qid]) for qid in groups)
        answer_key = AnswerKey(
            answers={qid: frozenset(c for r in rs for _, c in r.answers) for qid, rs in groups.items()},
            query_concepts={qid: frozenset(r.anchor[1] for r in rs) for qid, rs in groups.items()},
            doc_concepts=concepts,
        )
        qrels = {qid: {r.pmid: 1 for r in rs} for qid, rs in groups.items()}
        for form in FORM_NAMES:
            queries = {qid: texts[(split_name, kind)][qid][form] for qid in groups}
            values = {qid: typed[(split_name, kind)][qid][form] for qid in groups}
            out[(split_name, kind, form)] = QuerySet(split_name, kind, form, queries, qrels, answer_key, groups,
                                                     frozenset(q for q in groups if all(renamed[q])), values)
    kept = {k: v for k, v in sorted(fallbacks.items()) if v}
    return out, dict(sorted(dropped.items())), kept, {split: {"renamed": entities[f"{split}:renamed"],
                                                              "total": entities[f"{split}:total"]} for split in SPLITS}


def _group(records: Sequence[BenchRecord], kind: str, names: Names) -> dict[str, tuple[BenchRecord, ...]]:
    """Records of ``kind`` grouped by the canonical names of their query entities; query ids sorted."""
    groups: dict[tuple, list[BenchRecord]] = defaultdict(list)
    for record in records:
        if record.kind == kind:
            groups[tuple((t, names.canonical(t, c).casefold()) for t, c in record.entities)].append(record)
    out = {}
    for members in groups.values():
        ids = [min(c for r in members for t2, c in r.entities if t2 == t) for t, _ in members[0].entities]
        qid = f"{kind}:" + "|".join(f"{t}:{c}" for (t, _), c in zip(members[0].entities, ids, strict=True))
        out[qid] = tuple(members)
    return dict(sorted(out.items()))


def _texts(
    qid: str, records: Sequence[BenchRecord], kind: str, names: Names, seed: int
) -> tuple[dict[str, str], tuple[bool, ...], dict[str, dict[str, str]]]:
    """The query's text in each form, per query entity whether its reworded name differs from the evidence's, and
    the names themselves per form (entity type → name: what a curator types in each slot)."""
    relation = kind_of(kind)
    pmids = sorted({r.pmid for r in records})
    verbatim, canonical, reworded = {}, {}, {}
    renamed: list[bool] = []
    for position, entity_type in enumerate(relation.query_types):
        ids = Counter(r.entities[position][1] for r in records)
        concept = most_frequent(ids)  # the id most records use
        mentions: Counter[str] = Counter()
        for record in records:
            mentions.update(names.mentions_in(record.pmid, entity_type, record.entities[position][1]))
        verbatim[entity_type] = most_frequent(mentions) if mentions else names.canonical(entity_type, concept)
        canonical[entity_type] = names.canonical(entity_type, concept)
        reworded[entity_type], fresh = names.reworded(entity_type, concept, pmids, f"{seed}|{qid}|{entity_type}")
        renamed.append(fresh)
    return ({"verbatim": relation.render(verbatim), "canonical": relation.render(canonical),
             "reworded": relation.render(reworded)}, tuple(renamed),
            {"verbatim": verbatim, "canonical": canonical, "reworded": reworded})
