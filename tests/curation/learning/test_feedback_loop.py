"""Proof that the loop learns, on real data: reject the top abstract, accept a lower one, retrain.

The store holds the real BioRED dev abstracts and the real CIViC KB. A zero-shot version is
active; for a real gene query the curator marks its top dense hit *not relevant* and the
third *complete evidence*; a real retraining job (worker process, KB + decisions, small
settings) must then rank the accepted abstract above the rejected one, while the old version's
files and ranking stay exactly as they were.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from curation.config import load_settings
from curation.grades import Grade
from curation.jobs import retraining
from curation.jobs.result import job_result
from curation.learning.build import BuildRequest, build_version
from curation.learning.training import TrainConfig
from curation.schemas import PO
from curation.store.corpus import iter_documents
from curation.store.decisions import record_decision
from curation.store.opening import open_store
from curation.versions import catalog
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.loading import open_retriever
from index.search import Mode

QUERY = {"Gene": "BRCA1"}


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _ranking(path: Path) -> list[str]:
    return [hit.pmid for hit in open_retriever(path).search(PO, QUERY, mode=Mode.DENSE, k=1000).hits]


@pytest.mark.slow
def test_accepted_abstract_overtakes_the_rejected_one_after_retraining(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    settings = load_settings()
    con = open_store(tmp_path / "real.duckdb")
    ingest_corpus(con, "pubtator", data_dir / "biored" / "Dev.PubTator")
    ingest_kb(con, "civic", data_dir / "civic" / "civic_evidence_2026-05.tsv")
    documents = {d.pmid: d for d in iter_documents(con)}
    old = build_version(BuildRequest(schema=PO, version="po-zero-shot", train=False,
                                     train_config=TrainConfig(max_seq_length=128)), documents, settings.models_dir)
    catalog.register_version(con, old)
    catalog.activate_version(con, old.version)
    before = _ranking(old.path)
    old_digest = _digest(old.path)
    rejected, accepted = before[0], before[2]

    record_decision(con, "ann", PO, QUERY, rejected, Grade.NOT_RELEVANT)
    record_decision(con, "ann", PO, QUERY, accepted, Grade.COMPLETE, note="the evidence I was looking for")
    job = retraining.start_retrain(
        con,
        retraining.RetrainRequest("PO", epochs=8, batch_size=8, learning_rate=5e-5, max_seq_length=128),
        settings,
    )
    job = retraining.wait_for(con, job, interval_s=1.0, timeout_s=900)
    assert job.state == "succeeded", job.message
    result = job_result(job)
    assert result.training.decisions.by_grade == {Grade.NOT_RELEVANT: 1, Grade.COMPLETE: 1}

    after = _ranking(Path(result.path))
    assert after.index(accepted) < after.index(rejected), (before[:5], after[:5])
    assert _digest(old.path) == old_digest  # the old version is untouched...
    assert _ranking(old.path) == before  # ...and still ranks as it did
    # Too few CIViC records cite these abstracts for a dev split to compare on, so the new
    # version waits for a person to activate it, and says why.
    assert result.activated is False and "no dev ndcg@10" in job.message, job.message
    assert catalog.active_version(con, "PO").version == old.version
    con.close()
