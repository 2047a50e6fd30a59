"""One rule turns decisions into training examples: the encoder, the ranker and the relation scorer read the
same deciding decision per item (superseded and withdrawn ones dropped, an adjudication wins, a disagreement
nobody adjudicated left out)."""

from __future__ import annotations

from curation.grades import Grade
from curation.learning.feedback import decision_pairs
from curation.learning.margins import margin_table
from curation.learning.ranker.training import GAINS, decision_queries
from curation.records import Decision, Document, Mention
from curation.relations.training_data import decision_training_pairs
from curation.resolution import ConflictRule, resolve_decisions
from curation.schemas import PO

BRAF = (("Gene", "BRAF"), ("Variant", "V600E"))
TITLE, ABSTRACT = "BRAF V600E melanoma", "BRAF V600E melanoma responds to vemurafenib."
DOCS = {pmid: Document(pmid, TITLE, ABSTRACT) for pmid in ("1", "2", "3", "4")}


def _mentions(pmid: str) -> list[Mention]:
    text = f"{TITLE} {ABSTRACT}"
    out = []
    for name, kind, concept in (("BRAF", "gene", "673"), ("V600E", "variant", "p.V600E"),
                                ("vemurafenib", "chemical", "D000077484")):
        start = text.index(name)
        out.append(Mention(pmid, start, start + len(name), name, kind, concept))
    return out


MENTIONS = {pmid: _mentions(pmid) for pmid in DOCS}


class NoDictionary:
    """A lexicon that knows no name: slots are matched by the mentions' own text."""

    def lookup(self, name: str, kind: str | None = None) -> list[tuple[str, str]]:
        return []


def decision(i: int, pmid: str, grade: Grade, curator: str = "ann", superseded_by: int | None = None,
             adjudication: bool = False) -> Decision:
    answer = "vemurafenib" if grade != Grade.NOT_RELEVANT else ""
    return Decision(i, curator, "PO", PO.render_query(dict(BRAF)), BRAF, pmid, grade, answer, "",
                    f"2026-11-22 10:00:{i:02d}", superseded_by, adjudication=adjudication)


DECISIONS = [
    decision(1, "1", Grade.NOT_RELEVANT, superseded_by=2),  # superseded by the same curator's next grade
    decision(2, "1", Grade.COMPLETE),
    decision(3, "2", Grade.COMPLETE),  # a conflict ...
    decision(4, "2", Grade.NOT_RELEVANT, curator="bob"),
    decision(5, "2", Grade.NOT_RELEVANT, curator="ada", adjudication=True),  # ... that an adjudicator settled
    decision(6, "3", Grade.COMPLETE, superseded_by=6),  # withdrawn (an undo)
    decision(7, "4", Grade.COMPLETE),  # a conflict nobody adjudicated
    decision(8, "4", Grade.NOT_RELEVANT, curator="bob"),
]


def test_every_learner_reads_the_same_resolved_grades():
    chosen, counts = resolve_decisions(DECISIONS)
    resolved = {d.pmid: d.grade == Grade.COMPLETE for d in chosen}  # pmid -> relevant?
    assert resolved == {"1": True, "2": False}
    assert counts == {"superseded": 2, "adjudicated": 1, "conflicts_excluded": 1}

    # the EDEL encoder (and the cross-encoder, which reads its pairs)
    encoder = decision_pairs(PO, DECISIONS, DOCS, lambda value, kind, doc: True, margin_table(PO))
    assert {p.pmid: p.positive for p in encoder.pairs} == resolved
    # the learned ranker
    ranker = decision_queries(PO, DECISIONS)
    gains = {pmid: gain for query in ranker.values() for pmid, gain in query.gains.items()}
    assert gains == {"1": GAINS[Grade.COMPLETE], "2": GAINS[Grade.NOT_RELEVANT]}
    # the relation scorer
    pairs, used = decision_training_pairs(DECISIONS, {"PO": PO}, DOCS, MENTIONS, NoDictionary())
    labels: dict[str, set[int]] = {}
    for pair in pairs:
        labels.setdefault(pair.pmid, set()).add(pair.label)
    assert labels == {"1": {1}, "2": {0}} and set(used) == {"1", "2"}


def test_the_relation_scorer_takes_the_latest_under_the_latest_rule_as_the_encoder_does():
    pairs, _ = decision_training_pairs(DECISIONS, {"PO": PO}, DOCS, MENTIONS, NoDictionary(),
                                       conflicts=ConflictRule.LATEST)
    chosen, _ = resolve_decisions(DECISIONS, ConflictRule.LATEST)
    assert {p.pmid for p in pairs} == {d.pmid for d in chosen} == {"1", "2", "4"}
    assert {p.label for p in pairs if p.pmid == "4"} == {0}  # bob's later "not relevant"
