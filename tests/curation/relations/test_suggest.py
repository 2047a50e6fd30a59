"""Suggestions for the missing slot: stored relation pairs, the aggregation rule, the KB check, decisions as
training pairs, the CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from curation.cli import main
from curation.entities.annotation import Annotator
from curation.grades import Grade
from curation.records import Document
from curation.relations import training_data
from curation.relations.features import FEATURES, feature_matrix
from curation.relations.pairs import RelationError
from curation.relations.scorer import RelationScorer
from curation.relations.scorer_folder import SCORER_FILE
from curation.relations.stored_pairs import DocumentPairs, load_scored_pairs
from curation.relations.suggestions import PairEvidence, aggregate, merge_names
from curation.relations.training_data import decision_examples
from curation.schemas import PO
from curation.store.annotations import annotations_per_document, replace_annotations
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.decisions import record_decision
from curation.store.jobs import get_job
from curation.store.kb import list_kb_records
from curation.store.opening import open_store
from curation.store.relations import (
    UNSCORED,
    count_unscored_documents,
    list_relation_pairs,
    list_relation_scorers,
    list_unscored_documents,
)
from curation.workflows.entities import dictionary_matcher, reannotate
from curation.workflows.ingestion import ingest_kb
from curation.workflows.relation_scoring import activate_scorer, active_scorer, rescore

DOCS = (
    Document("2000001", "Vemurafenib in BRAF V600E melanoma.",
             "Patients with BRAF V600E melanoma responded to vemurafenib. Sotorasib was not tested."),
    Document("2000002", "BRAF V600E and sotorasib.",
             "BRAF V600E colorectal tumours were sensitive to sotorasib in this study."),
    Document("2000003", "Osimertinib in lung cancer.", "Osimertinib was given to patients with lung cancer."),
    Document("2000004", "A note on BRAF.", "BRAF is a kinase."),
)


def _store(tmp_path, fixtures):
    con = open_store(tmp_path / "s.duckdb")
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    with transaction(con):
        add_documents(con, DOCS)
    reannotate(con, Annotator(dictionary_matcher(con)))
    return con


def _scorer_folder(tmp_path, weights: dict[str, float], intercept: float = -1.0, threshold: float = 0.5):
    """A scorer with chosen weights on raw features (mean 0, scale 1): its behaviour is known in advance."""
    coef = np.zeros(len(FEATURES))
    for name, value in weights.items():
        coef[FEATURES.index(name)] = value
    folder = tmp_path / "scorer"
    folder.mkdir()
    RelationScorer(np.zeros(len(coef)), np.ones(len(coef)), coef, intercept, threshold).save(folder / SCORER_FILE)
    return folder


# --- the aggregation rule -------------------------------------------------------------------------------------


def _e(pmid, rank, slot, cand, p):
    return PairEvidence(pmid, rank, slot, cand, cand.upper(), p)


def test_two_slots_min_needs_a_document_relating_the_candidate_to_both():
    evidence = [_e("1", 1, "Gene", "x", 0.9), _e("1", 1, "Variant", "x", 0.1),  # x: related to the gene only
                _e("2", 2, "Gene", "y", 0.6), _e("2", 2, "Variant", "y", 0.7)]
    both = aggregate(evidence, ["Gene", "Variant"], combine="min", rule="sum", weight="flat", threshold=0.5)
    assert [c.concept_id for c in both] == ["y", "x"]
    assert [c.supporting for c in both] == [1, 0]
    anyone = aggregate(evidence, ["Gene", "Variant"], combine="max", rule="sum", weight="flat", threshold=0.5)
    assert [c.concept_id for c in anyone] == ["x", "y"]


def test_a_slot_the_document_does_not_mention_counts_zero_under_min():
    evidence = [_e("1", 1, "Gene", "x", 0.9)]
    (only,) = aggregate(evidence, ["Gene", "Variant"], combine="min", threshold=0.5)
    assert only.score == 0 and only.supporting == 0


def test_rank_weights_and_rules():
    evidence = [_e("1", 1, "Gene", "a", 0.8), _e("2", 3, "Gene", "b", 0.8), _e("3", 4, "Gene", "b", 0.8)]
    log = {c.concept_id: c.score for c in aggregate(evidence, ["Gene"], rule="sum", weight="log")}
    assert log["a"] == pytest.approx(0.8)
    assert log["b"] == pytest.approx(0.8 / np.log2(4) + 0.8 / np.log2(5), abs=1e-6)
    best = {c.concept_id: c.score for c in aggregate(evidence, ["Gene"], rule="max", weight="reciprocal")}
    assert best["a"] == pytest.approx(0.8) and best["b"] == pytest.approx(0.8 / 3, abs=1e-6)
    noisy = {c.concept_id: c.score for c in aggregate(evidence, ["Gene"], rule="noisy_or", weight="flat")}
    assert noisy["b"] == pytest.approx(1 - 0.2 * 0.2, abs=1e-6)
    with pytest.raises(ValueError, match="rule must be one of"):
        aggregate(evidence, ["Gene"], rule="mean")


def test_one_document_keeps_its_best_pair_per_slot():
    evidence = [_e("1", 1, "Gene", "a", 0.2), _e("1", 1, "Gene", "a", 0.7)]
    (a,) = aggregate(evidence, ["Gene"], weight="flat", threshold=0.5)
    assert a.score == pytest.approx(0.7) and len(a.documents) == 1 and a.supporting == 1


class _Unnamed:
    """A lexicon that names no concept: candidates keep the names their pairs were stored with."""

    def canonical(self, kind, concept_id):
        return ""


def test_a_concept_stored_under_two_names_is_one_candidate_and_every_candidate_has_its_ids():
    # One id written two ways in two documents (no lexicon name for it) and a second id sharing one of the names.
    evidence = [PairEvidence("1", 1, "Gene", "D1", "Gefitinib", 0.9), PairEvidence("2", 2, "Gene", "D1", "Iressa", 0.8),
                PairEvidence("3", 3, "Gene", "D1", "Gefitinib", 0.7),
                PairEvidence("3", 3, "Gene", "DB2", "gefitinib", 0.6)]
    keyed, merged = merge_names(evidence, _Unnamed(), "chemical")
    assert {e.candidate for e in keyed} == {"gefitinib"}
    assert all(len(keys) == 1 for keys in merged.values())
    for candidate in aggregate(keyed, ["Gene"]):  # what suggest_from looks up: the ids behind each candidate
        assert [cid for cid, keys in merged.items() if candidate.concept_id in keys] == ["D1", "DB2"]


# --- stored pairs ---------------------------------------------------------------------------------------------


def test_annotation_stores_every_co_mentioned_pair_unscored_without_a_scorer(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    rows = list_relation_pairs(con, ["2000001"])
    sides = {(r.name_a, r.name_b) for r in rows} | {(r.name_b, r.name_a) for r in rows}
    assert ("V600E", "Vemurafenib") in sides and ("BRAF", "Vemurafenib") in sides
    assert all(r.score is None for r in rows)
    vemurafenib = next(r for r in rows if {r.name_a, r.name_b} == {"V600E", "Vemurafenib"})
    text = DOCS[0].text
    assert vemurafenib.same_sentence and "vemurafenib" in text[vemurafenib.evidence_start:vemurafenib.evidence_end]
    assert list_relation_scorers(con) == {UNSCORED: 4}
    assert active_scorer(con).scorer is None and "no relation scorer" in active_scorer(con).message


def test_a_new_scorer_rescores_only_what_another_scorer_wrote_and_reannotation_keeps_pairs(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    active = activate_scorer(con, _scorer_folder(tmp_path, {"same_sentence": 3.0}))
    assert list_unscored_documents(con, active.version) == ["2000001", "2000002", "2000003", "2000004"]
    assert count_unscored_documents(con, active.version) == 4
    report = rescore(con)
    assert report.documents == 4 and list_unscored_documents(con, active.version) == []
    assert count_unscored_documents(con, active.version) == 0
    rows = list_relation_pairs(con, ["2000001"])
    same = [r.score for r in rows if r.same_sentence]
    apart = [r.score for r in rows if not r.same_sentence]
    assert same and apart and min(same) > max(apart)  # the weights say so: sigmoid(2) vs sigmoid(-1)
    # re-annotating writes the pairs again in the same transaction, with the active scorer
    reannotate(con, Annotator(dictionary_matcher(con)), stale_only=False)
    assert list_relation_scorers(con) == {active.version: 4}


def test_score_the_rest_runs_in_the_background_and_says_what_it_scored(tmp_path, fixtures):
    from curation.workflows import relation_scoring

    con = _store(tmp_path, fixtures)
    assert relation_scoring.stale_documents(con) == 0  # no scorer active: nothing to bring up to date
    activate_scorer(con, _scorer_folder(tmp_path, {"same_sentence": 3.0}))
    assert relation_scoring.stale_documents(con) == 4
    relation_scoring.start_rescore(con)
    relation_scoring._RESCORE["run"].result()  # wait for the thread
    running, outcome = relation_scoring.rescore_state()
    assert not running and outcome.startswith("4 documents scored for relations")
    assert relation_scoring.stale_documents(con) == 0


def test_replacing_annotations_drops_their_pairs(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    with transaction(con):
        replace_annotations(con, "other", {"2000001": len(DOCS[0].text)}, [])
    assert list_relation_pairs(con, ["2000001"]) == []
    assert "2000001" in list_unscored_documents(con, UNSCORED)


def test_pairs_scored_elsewhere_load_only_for_documents_whose_annotations_are_unchanged(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    counts = annotations_per_document(con)
    scored = {pmid: tuple(r._replace(score=0.9) for r in list_relation_pairs(con, [pmid]))
              for pmid in ("2000001", "2000002")}
    documents = [DocumentPairs("2000001", counts["2000001"], scored["2000001"]),
                 DocumentPairs("2000002", counts["2000002"] + 1, scored["2000002"])]  # re-annotated since
    assert load_scored_pairs(con, "elsewhere", documents) == (1, 1)
    assert {r.score for r in list_relation_pairs(con, ["2000001"])} == {0.9}
    assert {r.score for r in list_relation_pairs(con, ["2000002"])} == {None}  # left for a rescore
    assert list_relation_scorers(con) == {UNSCORED: 3, "elsewhere": 1}


def test_a_scorer_folder_that_does_not_load_changes_nothing(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / SCORER_FILE).write_text("{not json")
    with pytest.raises(RelationError, match="cannot be read"):
        activate_scorer(con, tmp_path / "bad")
    assert active_scorer(con).scorer is None


# --- suggestions through the served search -----------------------------------------------------------------------


def _suggest(con, values, **kwargs):
    from curation.workflows.search import Searcher
    from curation.workflows.suggest import suggest

    searcher = Searcher(con)
    engine, _ = searcher.engine(PO)
    return suggest(con, engine, searcher.linker, searcher.matcher, PO, values, mode="bm25", **kwargs)


def test_suggestions_are_marked_new_to_the_kb_or_held_with_its_pmids(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    activate_scorer(con, _scorer_folder(tmp_path, {"same_sentence": 3.0}))
    rescore(con)
    result = _suggest(con, {"Gene": "BRAF", "Variant": "V600E"})
    by_name = {s.name.casefold(): s for s in result.suggestions}
    assert set(by_name) == {"vemurafenib", "sotorasib"}
    assert by_name["vemurafenib"].in_kb and by_name["vemurafenib"].kb_pmids == ("20818844",)
    assert not by_name["sotorasib"].in_kb  # the KB has sotorasib for KRAS G12C, not for BRAF V600E
    # sotorasib: only 2000002 relates it to BRAF V600E in one sentence; 2000001 mentions it in another sentence
    assert [p.pmid for p in by_name["sotorasib"].papers] == ["2000002"]
    assert by_name["sotorasib"].co_mentions == 2
    paper = by_name["sotorasib"].papers[0]
    assert {m.entity_type for m in paper.sentence_marks} == {"answer", "query"}
    assert all(paper.sentence[m.start:m.end] == m.text for m in paper.sentence_marks)
    assert "osimertinib" not in by_name  # in no document with BRAF V600E
    assert [s.name.casefold() for s in result.new_to_kb] == ["sotorasib"]


def test_candidates_not_of_the_slots_kind_are_left_out_and_the_suggestion_says_so(tmp_path, fixtures, monkeypatch):
    import curation.relations.missing_slot as missing_slot
    from curation.relations.answer_filter import AnswerFilter

    con = _store(tmp_path, fixtures)
    values = {"Gene": "BRAF", "Variant": "V600E"}
    every = _suggest(con, values)
    assert missing_slot.answer_filter(con, PO, dictionary_matcher(con).lexicon) is None  # too few KB answers to learn
    assert {s.name.casefold() for s in every.suggestions} == {"vemurafenib", "sotorasib"}
    kept = next(s for s in every.suggestions if s.name.casefold() == "vemurafenib").concept_ids
    # A filter that knows vemurafenib only (the KB says so) and no DrugBank id: sotorasib is not of the kind.
    monkeypatch.setattr(missing_slot, "answer_filter", lambda con, schema, lexicon, cache_dir: AnswerFilter(
        "Treatment", "drugbank", frozenset(kept)))
    filtered = _suggest(con, values)
    assert [s.name.casefold() for s in filtered.suggestions] == ["vemurafenib"]
    assert any("left out as not a Treatment" in n for n in filtered.notes)
    assert {s.name.casefold() for s in _suggest(con, values, kind_filter=False).suggestions} == {
        "vemurafenib", "sotorasib"}


def test_a_query_whose_documents_relate_nothing_of_the_slot_says_so(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    result = _suggest(con, {"Gene": "BRAF"}, top_docs=50)
    assert result.suggestions  # co-mentions count when no scorer is active
    nothing = _suggest(con, {"Gene": "EGFR"})
    assert nothing.suggestions == () and "no abstract mentions" in nothing.message
    con.execute("DELETE FROM relation_pairs WHERE kind_a = 'chemical' OR kind_b = 'chemical'")
    alone = _suggest(con, {"Gene": "BRAF"})  # abstracts mention BRAF, but no stored pair joins it to a chemical
    assert alone.documents == 3 and alone.suggestions == ()
    assert alone.message == "none of the top 3 abstracts mentions a chemical with Gene BRAF"


def test_the_answer_kind_generic_cannot_be_suggested(tmp_path, fixtures):
    from curation.schemas import RelationSchema

    con = _store(tmp_path, fixtures)
    generic = RelationSchema(name="G", entity_types=("Gene", "Effect"), answer="Effect", templates=("{Gene}",),
                             kinds=(("Gene", "gene"), ("Effect", "generic")))
    from curation.workflows.search import Searcher
    from curation.workflows.suggest import suggest

    searcher = Searcher(con)
    result = suggest(con, searcher.engine(PO)[0], searcher.linker, searcher.matcher, generic, {"Gene": "BRAF"},
                     mode="bm25")
    assert result.suggestions == () and "cannot be suggested" in result.message


# --- decisions as training pairs -------------------------------------------------------------------------------


def test_decisions_become_labelled_pairs(tmp_path, fixtures):
    con = _store(tmp_path, fixtures)
    values = {"Gene": "BRAF", "Variant": "V600E"}
    record_decision(con, "ana", PO, values, "2000002", Grade.COMPLETE, answer="Sotorasib")
    record_decision(con, "ana", PO, values, "2000001", Grade.NOT_RELEVANT)
    pairs, documents = decision_examples(con, {"PO": PO}, dictionary_matcher(con).lexicon)
    positives = {(p.pmid, p.concept_a, p.concept_b) for p in pairs if p.label}
    negatives = {(p.pmid, p.concept_a, p.concept_b) for p in pairs if not p.label}
    assert {pmid for pmid, *_ in positives} == {"2000002"} and len(positives) == 2  # BRAF and V600E, sotorasib
    assert {pmid for pmid, *_ in negatives} == {"2000001"}
    assert len(negatives) == 4  # (BRAF, V600E) x (vemurafenib, sotorasib)
    assert set(documents) == {"2000001", "2000002"}
    # a held-out document's decisions never become training pairs
    held, _ = decision_examples(con, {"PO": PO}, dictionary_matcher(con).lexicon, held_out=["2000002"])
    assert {p.pmid for p in held} == {"2000001"}
    # and the pairs train: features exist for each
    x = feature_matrix(documents, pairs)
    assert x.shape == (len(pairs), len(FEATURES)) and np.isfinite(x).all()


# --- the command line -------------------------------------------------------------------------------------------


@pytest.fixture
def cli_store(tmp_path, fixtures, monkeypatch):
    con = _store(tmp_path, fixtures)
    activate_scorer(con, _scorer_folder(tmp_path, {"same_sentence": 3.0}))
    rescore(con)
    con.close()
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "s.duckdb"


def test_cli_suggest_table_json_new_only_and_export(cli_store, tmp_path, capsys):
    args = ["suggest", "--db", str(cli_store), "--schema", "PO", "--entity", "Gene=BRAF", "--entity", "Variant=V600E",
            "--mode", "bm25"]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "NEW to the KB" in table and "in the KB (20818844)" in table
    assert main([*args, "--json", "--new-only", "--export", str(tmp_path / "review.csv")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [s["name"].casefold() for s in record["suggestions"]] == ["sotorasib"]
    assert record["suggestions"][0]["papers"][0]["pmid"] == "2000002"
    rows = list(csv.DictReader(io.StringIO((tmp_path / "review.csv").read_text())))
    assert [(r["suggestion"].casefold(), r["pmid"], r["in_kb"]) for r in rows] == [("sotorasib", "2000002", "False")]
    assert main([*args, "--new-only", "--export", str(tmp_path / "civic.csv"), "--export-format",
                 "civic-suggestions"]) == 0
    capsys.readouterr()
    civic = list(csv.DictReader(io.StringIO((tmp_path / "civic.csv").read_text())))
    assert [(r["pubmed_id"], r["gene"], r["variant"], r["therapy"].casefold()) for r in civic] == [
        ("2000002", "BRAF", "V600E", "sotorasib")]
    assert "relation scorer" in civic[0]["comment"] and "sensitive to sotorasib" in civic[0]["comment"]
    con = open_store(cli_store)  # CIViC's format reads back as a KB record
    try:
        ingest_kb(con, "civic-suggestions", tmp_path / "civic.csv")
        added = [r for r in list_kb_records(con, "PO") if r.pmid == "2000002"]
        assert [dict(r.entities)["Treatment"].casefold() for r in added] == ["sotorasib"]
    finally:
        con.close()
    assert main([*args, "--export", str(tmp_path / "review.jsonl")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "review.jsonl").read_text().splitlines()]
    assert {line["name"].casefold() for line in lines} == {"vemurafenib", "sotorasib"}


def test_cli_suggest_batch_and_bad_input(cli_store, tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"schema": "PO", "entities": {"Gene": "BRAF", "Variant": "V600E"}, "id": "a"}\n'
                       '{"schema": "PO", "entities": {"Gene": "EGFR"}, "id": "b"}\n')
    assert main(["suggest", "--db", str(cli_store), "--queries", str(queries), "--mode", "bm25"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    assert lines[0]["suggestions"] and not lines[1]["suggestions"] and lines[1]["message"]
    queries.write_text('{"schema": "PO", "entities": {"Treatment": "x"}}\n')
    assert main(["suggest", "--db", str(cli_store), "--queries", str(queries)]) == 2
    assert "line 1" in capsys.readouterr().err
    assert main(["suggest", "--db", str(cli_store), "--schema", "PO", "--entity", "Gene=BRAF", "--top-docs",
                 "0"]) == 2
    assert main(["suggest", "--db", str(cli_store), "--schema", "PO", "--entity", "Gene=BRAF", "--export",
                 str(tmp_path / "x.txt")]) == 2
    assert not (tmp_path / "x.txt").exists()


def test_cli_suggest_batch_reports_a_failing_query_on_its_line_and_answers_the_others(cli_store, tmp_path, capsys,
                                                                                        monkeypatch):
    import curation.workflows.suggest as workflow

    served = workflow.suggest

    def failing_on_egfr(con, engine, linker, matcher, schema, values, **kwargs):
        if values.get("Gene") == "EGFR":
            raise IndexError("tuple index out of range")
        return served(con, engine, linker, matcher, schema, values, **kwargs)

    monkeypatch.setattr(workflow, "suggest", failing_on_egfr)
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"schema": "PO", "entities": {"Gene": "EGFR"}, "id": "a"}\n'
                       '{"schema": "PO", "entities": {"Gene": "BRAF", "Variant": "V600E"}, "id": "b"}\n')
    out = tmp_path / "out.jsonl"
    assert main(["suggest", "--db", str(cli_store), "--queries", str(queries), "--mode", "bm25", "--out",
                 str(out)]) == 1
    assert "line 1" in capsys.readouterr().err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["id"], line["line"]) for line in lines] == [("a", 1), ("b", 2)]
    assert "IndexError" in lines[0]["error"] and not lines[0]["suggestions"]
    assert lines[1]["suggestions"] and "error" not in lines[1]


# --- training and the gate -------------------------------------------------------------------------------------


def test_the_corpus_training_set_holds_no_dev_or_test_document(data_dir):
    training = training_data.corpus_training_set(data_dir)
    held = set()
    for _, _, dev, test, _ in training_data.CORPORA:
        held |= training_data.split_pmids(data_dir / dev) | training_data.split_pmids(data_dir / test)
    assert training.held_out == frozenset(held)
    assert not set(training.documents) & held
    assert not {p.pmid for p in training.pairs} & held
    # the BC5CDR training file repeats its Dev documents, and BioRED Train holds BC5CDR Dev/Test abstracts
    assert training.train_pmids_held_out > 500
    assert set(training.per_corpus) == {"biored", "bc5cdr"} and min(training.per_corpus.values()) > 200


def _folder_with_manifest(tmp_path, name, dev_mean):
    (tmp_path / name).mkdir()
    folder = _scorer_folder(tmp_path / name, {"same_sentence": 1.0})
    manifest = {"name": name}
    if dev_mean is not None:
        manifest["dev_pair_f1_mean"] = dev_mean
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_new_scorer_replaces_the_active_one_only_when_not_worse_on_dev(tmp_path, fixtures):
    from curation.relations.active import GATE_TOLERANCE, judge

    con = _store(tmp_path, fixtures)
    ok, why = judge(con, {"dev_pair_f1_mean": 0.5})
    assert ok and "no relation scorer was active" in why
    activate_scorer(con, _folder_with_manifest(tmp_path, "old", 0.55))
    ok, why = judge(con, {"dev_pair_f1_mean": 0.5})
    assert not ok and "kept old" in why and "0.500" in why
    assert judge(con, {"dev_pair_f1_mean": 0.55 - GATE_TOLERANCE / 2})[0]
    assert judge(con, {"dev_pair_f1_mean": 0.6})[0]
    activate_scorer(con, _folder_with_manifest(tmp_path, "unmeasured", None))
    ok, why = judge(con, {"dev_pair_f1_mean": 0.1})
    assert ok and "has no Dev figure" in why


# --- the background job -------------------------------------------------------------------------------------------


def _tiny_corpora(root):
    """A data directory laid out as BioRED + BC5CDR: each document relates a drug to a disease and co-mentions
    another drug it does not relate (distinct PMIDs per file)."""
    drugs = ("cisplatin", "lithium", "haloperidol", "amiodarone")
    diseases = ("nephrotoxicity", "tremor", "dystonia", "fibrosis")
    for offset, (_, *files, _) in enumerate(training_data.CORPORA):
        for split, name in enumerate(files):
            lines = []
            for i in range(12 if split == 0 else 4):
                pmid = str(3_000_000 + 1000 * (3 * offset + split) + i)
                drug, other, disease = drugs[i % 4], drugs[(i + 1) % 4], diseases[i % 4]
                title = f"{drug.capitalize()} induced {disease}."
                abstract = f"We report {disease} after {drug} treatment. Patients also took {other} daily."
                text = f"{title} {abstract}"
                lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
                for word, kind, cid in ((drug, "Chemical", f"D{drug}"), (other, "Chemical", f"D{other}"),
                                        (disease, "Disease", f"D{disease}")):
                    start = 0
                    while (start := text.lower().find(word, start)) >= 0:
                        lines.append(f"{pmid}\t{start}\t{start + len(word)}\t{text[start:start + len(word)]}\t{kind}\t"
                                     f"{cid}")
                        start += len(word)
                lines += [f"{pmid}\tCID\tD{drug}\tD{disease}", ""]
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("\n".join(lines) + "\n")
    return root


def test_the_relation_job_trains_scores_in_the_worker_and_the_app_activates_and_loads(tmp_path, fixtures, monkeypatch):
    from curation.config import load_settings
    from curation.jobs import worker
    from curation.jobs.result import job_result
    from curation.workflows import retrain
    from curation.workflows.relation_scoring import apply_relation_jobs, start_relation_training

    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    con = _store(tmp_path, fixtures)
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "2000001", Grade.NOT_RELEVANT)
    settings = load_settings()
    job = start_relation_training(con, settings, data_dir=_tiny_corpora(tmp_path / "data"),
                                  launch=lambda _: 2**22 + 4321)
    assert job.kind == "relations"
    result = worker.run(Path(job.job_dir))
    assert result.succeeded, result.message
    assert "Dev pair F1" in result.message and "dev_pair_f1_mean" in result.scores
    folder = Path(result.path)
    assert folder.parent == settings.models_dir / "relations" and not folder.with_name(folder.name + ".tmp").exists()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["decision_pairs"] == 4 and manifest["decision_positives"] == 0  # the rejection's negatives

    assert retrain.current_job(con) is None  # the poll finishes the job and applies it
    job = get_job(con, job.job_id)
    assert job.state == "succeeded" and job_result(job).activated is True, job.message
    assert "is active; 4 abstracts scored" in job.message
    active = active_scorer(con)
    assert active.path == str(folder)
    assert list_relation_scorers(con) == {active.version: 4}
    assert all(r.score is not None for r in list_relation_pairs(con, ["2000001", "2000002"]))
    assert not Path(job.job_dir, "pairs.jsonl").exists()
    assert apply_relation_jobs(con)[0].message == job.message  # applied once only


def test_the_kind_filters_decisions_are_kept_for_the_next_process_and_a_kb_change_is_a_miss(tmp_path, fixtures,
                                                                                          monkeypatch):
    import curation.relations.answer_filter as answers

    con = _store(tmp_path, fixtures)
    lexicon = dictionary_matcher(con).lexicon
    monkeypatch.setattr(answers, "_CACHE", {})  # earlier tests' stores are the same: their "not filtered" is kept
    monkeypatch.setattr(answers, "MIN_KB_ANSWERS", 1)  # the fixture's KB is small; learn from it all the same
    kb_only = answers.training_examples  # and its corpus names no chemical the KB lacks: one is added
    monkeypatch.setattr(answers, "training_examples", lambda *a: (
        [*kb_only(*a)[0], ("D005557", "Formaldehyde", 0), ("D001965", "Bromides", 0)], kb_only(*a)[1]))
    first = answers.answer_filter(con, PO, lexicon, tmp_path / "answers")
    assert first is not None and first.rule == "decided" and first.decided
    assert len(list((tmp_path / "answers").glob("answers-*.json"))) == 1
    answers._CACHE.clear()  # another process: it reads the decisions instead of learning

    def no_learning(*args):
        raise AssertionError("learned again although the decisions were kept")

    monkeypatch.setattr(answers, "_decide", no_learning)
    again = answers.answer_filter(con, PO, lexicon, tmp_path / "answers")
    assert again is not None and again.decided == first.decided and again.kb_concepts == first.kb_concepts
    with transaction(con):
        con.execute("UPDATE kb_entities SET value = 'Cetuximab' WHERE entity_type = 'Treatment' AND value <> ''")
    with pytest.raises(AssertionError, match="learned again"):
        answers.answer_filter(con, PO, lexicon, tmp_path / "answers")
