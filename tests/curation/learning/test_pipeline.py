"""A short real training run: the loss falls, positives move closer, the version is published."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.learning.build import BuildRequest, build_version
from curation.learning.encoder_data import training_set_for
from curation.learning.loss import cosine_distance
from curation.learning.sampling import SamplingConfig
from curation.learning.splits import EvalSet
from curation.learning.training import TrainConfig
from curation.records import Document, KBRecord, Synonym
from curation.schemas import PO
from curation.versions.registry import RegistryError, list_versions
from index.encoder import EncoderConfig, document_text, encode_queries, load_encoder
from index.lexical import LexicalIndex
from index.loading import open_retriever

DOCS = {
    "11": Document("11", "Vemurafenib in BRAF V600E melanoma", "BRAF V600E mutant melanoma responded to vemurafenib."),
    "12": Document("12", "Dabrafenib for BRAF V600E", "Dabrafenib inhibits BRAF V600E kinase activity in tumours."),
    "13": Document(
        "13", "Osimertinib and EGFR T790M", "EGFR T790M resistance is overcome by osimertinib in lung cancer."
    ),
    "14": Document("14", "Gefitinib in EGFR L858R", "Lung adenocarcinoma with EGFR L858R responds to gefitinib."),
    "15": Document("15", "Sleep in cats", "Domestic cats sleep for most of the day."),
    "16": Document("16", "Rainfall and crops", "Wheat yields depend on spring rainfall."),
    "17": Document("17", "KRAS G12C and sotorasib", "Sotorasib targets KRAS G12C in colorectal cancer."),
    "18": Document("18", "Hip fractures", "Older adults with hip fractures need rehabilitation."),
}
RECORDS = [
    KBRecord("PO", (("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", "Vemurafenib")), "11", "t", "1"),
    KBRecord("PO", (("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", "Dabrafenib")), "12", "t", "2"),
    KBRecord("PO", (("Gene", "EGFR"), ("Variant", "T790M"), ("Treatment", "Osimertinib")), "13", "t", "3"),
    KBRecord("PO", (("Gene", "EGFR"), ("Variant", "L858R"), ("Treatment", "Gefitinib")), "14", "t", "4"),
    KBRecord("PO", (("Gene", "KRAS"), ("Variant", "G12C"), ("Treatment", "Sotorasib")), "17", "t", "5"),
]


@pytest.fixture(scope="module")
def matcher():
    names = [("gene", g) for g in ("BRAF", "EGFR", "KRAS")] + [
        ("chemical", c) for c in ("Vemurafenib", "Dabrafenib", "Osimertinib", "Gefitinib", "Sotorasib")
    ]
    return Matcher(Lexicon([Synonym(n, kind, n, "test", True) for kind, n in names]))


def _distances(model, pairs):
    queries = model.encode([p.query for p in pairs], convert_to_tensor=True)
    docs = model.encode([document_text(DOCS[p.pmid]) for p in pairs], convert_to_tensor=True)
    return cosine_distance(queries, docs)


@pytest.mark.slow
def test_short_training_run_learns_and_publishes(tmp_path, matcher):
    request = BuildRequest(
        schema=PO,
        version="po-test-1",
        train_config=TrainConfig(max_seq_length=64).with_loop(epochs=4, batch_size=8, learning_rate=1e-4,
                                                              warmup_ratio=0.1),
        sampling=SamplingConfig(per_class=1, bm25_negatives=1, random_negatives=1, seed=3),
    )
    lexical = LexicalIndex.build(list(DOCS.values()))
    training, _ = training_set_for(request, RECORDS, DOCS, matcher, lexical)
    positives = [p for p in training.pairs if p.positive]
    assert len(positives) == 5 and any(not p.positive for p in training.pairs)
    base = load_encoder(EncoderConfig(max_seq_length=64))
    with torch.no_grad():
        before = _distances(base, positives)
    dev = EvalSet({"q": "Treatment for gene BRAF and variant V600E?"}, {"q": {"11": 1, "12": 1}})
    progress = tmp_path / "progress.json"
    version = build_version(request, DOCS, tmp_path / "models", training=training, dev=dev, progress_file=progress)

    losses = version.manifest.loss_curve
    assert len(losses) == version.manifest.train_steps > 0
    assert sum(losses[-2:]) / 2 < sum(losses[:2]) / 2
    retriever = open_retriever(version.path)
    trained = load_encoder(EncoderConfig(model=str(version.path / "model"), max_seq_length=64))
    with torch.no_grad():
        after = _distances(trained, positives)
    assert after.mean() < before.mean()
    queries = [p.query for p in positives]  # the served search encodes them in numpy: the trained model's vectors
    assert np.abs(encode_queries(retriever.encoder, queries) - encode_queries(trained, queries)).max() < 2e-6
    assert set(version.metrics) >= {"ndcg@10", "map@50"}
    assert json.loads(progress.read_text())["state"] in {"trained", "indexing", "evaluating"}
    assert (version.path / "manifest.json").exists() and not (tmp_path / "models" / "po-test-1.tmp").exists()
    hits = retriever.search(PO, {"Gene": "BRAF", "Variant": "V600E"}, k=3).hits
    assert {h.pmid for h in hits[:2]} == {"11", "12"}
    versions, problems = list_versions(tmp_path / "models")
    assert [v.version for v in versions] == ["po-test-1"] and problems == []
    with pytest.raises(RegistryError, match="immutable"):
        build_version(request, DOCS, tmp_path / "models", training=training)
