from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.errors import CurationError
from curation.grades import Grade
from curation.records import Document, ItemKey
from curation.review.agreement import open_disagreements
from curation.review.least_sure import (
    closeness,
    component_ranks,
    learned_boundary,
    least_sure,
    rank_disagreement,
    ranking_mode,
    scale_scores,
)
from curation.review.queue import QueueSource, build_queue, candidate_relations
from curation.schemas import PO
from curation.store.base import transaction
from curation.store.corpus import add_documents, iter_documents
from curation.store.decisions import list_decisions, record_decision, undo_last_decision
from curation.store.worklist import add_worklist_item
from curation.workflows.annotation_queue import adjudicate, annotation_view
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.hits import Hit, SearchResult
from index.lexical import LexicalIndex
from index.search import Mode, Retriever
from pages.parts.highlight import marked_html, title_html

BRAF = {"Gene": "BRAF", "Variant": "V600E"}
BRAF_KEY = (("Gene", "braf"), ("Variant", "v600e"))


@pytest.fixture
def setup(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    with transaction(con):
        add_documents(
            con,
            [
                Document("2000001", "BRAF V600E melanoma", "BRAF V600E mutant melanoma treated with dabrafenib."),
                Document("2000002", "BRAF in thyroid cancer", "BRAF alterations in papillary thyroid cancer."),
                Document("2000003", "A <script>alert(1)</script> title", "V600E & <img src=x onerror=alert(2)>."),
            ],
        )
    docs = list(iter_documents(con))
    return con, Retriever(lexical=LexicalIndex.build(docs), version="bm25-only"), Matcher(build_lexicon(con))


def hit(pmid: str, rank: int, score: float, bm25: float | None, dense: float | None = None) -> Hit:
    return Hit(pmid, rank, score, bm25, dense)


# --- scoring, pure -----------------------------------------------------------------------------


def test_scores_are_scaled_over_the_list():
    hits = [hit("a", 1, 9.0, 9.0), hit("b", 2, 5.0, 5.0), hit("c", 3, 1.0, 1.0)]
    assert scale_scores(hits) == [1.0, 0.5, 0.0]
    assert scale_scores([hit("a", 1, 3.0, 3.0), hit("b", 2, 3.0, 3.0)]) == [1.0, 1.0]


def test_closeness_is_one_on_the_boundary_and_zero_at_the_far_end():
    assert closeness(0.5, 0.5) == 1.0
    assert closeness(1.0, 0.5) == closeness(0.0, 0.5) == 0.0
    # Boundary at 0.25: the far end is 1.0 (distance 0.75), so 0.625 is halfway.
    assert closeness(0.625, 0.25) == pytest.approx(0.5)
    assert closeness(1.0, 0.25) == pytest.approx(0.0)


def test_rank_disagreement_by_hand():
    # BM25 order a, b, c; dense order b, c, a: |1-3|/3, |2-1|/3, |3-2|/3.
    hits = [hit("a", 1, 3.0, 3.0, 0.1), hit("b", 2, 2.0, 2.0, 0.9), hit("c", 3, 1.0, 1.0, 0.5)]
    assert component_ranks(hits, "dense") == [3, 1, 2]
    assert rank_disagreement(hits) == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    # A document only the dense component found ranks n + 1 under BM25.
    filled = [hit("a", 1, 2.0, 2.0, 0.2), hit("b", 2, 1.0, None, 0.9)]
    assert component_ranks(filled, "bm25") == [1, 3]
    assert rank_disagreement(filled) == pytest.approx([0.5, 1.0])
    # BM25 alone: nothing to disagree with.
    assert rank_disagreement([hit("a", 1, 2.0, 2.0), hit("b", 2, 1.0, 1.0)]) == [0.0, 0.0]


def test_boundary_is_learned_from_grades():
    x, y, z = (ItemKey("PO", BRAF_KEY, p) for p in "xyz")
    scaled = {x: 1.0, y: 0.6, z: 0.0}
    assert learned_boundary(scaled, {}) == 0.5
    assert learned_boundary(scaled, {x: [Grade.COMPLETE]}) == 0.5  # no negative grade yet
    # relevant mean (1.0 + 0.6) / 2 = 0.8, not relevant 0.0: boundary 0.4.
    got = learned_boundary(scaled, {x: [Grade.COMPLETE], y: [Grade.PARTIAL], z: [Grade.NOT_RELEVANT]})
    assert got == pytest.approx(0.4)


@dataclass
class FakeHybrid:
    """A retriever with a dense side whose hits are fixed; records the mode it was asked for."""

    hits: list[Hit]
    dense: object = field(default_factory=object)
    encoder: object = field(default_factory=object)
    modes: list[str] = field(default_factory=list)

    def search(self, schema, values, mode="hybrid", k=20):
        self.modes.append(str(mode))
        return SearchResult(schema.render_query(values), self.hits[:k])


def test_least_sure_prefers_component_disagreement_in_hybrid_mode():
    # Fused order = BM25 order; dense puts the last hit first.
    hits = [
        hit("a", 1, 4.0, 4.0, 0.2),
        hit("b", 2, 3.0, 3.0, 0.3),
        hit("c", 3, 2.0, 2.0, 0.4),
        hit("d", 4, 1.0, 1.0, 0.9),
    ]
    fake = FakeHybrid(hits)
    assert ranking_mode(fake) is Mode.HYBRID
    found, notes = least_sure(fake, PO, [tuple(BRAF.items())], [], depth=4, limit=2)
    assert fake.modes == ["hybrid"] and notes == []
    # a: BM25 rank 1, dense rank 4 -> 3/4; d: 4 vs 1 -> 3/4 (the tie goes to the better rank);
    # b and c: scaled 2/3 and 1/3, closeness 2/3 each, disagreement 1/4 each.
    assert [u.item.pmid for u in found] == ["a", "d"]
    assert all(u.uncertainty == pytest.approx(0.75) for u in found)
    assert found[1].reason == "BM25 rank 4, dense rank 1"
    assert found[0].item == ItemKey("PO", BRAF_KEY, "a")


def test_bm25_retriever_uses_bm25_and_the_boundary(setup):
    con, retriever, _ = setup
    assert ranking_mode(retriever) is Mode.BM25
    found, notes = least_sure(retriever, PO, [tuple(BRAF.items())], [], depth=10, limit=10)
    assert notes == [] and found
    assert all(u.disagreement == 0.0 for u in found)
    assert all(u.uncertainty == pytest.approx(closeness(u.scaled, 0.5)) for u in found)
    assert [u.uncertainty for u in found] == sorted((u.uncertainty for u in found), reverse=True)
    assert all(u.query == "Treatment for gene BRAF and variant V600E?" for u in found)


def test_unsearchable_relations_become_notes(setup):
    _, retriever, _ = setup
    too_long = (("Gene", "B" * 2100),)
    found, notes = least_sure(retriever, PO, [too_long, tuple(BRAF.items())], [])
    # A relation the retriever refuses is a note for a person, and the others are still searched.
    assert len(notes) == 1 and "characters" in notes[0]
    assert found and all(u.item.relation == BRAF_KEY for u in found)


def test_the_queue_offers_only_abstracts_that_mention_every_typed_entity(setup):
    from curation.review.queue import mentions_every_entity

    con, retriever, matcher = setup
    found, _ = least_sure(retriever, PO, [tuple(BRAF.items())], [], depth=10, limit=10)
    assert "2000002" in {u.item.pmid for u in found}  # BRAF without V600E: BM25 retrieves it on "BRAF"
    keep = mentions_every_entity(con, matcher, PO)  # what annotation_view passes
    assert keep(BRAF, "2000001") and not keep(BRAF, "2000002") and not keep(BRAF, "no-such-pmid")
    kept, _ = least_sure(retriever, PO, [tuple(BRAF.items())], [], depth=10, limit=10, keep=keep)
    assert kept and "2000002" not in {u.item.pmid for u in kept}


# --- the queue ---------------------------------------------------------------------------------


def test_queue_offers_others_pairs_blind_then_least_sure(setup):
    con, retriever, _ = setup
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.COMPLETE)
    record_decision(con, "ana", PO, BRAF, "2000002", Grade.NOT_RELEVANT)
    record_decision(con, "carl", PO, BRAF, "2000002", Grade.NOT_RELEVANT)
    decisions = list_decisions(con, schema="PO", include_superseded=True)
    uncertain, _ = least_sure(retriever, PO, candidate_relations(con, PO, decisions), decisions)
    queue = build_queue("bo", decisions, uncertain)
    # Decided pairs first, the one with fewer grades first; never the others' grades.
    assert [(q.pmid, q.source) for q in queue[:2]] == [
        ("1000001", QueueSource.DECIDED),
        ("2000002", QueueSource.DECIDED),
    ]
    assert queue[0].reason == "graded by 1 other curator"
    assert all("complete" not in q.reason and "ana" not in q.reason for q in queue)
    rest = queue[2:]
    assert rest and all(q.source is QueueSource.LEAST_SURE for q in rest)
    assert {"1000001", "2000002"}.isdisjoint(q.pmid for q in rest)
    # ana's own pairs are not in her queue; skipped pairs leave it too.
    ana_queue = build_queue("ana", decisions, uncertain)
    assert {"1000001", "2000002"}.isdisjoint(q.pmid for q in ana_queue)
    skipped = build_queue("bo", decisions, uncertain, skipped=[queue[0].item])
    assert skipped[0].pmid == "2000002"


def test_candidate_relations_take_decided_then_worklist(setup):
    con, _, _ = setup
    record_decision(con, "ana", PO, {"Gene": "braf", "Variant": " V600E"}, "1000001", Grade.COMPLETE)
    add_worklist_item(con, PO, {"Gene": "BRAF", "Variant": "V600E"})  # same relation, folded
    add_worklist_item(con, PO, {"Gene": "EGFR"})
    relations = candidate_relations(con, PO, list_decisions(con))
    assert relations == [(("Gene", "braf"), ("Variant", "V600E")), (("Gene", "EGFR"),)]


def test_adjudication_closes_the_disagreement_and_keeps_the_annotators_labels(setup):
    con, _, _ = setup
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.COMPLETE)
    record_decision(con, "bo", PO, BRAF, "1000001", Grade.PARTIAL)
    (open_one,) = open_disagreements(list_decisions(con, include_superseded=True))
    assert open_one.labels == (("ana", Grade.COMPLETE), ("bo", Grade.PARTIAL))
    final = adjudicate(con, "ana", PO, open_one, Grade.PARTIAL)
    assert (final.curator, final.adjudication, final.grade) == ("ana", True, Grade.PARTIAL)
    decisions = list_decisions(con, include_superseded=True)
    assert open_disagreements(decisions) == []
    # ana's own label is superseded in the store but still counts as her label.
    from curation.review.agreement import label_matrix

    matrix = label_matrix(decisions)
    assert matrix.grades == ((Grade.COMPLETE,), (Grade.PARTIAL,))
    # Undoing the adjudication reopens it.
    undo_last_decision(con, "ana")
    assert len(open_disagreements(list_decisions(con, include_superseded=True))) == 1


def test_adjudication_in_another_schema_is_refused(setup):
    con, _, _ = setup
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.COMPLETE)
    record_decision(con, "bo", PO, BRAF, "1000001", Grade.PARTIAL)
    (one,) = open_disagreements(list_decisions(con, include_superseded=True))
    from curation.schemas import PTM

    with pytest.raises(Exception, match="schema 'PO'"):
        adjudicate(con, "dee", PTM, one, Grade.PARTIAL)


# --- the page's call ---------------------------------------------------------------------------


def test_view_on_an_empty_decision_store(setup):
    con, retriever, matcher = setup
    view = annotation_view(con, retriever, matcher, PO, "ana")
    assert view.next is None and view.remaining == 0 and view.pool == 0
    assert [(p.annotator, p.labelled) for p in view.progress] == [("ana", 0)]
    assert view.kappas == () and view.alpha.alpha is None and view.disagreements == ()


def test_view_shows_the_next_pair_escaped_with_progress_and_agreement(setup):
    con, retriever, matcher = setup
    record_decision(con, "ana", PO, BRAF, "2000003", Grade.PARTIAL)
    record_decision(con, "carl", PO, BRAF, "2000003", Grade.NOT_RELEVANT)
    view = annotation_view(con, retriever, matcher, PO, "bo")
    row = view.next
    assert row.entry.pmid == "2000003" and row.entry.source is QueueSource.DECIDED
    assert "<script>" not in title_html(row.title) and "&lt;script&gt;" in title_html(row.title)
    assert "<img" not in marked_html(row.abstract) and "&lt;img" in marked_html(row.abstract)
    assert '<mark class="ent-query"' in marked_html(row.abstract)  # V600E highlighted
    assert {p.annotator: p.labelled for p in view.progress} == {"ana": 1, "bo": 0, "carl": 1}
    assert view.pool >= 1 and all(p.total == view.pool for p in view.progress)
    assert [(k.annotator_a, k.annotator_b, k.shared) for k in view.kappas] == [
        ("ana", "bo", 0),
        ("ana", "carl", 1),
        ("bo", "carl", 0),
    ]
    assert [d.item.pmid for d in view.disagreements] == ["2000003"]
    # bo grades it: the next pair is a least-sure one, and the disagreement stays open.
    record_decision(con, "bo", PO, BRAF, "2000003", Grade.PARTIAL)
    after = annotation_view(con, retriever, matcher, PO, "bo")
    assert after.next is None or after.next.entry.pmid != "2000003"
    assert after.remaining == view.remaining - 1


def test_random_order_is_a_seeded_sample_not_the_least_sure_first():
    hits = [hit(p, r, 10.0 - r, 10.0 - r, 0.1 * r) for r, p in enumerate("abcdefgh", start=1)]
    fake = FakeHybrid(hits)
    sure, _ = least_sure(fake, PO, [tuple(BRAF.items())], [], depth=8, limit=8)
    ana, _ = least_sure(fake, PO, [tuple(BRAF.items())], [], depth=8, limit=8, order="random", seed="ana")
    again, _ = least_sure(fake, PO, [tuple(BRAF.items())], [], depth=8, limit=8, order="random", seed="ana")
    bo, _ = least_sure(fake, PO, [tuple(BRAF.items())], [], depth=8, limit=8, order="random", seed="bo")
    pmids = lambda found: [u.item.pmid for u in found]  # noqa: E731
    assert sorted(pmids(ana)) == sorted(pmids(sure))  # the same pairs ...
    assert pmids(ana) == pmids(again)  # ... in an order that stays put for one annotator
    assert pmids(ana) != pmids(sure) and pmids(ana) != pmids(bo)
    with pytest.raises(CurationError, match="order must be one of"):
        least_sure(fake, PO, [tuple(BRAF.items())], [], order="alphabetical")
