"""The relation scorer on a curator's own data folder: it trains on the Train files there, holds out the Dev and Test
files there, and says which were missing (nothing to hold out, no Dev figure) instead of refusing to train."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.served_annotator import dictionary_matcher
from curation.relations import training_data
from curation.relations.active import judge
from curation.relations.pairs import RelationError
from curation.relations.scorer_folder import write_scorer
from curation.relations.training import describe_training, train_with_manifest
from curation.store.loads import unfinished_load
from curation.workflows import first_models
from curation.workflows.quickstart import load_sample
from curation.workflows.relation_scoring import activate_scorer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DRUGS = ("cisplatin", "lithium", "haloperidol", "amiodarone")
DISEASES = ("nephrotoxicity", "tremor", "dystonia", "fibrosis")
BIORED_TRAIN, BIORED_DEV, BIORED_TEST = training_data.CORPORA[0][1:4]
BC5CDR_TRAIN = training_data.CORPORA[1][1]


def _write(path: Path, pmids: range) -> None:
    """Tiny PubTator documents: each relates a drug to a disease and co-mentions another drug it does not relate."""
    lines = []
    for i, pmid in enumerate(pmids):
        drug, other, disease = DRUGS[i % 4], DRUGS[(i + 1) % 4], DISEASES[i % 4]
        title = f"{drug.capitalize()} induced {disease}."
        abstract = f"We report {disease} after {drug} treatment. Patients also took {other} daily."
        text = f"{title} {abstract}"
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
        for word, kind, cid in ((drug, "Chemical", f"D{drug}"), (other, "Chemical", f"D{other}"),
                                (disease, "Disease", f"D{disease}")):
            start = 0
            while (start := text.lower().find(word, start)) >= 0:
                lines.append(f"{pmid}\t{start}\t{start + len(word)}\t{text[start:start + len(word)]}\t{kind}\t{cid}")
                start += len(word)
        lines += [f"{pmid}\tCID\tD{drug}\tD{disease}", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def train_only(tmp_path) -> Path:
    """A data folder with BioRED and BC5CDR Train and no Dev or Test file."""
    folder = tmp_path / "data"
    _write(folder / BIORED_TRAIN, range(3_000_000, 3_000_012))
    _write(folder / BC5CDR_TRAIN, range(3_001_000, 3_001_012))
    return folder


def test_without_dev_or_test_files_every_train_document_is_trained_on(train_only):
    training = training_data.corpus_training_set(train_only)
    assert training.per_corpus == {"biored": 12, "bc5cdr": 12}
    assert training.held_out == frozenset() and training.held_out_from == {}
    assert set(training.missing) == {n for _, _, dev, test, _ in training_data.CORPORA for n in (dev, test)}
    note = training.held_out_note()
    assert note.startswith("held out nothing; nothing held out from biored/Dev.PubTator, biored/Test.PubTator, ")
    assert note.endswith("(not in the data folder)")


def test_the_test_files_there_stay_held_out(train_only):
    _write(train_only / BIORED_TEST, range(3_000_008, 3_000_012))  # four BioRED Train documents are also Test's
    training = training_data.corpus_training_set(train_only)
    assert training.held_out_from == {BIORED_TEST: 4}
    assert training.per_corpus == {"biored": 8, "bc5cdr": 12} and training.train_pmids_held_out == 4
    assert not {p.pmid for p in training.pairs} & training.held_out
    assert training.held_out_note().startswith(f"held out 4 Dev/Test PMIDs ({BIORED_TEST} 4); nothing held out from "
                                               f"{BIORED_DEV}, ")


def test_a_missing_train_file_is_not_trained_on_and_none_at_all_is_an_error(train_only, tmp_path):
    (train_only / BC5CDR_TRAIN).unlink()
    training = training_data.corpus_training_set(train_only)
    assert training.per_corpus == {"biored": 12}
    assert f"not trained on {BC5CDR_TRAIN} (not in the data folder)" in training.held_out_note()
    with pytest.raises(RelationError, match="the relation scorer trains on BioRED or BC5CDR Train"):
        training_data.corpus_training_set(tmp_path / "empty")


def test_a_scorer_without_dev_files_says_so_and_replaces_no_active_one(train_only, tmp_path, con):
    scorer, manifest = train_with_manifest(train_only, None, {}, {}, {}, None, "relations-no-dev")
    assert manifest["dev_pair_f1"] == {} and manifest["dev_pair_f1_mean"] is None
    assert manifest["corpus_documents"] == {"biored": 12, "bc5cdr": 12} and manifest["held_out_pmids"] == 0
    line = describe_training(manifest)
    assert line.startswith("no Dev figure: no Dev file in the data folder to judge it on; held out nothing; ")
    ok, why = judge(con, manifest)
    assert ok and why == "activated: no relation scorer was active (no Dev file to judge it on)"
    old = {**manifest, "name": "old", "dev_pair_f1_mean": 0.4}
    activate_scorer(con, write_scorer(tmp_path / "models" / "old", scorer, old))
    ok, why = judge(con, manifest)
    assert not ok and "kept old: the new scorer has no Dev figure" in why


def test_judged_on_the_dev_files_both_scorers_had(train_only, tmp_path, con):
    scorer, manifest = train_with_manifest(train_only, None, {}, {}, {}, None, "relations-x")
    old = {**manifest, "name": "old", "dev_pair_f1": {"biored": 0.6, "bc5cdr": 0.2}, "dev_pair_f1_mean": 0.4}
    activate_scorer(con, write_scorer(tmp_path / "models" / "old", scorer, old))
    ok, why = judge(con, {"dev_pair_f1": {"biored": 0.61}, "dev_pair_f1_mean": 0.61})
    assert ok and why.endswith("against 0.600 for old (on biored Dev, the Dev files both were judged on)")
    ok, why = judge(con, {"dev_pair_f1": {"biored": 0.5}, "dev_pair_f1_mean": 0.5})
    assert not ok and "worse than its 0.600 (on biored Dev" in why


def test_the_first_run_trains_the_scorer_on_a_folder_without_test_files(con, tmp_path, train_only, monkeypatch):
    (train_only / "civic").mkdir()
    shutil.copy(FIXTURES / "civic" / "current.tsv", train_only / "civic" / "civic_evidence_small.tsv")
    settings = dataclasses.replace(Settings(), data_dir=train_only, cache_dir=tmp_path / "cache", vocabularies=(),
                                   db_path=tmp_path / "store.duckdb", models_dir=tmp_path / "models")
    load_sample(con, settings, annotator=lambda: Annotator(dictionary_matcher(con)), train=True)
    monkeypatch.setattr(first_models, "build_base_version", lambda con, s: "po-base serves")
    monkeypatch.setattr(first_models, "start_shipped_recogniser", lambda con, s: (None, "no recogniser ships"))
    line = first_models.train_pending(con, settings, lambda *_: None, background=False)
    assert "relations failed" not in line, line
    assert line.startswith("relation scorer relations-") and " active (no Dev figure: no Dev file in the data folder" \
        in line
    assert f"held out nothing; nothing held out from {BIORED_DEV}, {BIORED_TEST}, " in line
    assert unfinished_load(con) is None
    ((state, message),) = con.execute("SELECT state, message FROM load_steps WHERE kind = 'relations'").fetchall()
    assert state == "done" and "held out nothing" in message
