"""The screening benchmark's topics and the clean store they are screened in.

Topics come from the relations of the annotated corpora, one per entity, split by entity into dev and test
(``bench/splits/screening_topics.json``, made on the first run and kept):

- **BC5CDR**: a chemical or a disease with a chemical-induced-disease (CID) relation in >= 5 abstracts and
  mentioned in >= 15; relevant: the abstracts with such a relation of it (gain 2);
- **BioRED**: an entity of any kind with a relation of any kind in >= 5 abstracts; relevant: those abstracts, gain 2
  when the relation is novel there, 1 when it is background (BioRED's novelty flag; the graded case).

The store is every corpus here (BioRED, BC5CDR, HoC and the four NCBI entity corpora) ingested as plain text: the
concept index is what the dictionaries and notation rules find (:func:`bench._concepts.build_over`), and the
lexicon takes gold names only from annotated documents that are relevant to no topic. Gold is the answer key only.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.learning.benchmark.corpus import concept_parts, load_corpus
from curation.records import Document

SPLIT_FILE = Path(__file__).resolve().parent / "splits" / "screening_topics.json"
MIN_RELEVANT = 5
MIN_MENTIONED = 15
NER_CORPORA = "ner_corpora"
# A topic's entity type → (its query slot, the answer slot whose kind the evidence counts).
SLOTS = {"Disease": ("Disease", "Chemical"), "Chemical": ("Chemical", "Disease"),
         "ChemicalEntity": ("Chemical", "Disease"), "DiseaseOrPhenotypicFeature": ("Disease", "Chemical"),
         "GeneOrGeneProduct": ("Gene", "Disease"), "SequenceVariant": ("Variant", "Chemical")}


@dataclass(frozen=True)
class Topic:
    """One screening topic.

    Attributes:
        topic_id: ``<corpus>:<concept id>``.
        corpus: "bc5cdr" or "biored".
        slot: the query slot (Disease, Chemical, Gene, Variant).
        answer: the slot the curator fills (the evidence features count its kind).
        name: the name typed as the query (the entity's most frequent written form in the corpus).
        relevant: pmid → gain (2 complete, 1 partial).
        split: "dev" or "test".
    """

    topic_id: str
    corpus: str
    slot: str
    answer: str
    name: str
    relevant: Mapping[str, int]
    split: str


def corpus_of(document: Document) -> str:
    source = document.relations[0].source if document.relations else (
        document.mentions[0].source if document.mentions else "")
    return "bc5cdr" if source.startswith("CDR") else "biored" if source in ("Train", "Dev", "Test") else ""


def load_store_documents(data_dir: Path) -> tuple[list[Document], list[Document], dict[str, str]]:
    """(every distinct document as plain text, the annotated documents, pmid → corpus name)."""
    corpus, annotated = load_corpus(data_dir)
    home: dict[str, str] = {}
    for document in annotated:
        home.setdefault(document.pmid, corpus_of(document) or "other")
    for document in corpus:
        home.setdefault(document.pmid, "hoc")
    seen = {d.pmid for d in corpus}
    for path in sorted((data_dir / NER_CORPORA).glob("*/*.PubTator")):
        for document in read_pubtator(path, Problems(path, lenient=True)):
            annotated.append(document)
            if document.pmid not in seen:
                seen.add(document.pmid)
                corpus.append(document)
                home[document.pmid] = path.parent.name
    plain = [replace(d, mentions=(), relations=()) for d in corpus]
    return plain, annotated, home


def _split(topic_id: str) -> str:
    return "dev" if int(hashlib.sha256(f"screening:{topic_id}".encode()).hexdigest(), 16) % 2 == 0 else "test"


def _typed_name(forms: Counter) -> str:
    """The name a curator would type: the most frequent written form that is not an abbreviation."""
    spelled = [f for f, _ in forms.most_common() if len(f) >= 4 and not f.isupper()]
    return spelled[0] if spelled else forms.most_common(1)[0][0]


def find_topics(annotated: Sequence[Document], split_file: Path = SPLIT_FILE) -> list[Topic]:
    """Every topic of the corpora (see the module docstring), with its saved split."""
    names: dict[str, Counter] = defaultdict(Counter)
    types: dict[str, Counter] = defaultdict(Counter)
    mentioned: dict[tuple[str, str], set[str]] = defaultdict(set)
    relevant: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for document in annotated:
        corpus = corpus_of(document)
        for m in document.mentions:
            for concept in concept_parts(m.concept_id, m.type):
                names[concept][m.text] += 1
                types[concept][m.type] += 1
                mentioned[(corpus, concept)].add(document.pmid)
        for r in document.relations:
            if corpus == "bc5cdr" and r.type != "CID":
                continue
            gain = 1 if corpus == "biored" and r.novelty.casefold().startswith("no") else 2
            for concept in (r.concept1, r.concept2):
                per = relevant[(corpus, concept)]
                per[document.pmid] = max(per.get(document.pmid, 0), gain)
    saved = json.loads(split_file.read_text()) if split_file.exists() else {}
    topics = []
    for (corpus, concept), per in sorted(relevant.items()):
        if not corpus or len(per) < MIN_RELEVANT or (corpus == "bc5cdr" and
                                                     len(mentioned[(corpus, concept)]) < MIN_MENTIONED):
            continue
        kind = types[concept].most_common(1)[0][0] if types[concept] else ""
        if kind not in SLOTS:
            continue
        topic_id = f"{corpus}:{concept}"
        slot, answer = SLOTS[kind]
        name = _typed_name(names[concept])
        topics.append(Topic(topic_id, corpus, slot, answer, name, dict(per), saved.get(topic_id) or _split(topic_id)))
    if not split_file.exists():
        split_file.parent.mkdir(parents=True, exist_ok=True)
        split_file.write_text(json.dumps({t.topic_id: t.split for t in topics}, indent=1, sort_keys=True) + "\n")
    return topics


def relation_pairs(annotated: Sequence[Document], topics: Sequence[Topic], corpus: Sequence[Document],
                   annotations: Mapping[str, Sequence]) -> tuple[dict[str, list], dict[str, object]]:
    """(pmid → its co-mentioned pairs scored by a relation scorer, what the scorer learned from).

    The scorer (:mod:`curation.relations`, the product's) learns from the gold relations of annotated documents
    that are relevant to no topic (BC5CDR: chemical-induced disease pairs only, as the product trains it), so no
    topic's answer is in its training; it then scores the pairs of what the annotator found in every document.
    """
    from curation.relations.pairs import candidate_pairs
    from curation.relations.stored_pairs import annotated_pairs
    from curation.relations.training import train_scorer
    from curation.relations.training_data import TrainingSet

    held = {p for t in topics for p in t.relevant}
    chemical_disease = frozenset({frozenset(("Chemical", "Disease"))})
    pairs, documents = [], {}
    for document in annotated:
        corpus_name = corpus_of(document)
        if not document.relations or document.pmid in held or document.pmid in documents or not corpus_name:
            continue
        documents[document.pmid] = document
        pairs += candidate_pairs(document, types=chemical_disease if corpus_name == "bc5cdr" else None)
    scorer = train_scorer(TrainingSet(pairs, documents, frozenset(held), 0, {}))
    scored = {d.pmid: annotated_pairs(d, annotations.get(d.pmid, ()), scorer) for d in corpus}
    return scored, {"documents": len(documents), "pairs": len(pairs), "related": sum(p.label for p in pairs)}
