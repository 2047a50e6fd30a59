"""Training data for the relation scorer: the corpora's labelled pairs and the curators' decisions.

* :func:`corpus_training_set`: BioRED Train (every relation type) and BC5CDR Train (chemical-induced disease), every
  Dev and Test PMID of both corpora held out (the BC5CDR training file holds its Dev documents, and BioRED Train
  holds BC5CDR Dev/Test abstracts); a curator's own data folder may hold only some of these files: a missing Dev
  or Test file has nothing to hold out, a missing Train file is not trained on (:attr:`TrainingSet.missing`);
* :func:`decision_training_pairs`: curators' decisions as labelled pairs (an accepted abstract with its answer →
  related; a rejected one → every answer-kind concept it mentions unrelated to the query's), one deciding decision
  per item by the rule every learner uses (:func:`curation.resolution.resolve_decisions`: superseded and withdrawn
  ones dropped, an adjudication wins, a disagreement nobody adjudicated left out);
  :func:`decision_examples` reads them, with their documents and stored mentions, from the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from curation.entities.lexicon import Lexicon
from curation.records import Document, Mention
from curation.relations.pairs import Pair, RelationError, concept_ids, group_by_concept, training_pairs
from curation.resolution import ConflictRule, resolve_decisions
from curation.schemas import RelationSchema
from curation.store.annotations import list_annotations
from curation.store.corpus import get_documents
from curation.store.decisions import list_decisions

#: (corpus, Train file, Dev file, Test file, the type pairs its relations cover (its PubTator type names):
#: None = every pair)
CORPORA = (
    ("biored", "biored/Train.PubTator", "biored/Dev.PubTator", "biored/Test.PubTator", None),
    ("bc5cdr", "bc5cdr/CDR_TrainingSet.PubTator.txt", "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
     "bc5cdr/CDR_TestSet.PubTator.txt", frozenset({frozenset(("Chemical", "Disease"))})),
)


@dataclass(frozen=True)
class TrainingSet:
    """The labelled pairs a scorer is trained on, their documents, and what was held out."""

    pairs: list[Pair]
    documents: dict[str, Document]
    held_out: frozenset[str]
    train_pmids_held_out: int  # Train documents dropped because another corpus holds them as Dev or Test
    per_corpus: dict[str, int]  # corpus → documents used (a corpus without its Train file is absent)
    held_out_from: dict[str, int] = field(default_factory=dict)  # Dev / Test file (as in CORPORA) → its PMIDs
    missing: tuple[str, ...] = ()  # CORPORA files not in the data folder

    def held_out_note(self) -> str:
        """What was held out of training and what could not be, for a person."""
        files = ", ".join(f"{name} {count:,}" for name, count in self.held_out_from.items())
        note = f"held out {len(self.held_out):,} Dev/Test PMIDs ({files})" if files else "held out nothing"
        trains = {train for _, train, *_ in CORPORA}
        if absent := [name for name in self.missing if name not in trains]:
            note += f"; nothing held out from {', '.join(absent)} (not in the data folder)"
        if absent := [name for name in self.missing if name in trains]:
            note += f"; not trained on {', '.join(absent)} (not in the data folder)"
        return note


def split_pmids(path: Path) -> set[str]:
    """The PMIDs of a PubTator file, from its title lines only (a Test split's text is never parsed)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return {line.split("|", 1)[0] for line in handle if "|t|" in line[:20]}
    except OSError as exc:
        raise RelationError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def corpus_training_set(data_dir: Path) -> TrainingSet:
    """Labelled pairs of BioRED Train (every relation type) and BC5CDR Train (chemical-induced disease only),
    with every Dev and Test PMID of both corpora held out (the BC5CDR training file holds its Dev documents,
    and BioRED Train holds BC5CDR Dev/Test documents); a document in both Trains is used once.

    Only the files the data folder holds are read: a Dev or Test file it lacks has no PMID to hold out, a Train
    file it lacks is not trained on; :meth:`TrainingSet.held_out_note` says which.

    Raises:
        RelationError: neither Train file is in the data folder, or a file is unreadable (named).
    """
    from curation.ingest.problems import Problems
    from curation.ingest.pubtator import read_pubtator

    data_dir = Path(data_dir)
    missing = tuple(name for _, *files, _ in CORPORA for name in files if not (data_dir / name).is_file())
    if all(train in missing for _, train, *_ in CORPORA):
        raise RelationError(f"{data_dir}: none of {', '.join(train for _, train, *_ in CORPORA)}; the relation "
                            "scorer trains on BioRED or BC5CDR Train (point CURATION_DATA_DIR at a folder that holds "
                            "one)")
    held_out_from = {name: split_pmids(data_dir / name) for _, _, dev, test, _ in CORPORA for name in (dev, test)
                     if name not in missing}
    held_out: set[str] = set().union(*held_out_from.values())
    pairs: list[Pair] = []
    documents: dict[str, Document] = {}
    dropped: set[str] = set()
    per_corpus = {}
    for corpus, train, _, _, types in CORPORA:
        if train in missing:
            continue
        path = data_dir / train
        docs = []
        for d in read_pubtator(path, Problems(path, lenient=True)):
            if d.pmid in held_out:
                dropped.add(d.pmid)
            elif d.pmid not in documents and d.pmid not in {x.pmid for x in docs}:
                docs.append(d)
        got, used = training_pairs(docs, held_out, types=set(types) if types else None)
        pairs += got
        documents.update({d.pmid: d for d in used})
        per_corpus[corpus] = len(used)
    return TrainingSet(pairs, documents, frozenset(held_out), len(dropped), per_corpus,
                       {name: len(pmids) for name, pmids in held_out_from.items()}, missing)


def decision_pairs(decisions: Iterable[tuple[str, Sequence[str], str, int]], documents: Mapping[str, Document],
                   mentions: Mapping[str, Sequence[Mention]], answer_kind: str,
                   held_out: Iterable[str] = ()) -> tuple[list[Pair], dict[str, Document]]:
    """Curators' decisions as labelled pairs.

    Args:
        decisions: (pmid, query concept ids, answer concept id or "", label) per decision: an accepted decision
            with its answer linked gives label 1 for (each query concept, answer); a rejection gives label 0 for
            each query concept with every concept of ``answer_kind`` the document mentions (answer "").
        documents, mentions: the documents and their stored mentions (kinds as the store writes them).
        held_out: PMIDs never trained on (Dev/Test documents of the benchmark); their decisions are skipped.

    A pair whose concepts the document does not both mention is skipped (the scorer has no features for it).
    """
    held = set(held_out)
    out: list[Pair] = []
    used: dict[str, Document] = {}
    for pmid, query, answer, label in decisions:
        if pmid in held or pmid not in documents:
            continue
        doc_mentions = [m for m in mentions.get(pmid, ()) if concept_ids(m)]
        grouped = group_by_concept(doc_mentions)
        kinds = {c: ms[0].type for c, ms in grouped.items()}
        answers = [answer] if answer else [c for c, k in kinds.items() if k == answer_kind]
        found = [tuple(sorted((q, a))) for q in query for a in answers if q != a and q in kinds and a in kinds]
        out += [Pair(pmid, x, kinds[x], y, kinds[y], int(label)) for x, y in dict.fromkeys(found)]
        if found:
            d = documents[pmid]
            used[pmid] = Document(d.pmid, d.title, d.abstract, mentions=tuple(doc_mentions))
    return out, used


def _slot_concepts(lexicon, kind: str, value: str, mentions: Sequence[Mention]) -> list[str]:
    """The concept ids of a document's mentions that a typed value names (by the dictionaries, the mention's own
    text, or, for a variant, its notation)."""
    from curation.entities.variants import variant_keys

    value = " ".join(value.split())
    if not value:
        return []
    known = {c for _, c in lexicon.lookup(value, kind)}
    keys = set(variant_keys(value)) if kind == "variant" else set()
    out = []
    for m in mentions:
        if m.type != kind:
            continue
        ids = concept_ids(m)
        if known & set(ids) or m.text.casefold() == value.casefold() or (keys and keys & set(variant_keys(m.text))):
            out += ids
    return list(dict.fromkeys(out))


def decision_training_pairs(decisions: Iterable, schemas: Mapping, documents: Mapping[str, Document],
                            mentions: Mapping[str, Sequence[Mention]], lexicon, held_out: Iterable[str] = (),
                            conflicts: ConflictRule = ConflictRule.EXCLUDE) -> tuple[list[Pair], dict[str, Document]]:
    """Curators' decisions (``curation.records.Decision``) as labelled pairs (:func:`decision_pairs`), one per item
    that :func:`curation.resolution.resolve_decisions` keeps under ``conflicts`` (as for the encoder and the
    ranker): an accepted decision with an answer the document mentions → a positive for (query concepts, answer);
    a rejection → negatives for the answer-kind concepts it mentions with the query's. ``schemas``: name →
    RelationSchema (decisions of other schemas are skipped)."""
    from curation.grades import RELEVANT_GRADES, Grade

    pairs: list[Pair] = []
    used: dict[str, Document] = {}
    chosen, _ = resolve_decisions((d for d in decisions if d.schema in schemas), conflicts)
    for d in chosen:
        schema = schemas[d.schema]
        found = list(mentions.get(d.pmid, ()))
        query = [c for slot, value in d.query_entities if slot in schema.query_types
                 for c in _slot_concepts(lexicon, schema.kind(slot), value, found)]
        kind = schema.kind(schema.answer)
        if d.grade in RELEVANT_GRADES and d.answer.strip():
            rows = [(d.pmid, query, a, 1) for a in _slot_concepts(lexicon, kind, d.answer, found)[:1]]
        elif d.grade == Grade.NOT_RELEVANT:
            rows = [(d.pmid, query, "", 0)]
        else:
            continue
        got, docs = decision_pairs(rows, documents, mentions, kind, held_out)
        pairs += got
        used.update(docs)
    return pairs, used


def decision_examples(con: duckdb.DuckDBPyConnection, schemas: Mapping[str, RelationSchema], lexicon: Lexicon,
                      held_out: Sequence[str] = ()) -> tuple[list[Pair], dict[str, Document]]:
    """The store's curator decisions as labelled pairs (:func:`decision_training_pairs`: one deciding decision per
    item)."""
    decisions = [d for d in list_decisions(con) if d.schema in schemas]
    if not decisions:
        return [], {}
    documents, mentions = decided_documents(con, decisions)
    return decision_training_pairs(decisions, schemas, documents, mentions, lexicon, held_out)


def decided_documents(con: duckdb.DuckDBPyConnection, decisions: Sequence
                      ) -> tuple[dict[str, Document], dict[str, list[Mention]]]:
    """The decided documents and their stored mentions (what decisions become training pairs from)."""
    pmids = list(dict.fromkeys(d.pmid for d in decisions))
    documents = {d.pmid: d for d in get_documents(con, pmids)}
    mentions = {pmid: [Mention(r.pmid, r.start, r.end, r.text, r.entity_type, r.concept_id, r.source)
                       for r in rows] for pmid, rows in list_annotations(con, pmids).items()}
    return documents, mentions
