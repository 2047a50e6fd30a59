"""The stable gene split: each gene's part (train, dev or test) is a function of the gene alone.

A gene's part comes from a hash of the split's seed and the gene's normalised key, mapped to [0, 1) and
compared with the fractions. Adding records, or genes, to a KB never moves a gene that was already
there, so a dev or test gene stays held out for the life of the KB (a shuffled list would re-draw every
gene when one gene is added). The same key decides where a curator's decision on that gene belongs
(:mod:`curation.learning.holdout`).

:func:`kb_split` splits a KB's records that way and makes the dev and test queries (:class:`EvalSet`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from curation.entities.concepts import ConceptIndex
from curation.entities.matching import Matcher
from curation.learning.evaluation import MatcherAnswerKey
from curation.learning.sampling import entity_key
from curation.records import Document, KBRecord
from curation.schemas import RelationSchema

Part = Literal["train", "dev", "test"]
FRACTIONS = (0.8, 0.1, 0.1)


def gene_key(schema: RelationSchema, value: str) -> str:
    """The normalised key of a query gene / protein value (as KB matching compares them)."""
    gene_type = schema.query_types[0]
    return entity_key(schema.kind(gene_type), value)


def unit_hash(key: str, seed: int, salt: str = "split") -> float:
    """A stable number in [0, 1) for ``key`` (the same on every machine and Python run; no ``hash()``)."""
    digest = hashlib.sha256(f"{salt}\x00{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def gene_part(key: str, seed: int = 13, fractions: tuple[float, float, float] = FRACTIONS) -> Part:
    """The part of the gene with normalised ``key``: train below ``fractions[0]``, then dev, then test."""
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-6:
        raise ValueError(f"split fractions must be non-negative and sum to 1, got {fractions}")
    u = unit_hash(key, seed)
    if u < fractions[0]:
        return "train"
    return "dev" if u < fractions[0] + fractions[1] else "test"


@dataclass(frozen=True)
class EvalSet:
    """Queries with relevance judgements and an EntityRecall key."""

    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]
    answer_key: object | None = None
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # qid -> query slot -> typed name


@dataclass(frozen=True)
class KBSplit:
    """A KB's records split by gene: the train records, the dev and test queries, and genes per part."""

    train: tuple[KBRecord, ...]
    dev: EvalSet
    test: EvalSet
    genes: dict[str, int] = field(default_factory=dict)


def kb_split(
    schema: RelationSchema,
    records: Sequence[KBRecord],
    documents: Mapping[str, Document],
    matcher: Matcher | ConceptIndex,
    seed: int = 13, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
) -> KBSplit:
    """Split a KB's records by their first query entity (gene / protein), and build dev and test sets.

    No gene is in two splits, and a gene's split is a function of the gene alone
    (:func:`curation.learning.splits.gene_part`): records added later never move a gene. A query
    groups the records sharing its query entities; its relevant documents are their PMIDs;
    EntityRecall judges answers with the matcher.
    """
    usable = [r for r in records if r.schema == schema.name and r.pmid in documents and r.get(schema.answer)]
    gene_type = schema.query_types[0]
    part = {g: gene_part(g, seed, fractions) for g in {gene_key(schema, r.get(gene_type)) for r in usable}}
    by_split: dict[str, list[KBRecord]] = {"train": [], "dev": [], "test": []}
    for r in usable:
        by_split[part[gene_key(schema, r.get(gene_type))]].append(r)

    def matched(value: str, kind: str, pmid: str) -> bool:
        return pmid in documents and matcher.matched(value, kind, documents[pmid])

    def eval_set(rows: list[KBRecord]) -> EvalSet:
        queries, qrels, answers, query_entities, values = {}, {}, {}, {}, {}
        for r in rows:
            text = schema.render_query({t: r.get(t) for t in schema.query_types})
            qid = text
            queries[qid] = text
            qrels.setdefault(qid, {})[r.pmid] = 1
            answers.setdefault(qid, set()).add((r.get(schema.answer), schema.kind(schema.answer)))
            query_entities[qid] = {(r.get(gene_type), schema.kind(gene_type))}
            values[qid] = {t: r.get(t) for t in schema.query_types if r.get(t)}
        return EvalSet(queries, qrels, MatcherAnswerKey(answers, query_entities, matched), values)

    counts = {s: len({gene_key(schema, r.get(gene_type)) for r in rows}) for s, rows in by_split.items()}
    return KBSplit(tuple(by_split["train"]), eval_set(by_split["dev"]), eval_set(by_split["test"]), counts)
