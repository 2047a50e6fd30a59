"""What the activation check is measured on, and which decisions training may never see.

The gene split (:mod:`curation.learning.splits`) is a function of the gene alone, so it applies to a
curator's decision as well as to a KB record: a decision whose query gene falls in dev or test is never
trained on, whether the KB has records of that gene or not.

When the KB gives no dev queries (the offline CIViC sample: its dev genes' abstracts are not in the
corpus), a fixed, gene-grouped share of the curators' decisions is held out as dev instead: the decisions
on dev genes, plus those on train genes whose second hash (salt ``decisions``) falls below
:data:`DECISION_SHARE`. Both hashes depend on the gene alone, so a gene held out stays held out as
decisions are added. The held-out decisions form an :class:`~curation.learning.splits.EvalSet`: per query,
complete evidence is relevance 2, partial evidence 1, and "not relevant" 0 (a judged negative). None of
them is trained on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from curation.errors import SchemaError
from curation.grades import Grade
from curation.learning.splits import FRACTIONS, EvalSet, KBSplit, gene_key, gene_part, unit_hash
from curation.records import Decision, Document
from curation.resolution import ConflictRule, resolve_decisions
from curation.schemas import RelationSchema

DECISION_SHARE = 0.2  # of the train genes' decisions, held out when the KB has no dev queries
GRADES = {Grade.COMPLETE: 2, Grade.PARTIAL: 1, Grade.NOT_RELEVANT: 0}
KB, DECISIONS, NONE = "kb", "decisions", "none"
KB_AND_DECISIONS = "kb+decisions"  # the KB's dev queries and the decisions on dev genes (the ranker's dev)
TOPICS = "topics"  # leave-topic-out: each graded topic ranked by a model trained without it (the ranker's)
SOURCE_LABELS = {KB: "KB dev genes", DECISIONS: "held-out decisions", KB_AND_DECISIONS: "KB dev genes and the "
                 "decisions on them", TOPICS: "held-out topics (each left out of training in turn)", NONE: "none"}


@dataclass(frozen=True)
class DevChoice:
    """The dev set of a build and what it holds out.

    Attributes:
        dev: the dev queries and their judgements.
        source: where they came from: ``kb`` (the KB's dev genes), ``decisions`` (held-out decisions) or
            ``none`` (neither has any).
        held_out_genes: the genes whose decisions are held out of training as dev (with ``decisions``).
    """

    dev: EvalSet
    source: str
    held_out_genes: frozenset[str] = frozenset()

    def trains_on(self, schema: RelationSchema, decision: Decision, seed: int = 13,
                  fractions: tuple[float, float, float] = FRACTIONS) -> bool:
        """Whether ``decision`` may be trained on: its gene is a train gene and not held out as dev."""
        gene = decision_gene(schema, decision)
        if not gene:
            return True  # no gene typed: in no gene's split, and never a dev query
        return gene_part(gene, seed, fractions) == "train" and gene not in self.held_out_genes


def decision_gene(schema: RelationSchema, decision: Decision) -> str:
    """The normalised key of the decision's query gene ("" when none was typed)."""
    value = dict(decision.query_entities).get(schema.query_types[0], "")
    return gene_key(schema, value) if value.strip() else ""


def held_out(schema: RelationSchema, decision: Decision, seed: int = 13,
             fractions: tuple[float, float, float] = FRACTIONS, share: float = DECISION_SHARE) -> bool:
    """Whether the decision's gene is held out as dev when the KB has no dev queries."""
    gene = decision_gene(schema, decision)
    if not gene:
        return False
    part = gene_part(gene, seed, fractions)
    return part == "dev" or (part == "train" and unit_hash(gene, seed, "decisions") < share)


def decisions_dev(schema: RelationSchema, decisions: Iterable[Decision], documents: Mapping[str, Document],
                  seed: int = 13, fractions: tuple[float, float, float] = FRACTIONS, share: float = DECISION_SHARE,
                  conflicts: ConflictRule = ConflictRule.EXCLUDE) -> tuple[EvalSet, frozenset[str]]:
    """The held-out decisions as a dev set (module docstring), and the genes held out.

    Decisions are resolved as for training (one per item: superseded ones dropped, adjudications win,
    conflicts by ``conflicts``), so dev judges each item the way training would have read it.
    """
    own = [d for d in decisions if d.schema == schema.name and held_out(schema, d, seed, fractions, share)]
    genes = frozenset(decision_gene(schema, d) for d in own)
    chosen, _ = resolve_decisions(own, conflicts)
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    values: dict[str, dict[str, str]] = {}
    for d in chosen:
        if d.pmid not in documents or d.grade not in GRADES:
            continue
        typed = {t: v for t, v in d.query_entities if t in schema.query_types and v.strip()}
        try:
            text = schema.render_query(typed)
        except SchemaError:
            continue
        queries[text] = text
        values[text] = typed
        qrels.setdefault(text, {})[d.pmid] = GRADES[d.grade]
    return EvalSet(queries, qrels, None, values), genes


def choose_dev(schema: RelationSchema, split: KBSplit, decisions: Sequence[Decision],
               documents: Mapping[str, Document], seed: int = 13,
               fractions: tuple[float, float, float] = FRACTIONS, share: float = DECISION_SHARE,
               conflicts: ConflictRule = ConflictRule.EXCLUDE, with_dev_decisions: bool = False) -> DevChoice:
    """The KB's dev split when it has queries; otherwise the held-out decisions (module docstring).

    ``with_dev_decisions`` (the ranker's choice): the KB's dev queries also take the curators' decisions on dev
    genes, which training never reads anyway; on a KB that cites few stored abstracts they are most of the
    evidence a curator's grades can give. A decision's grade replaces the KB's judgement of the same document.
    """
    if split.dev.queries:
        if not with_dev_decisions:
            return DevChoice(split.dev, KB)
        graded, _ = decisions_dev(schema, decisions, documents, seed, fractions, 0.0, conflicts)
        if not graded.queries:
            return DevChoice(split.dev, KB)
        return DevChoice(merge_eval_sets(split.dev, graded), KB_AND_DECISIONS)
    dev, genes = decisions_dev(schema, decisions, documents, seed, fractions, share, conflicts)
    judged = any(any(r > 0 for r in docs.values()) for docs in dev.qrels.values())
    return DevChoice(dev, DECISIONS if judged else NONE, genes)


def merge_eval_sets(kb: EvalSet, graded: EvalSet) -> EvalSet:
    """The KB's dev queries and the graded ones in one set: the same query's judgements joined, a grade winning over
    the KB's judgement of the same document (the KB's answer key is kept)."""
    queries = {**kb.queries, **graded.queries}
    values = {**kb.values, **graded.values}
    qrels = {q: {**kb.qrels.get(q, {}), **graded.qrels.get(q, {})} for q in queries}
    return EvalSet(queries, qrels, kb.answer_key, values)


def trainable(schema: RelationSchema, decisions: Sequence[Decision], choice: DevChoice, seed: int = 13,
              fractions: tuple[float, float, float] = FRACTIONS) -> tuple[list[Decision], int]:
    """The decisions training may read, and how many of ``schema``'s active decisions were held out."""
    kept, dropped = [], 0
    for d in decisions:
        if d.schema != schema.name or choice.trains_on(schema, d, seed, fractions):
            kept.append(d)
        elif d.superseded_by is None:
            dropped += 1
    return kept, dropped
