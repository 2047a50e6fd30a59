"""Suggestions for the missing slot: candidate concepts aggregated over ranked documents.

The input is, for each document of a served ranking and each candidate concept of the missing slot's kind that
it mentions, the probability that the document relates the candidate to each query slot (the stored relation
scores; 1.0 for a plain co-mention when no scorer was active). :func:`aggregate` turns that into one ranked list:

* a document's probability for a candidate combines its per-slot probabilities (``combine``): ``min`` asks the
  document to relate the candidate to every query slot (Gene + Variant → a treatment related to both), ``max``
  to any, ``mean`` in between; a slot the document does not mention counts 0; with ``sentence`` only a pair
  one sentence holds counts (a candidate is a concept a sentence relates to a query entity);
* a candidate's score sums, over documents, that probability weighted by the document's rank (``weight``:
  ``flat`` 1, ``log`` 1/log2(rank + 1), ``reciprocal`` 1/rank) — or, with ``rule="noisy_or"``,
  1 − Π(1 − w·p), or with ``rule="max"`` the best single document.

The product's rule, chosen on dev by bench/suggest.py (see docs/BENCHMARKS.md), is :data:`RULE`,
:data:`NARY_COMBINE` and :data:`SENTENCE`. :func:`gather_evidence` reads the stored pairs a ranking's documents
hold for each slot, and :func:`merge_names` makes one candidate of one substance linked in two vocabularies or
written two ways. A document *supports* a
candidate when its probability reaches ``threshold`` (the scorer's decision threshold); the supporting
documents, best first, are what a curator reads.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import duckdb

from curation.entities.lexicon import Lexicon, is_placeholder_id
from curation.entities.postings import PostingsSource, slot_postings
from curation.entities.query import QueryConcept
from curation.store.relations import list_relation_pairs

#: how a candidate's per-document probabilities become its score (chosen on dev by bench/suggest.py): the
#: documents' noisy-or, every served rank weighing alike
RULE = {"rule": "noisy_or", "weight": "flat"}
#: how one document's probabilities for two or more typed slots combine (chosen on dev, and by the flagship
#: cases: "mean" and "min" lost vemurafenib for BRAF + V600E, whose sentence names "BRAF(V600E)" with the gene
#: unrecognised, and every HER2 amplification drug, the amplification being no recognised variant): the best slot
NARY_COMBINE = "max"
#: whether only a pair one sentence holds supports a candidate: no (chosen on dev by bench/suggest.py: a
#: document-level pair the scorer trusts counts too; the best rule with sentences only scored 0.356 MAP, without 0.364)
SENTENCE = False
COMBINES = ("min", "mean", "max")
RULES = ("sum", "noisy_or", "max")
WEIGHTS = ("flat", "log", "reciprocal")


@dataclass(frozen=True)
class PairEvidence:
    """What one document says about one candidate and one query slot.

    Attributes:
        pmid, rank: the document and its rank in the served order (1 = first).
        slot: the query slot.
        candidate: the candidate concept id; ``name``: how to show it.
        probability: that the document relates the candidate to the slot's concept.
        evidence: (start, end) of the sentence relating them, in ``Document.text``.
        same_sentence: whether one sentence mentions both.
    """

    pmid: str
    rank: int
    slot: str
    candidate: str
    name: str
    probability: float
    evidence: tuple[int, int] = (0, 0)
    same_sentence: bool = False


@dataclass(frozen=True)
class Support:
    """One document's support for a candidate: its combined probability and its best evidence sentence."""

    pmid: str
    rank: int
    probability: float
    evidence: tuple[int, int]
    same_sentence: bool


@dataclass(frozen=True)
class Candidate:
    """A candidate answer over the documents: its score and every document that mentions it with a query slot,
    best first; ``supporting``: how many reach the threshold."""

    concept_id: str
    name: str
    score: float
    documents: tuple[Support, ...]
    supporting: int


def rank_weight(rank: int, weight: str) -> float:
    if weight == "flat":
        return 1.0
    if weight == "log":
        return 1.0 / math.log2(rank + 1)
    if weight == "reciprocal":
        return 1.0 / rank
    raise ValueError(f"weight must be one of {WEIGHTS}, not {weight!r}")


def aggregate(evidence: Iterable[PairEvidence], slots: Iterable[str], combine: str = "max", rule: str = "sum",
              weight: str = "log", threshold: float = 0.5, sentence: bool = False) -> list[Candidate]:
    """Candidates ranked by score (ties: more supporting documents, then name); see the module docstring.

    Args:
        evidence: per (document, candidate, slot), the relation probability; several rows of one
            (document, candidate, slot) keep the highest.
        slots: the query slots that were typed (a slot without evidence in a document counts 0 there).
        sentence: a pair no single sentence holds counts 0 (the candidate stays, unsupported).
    """
    if combine not in COMBINES:
        raise ValueError(f"combine must be one of {COMBINES}, not {combine!r}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, not {rule!r}")
    slots = tuple(dict.fromkeys(slots))
    best: dict[tuple[str, str], dict[str, PairEvidence]] = defaultdict(dict)
    names: dict[str, str] = {}
    for e in evidence:
        if sentence and not e.same_sentence:
            e = PairEvidence(e.pmid, e.rank, e.slot, e.candidate, e.name, 0.0, e.evidence, False)
        per_slot = best[(e.candidate, e.pmid)]
        if e.slot not in per_slot or e.probability > per_slot[e.slot].probability:
            per_slot[e.slot] = e
        names.setdefault(e.candidate, e.name)
    documents: dict[str, list[Support]] = defaultdict(list)
    for (candidate, pmid), per_slot in best.items():
        values = [per_slot[s].probability if s in per_slot else 0.0 for s in slots] or [0.0]
        if combine == "min":
            p = min(values)
        elif combine == "max":
            p = max(values)
        else:
            p = sum(values) / len(values)
        top = max(per_slot.values(), key=lambda e: (e.probability, e.same_sentence))
        documents[candidate].append(Support(pmid, top.rank, p, top.evidence, top.same_sentence))
    out = []
    for candidate, supports in documents.items():
        weighted = [rank_weight(s.rank, weight) * s.probability for s in supports]
        if rule == "sum":
            score = sum(weighted)
        elif rule == "max":
            score = max(weighted)
        else:
            score = 1.0 - math.prod(1.0 - min(1.0, w) for w in weighted)
        ordered = tuple(sorted(supports, key=lambda s: (-s.probability, s.rank)))
        out.append(Candidate(candidate, names[candidate], round(score, 6), ordered,
                             sum(1 for s in supports if s.probability >= threshold)))
    out.sort(key=lambda c: (-c.score, -c.supporting, c.name.casefold(), c.concept_id))
    return out


def slot_concept_ids(source: PostingsSource, concept: QueryConcept) -> dict[str, set[str]]:
    """PMID → the concept ids of the stored mentions that are this slot's concept (what the concept search
    found it as: a linked concept's ids, a variant's notations, an unlinked name's exact mentions), and of the
    mentions written as the curator typed it or as its canonical name: an abbreviation the annotator tied to its
    long form ("HER2" → "human epidermal growth factor receptor 2") carries the long form's id, not the concept's.
    (Every alias of the concept was tried on dev and lost MAP: aliases also name other concepts.)"""
    out: dict[str, set[str]] = defaultdict(set)
    rows = slot_postings(concept, source)
    if concept.linked and concept.kind != "variant":
        rows = [*rows, *source.postings(concept.kind, (), tuple({concept.typed, concept.canonical} - {""}))]
    for row in rows:
        for cid in re.split(r"[,;]", row.concept_id or ""):
            if not is_placeholder_id(cid):
                out[row.pmid].add(cid.strip())
    return out


def evidence_from_pairs(rows: Iterable, ranks: Mapping[str, int], slot: str, per_doc: Mapping[str, set[str]],
                        kind: str, answer_kind: str) -> list[PairEvidence]:
    """The evidence one slot gets from stored pairs (rows with the fields of ``curation.store.relations.PairRow``):
    each pair of a ranked document joining one of the slot's concepts there to a concept of ``answer_kind`` (either side
    first; an unscored pair, a co-mention, counts 1.0)."""
    out = []
    for row in rows:
        if row.pmid not in ranks:
            continue
        mine = per_doc.get(row.pmid, set())
        sides = []
        if row.kind_a == kind and row.concept_a in mine and row.kind_b == answer_kind:
            sides.append((row.concept_b, row.name_b))
        if row.kind_b == kind and row.concept_b in mine and row.kind_a == answer_kind:
            sides.append((row.concept_a, row.name_a))
        for candidate, name in sides:
            if candidate in mine:
                continue
            p = 1.0 if row.score is None else float(row.score)
            out.append(PairEvidence(row.pmid, ranks[row.pmid], slot, candidate, name, p,
                                    (row.evidence_start, row.evidence_end), bool(row.same_sentence)))
    return out


def gather_evidence(con: duckdb.DuckDBPyConnection, ranks: Mapping[str, int], slots: Mapping[str, dict[str, set[str]]],
                    slot_kinds: Mapping[str, str], answer_kind: str) -> list[PairEvidence]:
    """Every stored pair of the ranked documents joining a slot's concepts to a concept of ``answer_kind``."""
    out = []
    pmids = list(ranks)
    for slot, per_doc in slots.items():
        ids = sorted({c for pmid in pmids for c in per_doc.get(pmid, ())})
        if ids:
            rows = list_relation_pairs(con, pmids, slot_kinds[slot], ids, answer_kind)
            out += evidence_from_pairs(rows, ranks, slot, per_doc, slot_kinds[slot], answer_kind)
    return out


#: salt and ester words a drug's name carries in one vocabulary and not in another ("Erlotinib Hydrochloride")
_SALTS = re.compile(r"\b(?:di)?(?:hydrochloride|mesylate|tosylate|sodium|potassium|sulfate|maleate|citrate|tartrate|"
                    r"phosphate|besylate|malate|fumarate|succinate|hydrobromide|calcium)\b")


def name_key(name: str) -> str:
    """One key for the spellings of one substance: case, punctuation, a salt word, a plural "s", "-ic acid" as
    "-ate" ("Glutamic Acid", "Glutamates" and "glutamate" are one key)."""
    key = _SALTS.sub(" ", name.casefold())
    key = re.sub(r"ic acids?\b", "ate", key)
    key = re.sub(r"[^0-9a-z]+", "", key)
    if len(key) > 4 and key.endswith("s") and not key.endswith("ss"):
        key = key[:-1]
    return key or name.casefold()


def merge_names(evidence: Sequence[PairEvidence], lexicon: Lexicon, kind: str
                ) -> tuple[list[PairEvidence], dict[str, tuple[str, ...]]]:
    """The evidence with each candidate keyed by its display name (casefolded), so that one substance linked to
    two vocabularies (a MeSH id from a corpus, a DrugBank id from the dictionary) or written two ways (a salt,
    a plural, an acid and its anion: :func:`name_key`) is one suggestion; and concept id → its key.

    Each concept id gets exactly one name: the lexicon's canonical name, else the name most of its pairs give
    (ties: the first alphabetically). Concept ids whose names share a :func:`name_key` are one candidate, shown
    by the name of the id with the most pairs.
    """
    written: dict[str, Counter[str]] = defaultdict(Counter)
    for e in evidence:
        written[e.candidate][e.name] += 1
    names = {cid: lexicon.canonical(kind, cid) or min(counts, key=lambda n: (-counts[n], n.casefold(), n))
             for cid, counts in written.items()}
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for cid, counts in written.items():  # every id joined to the keys of its names
        for n in {names[cid], *counts}:
            parent[find("id:" + cid)] = find("key:" + name_key(n))
    groups: dict[str, list[str]] = defaultdict(list)
    for cid in written:
        groups[find("id:" + cid)].append(cid)
    merged: dict[str, tuple[str, ...]] = {}
    shown: dict[str, str] = {}
    for ids in groups.values():
        first = min(ids, key=lambda c: (-sum(written[c].values()), names[c].casefold(), c))
        for cid in ids:
            merged[cid] = (names[first].casefold(),)
            shown[cid] = names[first]
    out = [PairEvidence(e.pmid, e.rank, e.slot, merged[e.candidate][0], shown[e.candidate], e.probability,
                        e.evidence, e.same_sentence) for e in evidence]
    return out, merged
