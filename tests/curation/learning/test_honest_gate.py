"""The honest gate: a stable gene split, no training on dev or test decisions, held-out decisions as dev,
activation only on a bootstrap interval above zero, and the build cache (what invalidates what)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from curation.grades import Grade
from curation.learning import gate, holdout
from curation.learning.build import BuildRequest
from curation.learning.cache import BuildCache, SnapshotDigests
from curation.learning.feedback import decision_pairs
from curation.learning.margins import margin_table
from curation.learning.snapshot import Snapshot
from curation.learning.splits import gene_part, kb_split
from curation.learning.training import TrainConfig
from curation.records import Decision, Document, KBRecord
from curation.schemas import PO
from curation.versions import catalog, registry
from curation.versions.activation import judge
from curation.versions.manifest import GateEvidence, Manifest

# With seed 13: braf and egfr are dev genes, nras test, tp53 a train gene held out with decisions (second
# hash < 0.2), kras / brca1 / alk / erbb2 / met / ret / kit / pik3ca train genes that are not.
TRAIN_GENES = ("KRAS", "BRCA1", "ALK", "ERBB2", "MET", "RET", "KIT", "PIK3CA")


def _q(gene: str) -> str:
    return PO.render_query({"Gene": gene, "Variant": "V600E"})


class _NoMatch:
    def matched(self, value, kind, document) -> bool:
        return value.casefold() in document.text.casefold()


def _record(gene: str, pmid: str, drug: str = "Drugmab") -> KBRecord:
    return KBRecord("PO", (("Gene", gene), ("Variant", "V600E"), ("Treatment", drug)), pmid, "tsv", f"{gene}-{pmid}")


def _decision(i: int, gene: str, pmid: str, grade: str, curator: str = "ana") -> Decision:
    return Decision(i, curator, "PO", _q(gene), (("Gene", gene), ("Variant", "V600E")), pmid, grade)


def _doc(pmid: str, gene: str) -> Document:
    return Document(pmid, f"{gene} V600E and Drugmab", f"{gene} V600E tumours respond to Drugmab.", "test")


# --- 1. the stable split -------------------------------------------------------------------------


def test_old_genes_keep_their_split_when_the_kb_grows_and_fractions_hold():
    genes = [f"GENE{i}" for i in range(400)]
    documents = {str(i): _doc(str(i), g) for i, g in enumerate(genes)}
    records = [_record(g, str(i)) for i, g in enumerate(genes)]
    before = kb_split(PO, records, documents, _NoMatch())
    part = {r.get("Gene"): s for s, rows in (("train", before.train),) for r in rows}
    part |= {v["Gene"]: s for s, ev in (("dev", before.dev), ("test", before.test)) for v in ev.values.values()}

    new = [f"NEW{i}" for i in range(60)]
    grown_docs = {**documents, **{f"n{i}": _doc(f"n{i}", g) for i, g in enumerate(new)}}
    grown = records + [_record(g, f"n{i}") for i, g in enumerate(new)] + [_record("GENE7", "n0", "Othermab")]
    random.Random(1).shuffle(grown)  # the order records come in must not matter either
    after = kb_split(PO, grown, grown_docs, _NoMatch())
    part_after = {r.get("Gene"): "train" for r in after.train}
    part_after |= {v["Gene"]: s for s, ev in (("dev", after.dev), ("test", after.test)) for v in ev.values.values()}
    assert all(part_after[g] == part[g] for g in genes)
    counts = {s: sum(1 for g in genes if part[g] == s) for s in ("train", "dev", "test")}
    assert 0.74 * 400 <= counts["train"] <= 0.86 * 400
    assert 0.06 * 400 <= counts["dev"] <= 0.14 * 400 and 0.06 * 400 <= counts["test"] <= 0.14 * 400
    assert before.genes == counts


# --- 2. no leak -------------------------------------------------------------------------------------


def test_decisions_on_dev_or_test_genes_are_never_trained_on_and_are_counted():
    assert gene_part("braf") == "dev" and gene_part("nras") == "test" and gene_part("kras") == "train"
    documents = {p: _doc(p, g) for p, g in (("1", "BRAF"), ("2", "NRAS"), ("3", "KRAS"), ("4", "KRAS"))}
    decisions = [_decision(1, "BRAF", "1", Grade.COMPLETE), _decision(2, "NRAS", "2", Grade.COMPLETE),
                 _decision(3, "KRAS", "3", Grade.COMPLETE), _decision(4, "KRAS", "4", Grade.NOT_RELEVANT)]
    kb = kb_split(PO, [_record("KRAS", "3")], documents, _NoMatch())  # KB dev has no query: decisions held out
    choice = holdout.choose_dev(PO, kb, decisions, documents)
    kept, dropped = holdout.trainable(PO, decisions, choice)
    assert [d.pmid for d in kept] == ["3", "4"] and dropped == 2
    report = decision_pairs(PO, kept, documents, lambda v, k, d: True, margin_table(PO))
    assert {p.query for p in report.pairs} == {_q("KRAS")}


# --- 3. held-out decisions as dev -------------------------------------------------------------------


def test_without_kb_dev_queries_a_gene_grouped_share_of_decisions_is_dev_and_stable():
    documents = {str(i): _doc(str(i), "X") for i in range(1, 9)}
    decisions = [
        _decision(1, "BRAF", "1", Grade.COMPLETE), _decision(2, "BRAF", "2", Grade.PARTIAL),
        _decision(3, "BRAF", "3", Grade.NOT_RELEVANT), _decision(4, "TP53", "4", Grade.COMPLETE),
        _decision(5, "KRAS", "5", Grade.COMPLETE), _decision(6, "NRAS", "6", Grade.COMPLETE),
    ]
    split = kb_split(PO, [_record("KRAS", "5")], documents, _NoMatch())
    assert not split.dev.queries
    choice = holdout.choose_dev(PO, split, decisions, documents)
    assert choice.source == "decisions" and choice.held_out_genes == {"braf", "tp53"}
    assert choice.dev.qrels == {_q("BRAF"): {"1": 2, "2": 1, "3": 0}, _q("TP53"): {"4": 2}}
    assert choice.dev.values[_q("BRAF")] == {"Gene": "BRAF", "Variant": "V600E"}
    kept, dropped = holdout.trainable(PO, decisions, choice)
    assert [d.pmid for d in kept] == ["5"] and dropped == 5
    # more decisions on other genes move no gene in or out of dev
    more = decisions + [_decision(7 + i, g, "7", Grade.COMPLETE) for i, g in enumerate(TRAIN_GENES)]
    again = holdout.choose_dev(PO, split, more, documents)
    assert again.dev.qrels[_q("BRAF")] == choice.dev.qrels[_q("BRAF")]
    assert again.held_out_genes - choice.held_out_genes == {
        holdout.decision_gene(PO, d) for d in more[6:] if holdout.held_out(PO, d)}


def test_with_kb_dev_queries_the_kb_dev_split_is_used():
    documents = {"1": _doc("1", "BRAF"), "2": _doc("2", "KRAS")}
    split = kb_split(PO, [_record("BRAF", "1"), _record("KRAS", "2")], documents, _NoMatch())
    choice = holdout.choose_dev(PO, split, [_decision(1, "TP53", "2", Grade.COMPLETE)], documents)
    assert choice.source == "kb" and list(choice.dev.queries) == [_q("BRAF")] and not choice.held_out_genes


def test_the_rankers_dev_joins_the_kb_dev_queries_and_the_decisions_on_dev_genes():
    documents = {p: _doc(p, g) for p, g in (("1", "BRAF"), ("2", "KRAS"), ("3", "BRAF"), ("4", "EGFR"))}
    split = kb_split(PO, [_record("BRAF", "1"), _record("KRAS", "2")], documents, _NoMatch())
    decisions = [_decision(1, "BRAF", "1", Grade.NOT_RELEVANT), _decision(2, "BRAF", "3", Grade.COMPLETE),
                 _decision(3, "EGFR", "4", Grade.PARTIAL), _decision(4, "TP53", "2", Grade.COMPLETE),
                 _decision(5, "KRAS", "2", Grade.COMPLETE)]
    choice = holdout.choose_dev(PO, split, decisions, documents, with_dev_decisions=True)
    assert choice.source == holdout.KB_AND_DECISIONS
    # BRAF's KB query takes the grades (the curator's "not relevant" replaces the KB's 1); EGFR's grade adds a query;
    # TP53 (a train gene) and KRAS stay out of dev, as without the decisions.
    assert choice.dev.qrels == {_q("BRAF"): {"1": 0, "3": 2}, _q("EGFR"): {"4": 1}}
    assert choice.dev.values[_q("EGFR")] == {"Gene": "EGFR", "Variant": "V600E"}
    kept, dropped = holdout.trainable(PO, decisions, choice)
    assert sorted(d.pmid for d in kept) == ["2", "2"] and dropped == 3
    # without decisions on dev genes, the KB's dev split alone
    alone = holdout.choose_dev(PO, split, decisions[3:], documents, with_dev_decisions=True)
    assert alone.source == holdout.KB and alone.dev == split.dev


# --- 4. the gate --------------------------------------------------------------------------------------


def _scores(n: int, base: float, gain: float, noise: float, seed: int = 0) -> tuple[dict, dict]:
    rng = random.Random(seed)
    old = {f"q{i}": base + rng.uniform(-0.1, 0.1) for i in range(n)}
    new = {q: v + gain + rng.uniform(-noise, noise) for q, v in old.items()}
    return new, old


def test_a_clear_gain_passes_and_a_noisy_or_tiny_one_does_not():
    clear = gate.evidence(*_scores(30, 0.4, 0.1, 0.05), baseline="po-old", dev_source="kb")
    assert clear.improved and clear.low > 0 and clear.queries == 30 and abs(clear.mean_delta - 0.1) < 0.03
    noisy = gate.evidence(*_scores(30, 0.4, 0.02, 0.4), baseline="po-old", dev_source="kb")
    assert not noisy.improved and noisy.low <= 0 < noisy.high
    few = gate.evidence(*_scores(2, 0.4, 0.3, 0.0), baseline="po-old", dev_source="decisions")
    assert not few.improved and "fewer than" in few.verdict
    assert not gate.evidence({"q": 1.0}, None, "", "kb").improved


def _version(models: Path, name: str, gate_evidence: GateEvidence | None = None) -> registry.ModelVersion:
    tmp = registry.staging(models, name)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return registry.publish(models, name, Manifest(schema="PO", documents=8, gate=gate_evidence))


@pytest.fixture
def con(tmp_path):
    from curation.store.opening import open_store

    connection = open_store(tmp_path / "s.duckdb")
    yield connection
    connection.close()


def test_judge_activates_only_on_an_interval_above_zero(con, tmp_path):
    models = tmp_path / "models"
    catalog.register_version(con, _version(models, "po-old"))
    catalog.activate_version(con, "po-old")
    clear = gate.evidence(*_scores(30, 0.4, 0.1, 0.05), baseline="po-old", dev_source="decisions")
    verdict = judge(con, "PO", _version(models, "po-a", clear))
    assert verdict.activate and "held-out-decision queries" in verdict.reason and "[+" in verdict.reason
    noisy = gate.evidence(*_scores(30, 0.4, 0.02, 0.4), baseline="po-old", dev_source="kb")
    assert not judge(con, "PO", _version(models, "po-b", noisy)).activate
    other = replace(clear, baseline="po-elsewhere")
    assert "could not be evaluated on the same dev split" in judge(con, "PO", _version(models, "po-c", other)).reason
    assert "no dev ndcg@10" in judge(con, "PO", _version(models, "po-d")).reason
    assert judge(con, "PTM", _version(models, "ptm-e")).activate  # no PTM version active: the first is activated


# --- 5. the cache, and the whole chain ----------------------------------------------------------------


def _snapshot(documents, records, decisions) -> Snapshot:
    return Snapshot((PO,), tuple(records), dict(documents), (), tuple(decisions), "digest")


def test_digests_change_exactly_with_what_they_cover():
    documents = {"1": _doc("1", "KRAS")}
    base = SnapshotDigests.of(_snapshot(documents, [_record("KRAS", "1")], []))
    decided = SnapshotDigests.of(_snapshot(documents, [_record("KRAS", "1")], [_decision(1, "KRAS", "1", "complete")]))
    assert decided.corpus == base.corpus and decided.records == base.records and decided.decisions != base.decisions
    grown = SnapshotDigests.of(_snapshot({**documents, "2": _doc("2", "ALK")}, [_record("KRAS", "1")], []))
    assert grown.corpus != base.corpus and grown.records == base.records


def test_a_damaged_cache_entry_is_a_miss(tmp_path):
    cache = BuildCache.under(tmp_path)
    cache.put("kb_pairs", "k", {"pairs": []})
    assert cache.get("kb_pairs", "k") == {"pairs": []} and cache.report == {"kb_pairs": "hit"}
    (tmp_path / ".cache" / "kb_pairs" / "k.json").write_text("{half")
    assert cache.get("kb_pairs", "k") is None and cache.report == {"kb_pairs": "miss"}


@pytest.mark.slow
def test_the_chain_reuses_its_cache_and_invalidates_exactly_what_changed(tmp_path):
    from curation.learning.chain import ChainOptions, build_from_snapshot

    genes = TRAIN_GENES + ("BRAF", "TP53")
    documents = {str(i): _doc(str(i), g) for i, g in enumerate(genes)}
    documents |= {f"x{i}": Document(f"x{i}", "Unrelated", f"Nothing about V600E here {i}.", "t") for i in range(6)}
    records = [_record(g, str(i)) for i, g in enumerate(TRAIN_GENES)]
    decisions = [_decision(1, "BRAF", "8", Grade.COMPLETE), _decision(2, "TP53", "9", Grade.COMPLETE)]
    decisions += [_decision(3 + i, "BRAF", f"x{i}", Grade.NOT_RELEVANT) for i in range(3)]
    models = tmp_path / "models"
    config = TrainConfig(max_seq_length=32).with_loop(max_steps=1, batch_size=4)

    def build(name, snapshot, train=True, baseline=None):
        return build_from_snapshot(snapshot, BuildRequest(PO, version=name, train=train, train_config=config),
                                   models, ChainOptions(decisions=snapshot.decisions, baseline=baseline,
                                                        log=lambda line: None))

    snapshot = _snapshot(documents, records, decisions)
    zero = build("po-zero", snapshot, train=False)
    assert zero.dev_source == "decisions" and set(zero.dev.queries) == {_q("BRAF"), _q("TP53")}
    first = build("po-1", snapshot, baseline=zero.version.path)
    assert first.cache == {"kb_pairs": "miss", "baseline_eval": "miss"}
    assert first.feedback.held_out == 5 and not first.feedback.pairs  # every decision is on a held-out gene
    assert first.gate is not None and first.gate.baseline == "po-zero" and first.gate.queries == 2
    assert first.version.manifest.gate == first.gate and first.gate.dev_source == "decisions"
    second = build("po-2", snapshot, baseline=zero.version.path)
    assert second.cache == {"kb_pairs": "hit", "baseline_eval": "hit"}
    assert second.training.pairs == first.training.pairs and second.baseline == first.baseline

    # a decision on a train gene: trained on; the KB pairs and the baseline evaluation are reused
    decided = _snapshot(documents, records, decisions + [_decision(9, "KRAS", "0", Grade.COMPLETE)])
    third = build("po-3", decided, baseline=zero.version.path)
    assert third.cache == {"kb_pairs": "hit", "baseline_eval": "hit"} and len(third.feedback.pairs) == 1
    # a decision on a held-out gene changes the dev set: the baseline is evaluated again
    held = _snapshot(documents, records, decisions + [_decision(9, "BRAF", "x5", Grade.NOT_RELEVANT)])
    assert build("po-4", held, baseline=zero.version.path).cache == {"kb_pairs": "hit", "baseline_eval": "miss"}
    # a new document: the corpus analysis is computed again
    grown = _snapshot({**documents, "y": _doc("y", "ALK")}, records, decisions)
    assert build("po-5", grown, baseline=zero.version.path).cache["kb_pairs"] == "miss"
    assert registry.list_versions(models)[1] == []  # the cache folder is not reported as a broken version


def test_the_chain_takes_its_options_as_one_object_or_by_name(tmp_path):
    from curation.learning.chain import ChainOptions, build_from_snapshot

    defaults = ChainOptions()
    assert (defaults.seed, defaults.decisions, defaults.use_kb, defaults.require_pairs, defaults.use_cache) == \
        (13, None, True, False, True)
    with pytest.raises(TypeError, match="nonsense"):  # a misspelt option is refused before any work
        build_from_snapshot(None, None, tmp_path, ChainOptions(seed=3), nonsense=1)
