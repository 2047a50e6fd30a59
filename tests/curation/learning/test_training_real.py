"""A few training steps on a tiny real subset (benchmark v2's train records): the loss falls and the
positives' distances shrink."""

from __future__ import annotations

import pytest
import torch

from curation.config import PROJECT_ROOT
from curation.learning.loss import cosine_distance
from curation.learning.sampling import SamplingConfig
from curation.learning.training import TrainConfig, train
from index.encoder import EncoderConfig, document_text, load_encoder
from index.lexical import LexicalIndex


def _edel_bench():
    from bench import edel

    return edel


@pytest.mark.slow
def test_few_steps_on_real_records(data_dir):
    edel = _edel_bench()
    from curation.learning.benchmark import build_benchmark

    benchmark = build_benchmark(data_dir, split_file=PROJECT_ROOT / "bench" / "splits" / "benchmark_v2.json")
    train_records = [r for r in benchmark.records["train"] if r.kind in edel.TRAIN_KINDS][:24]
    pmids = {r.pmid for r in train_records}
    documents = {d.pmid: d for d in benchmark.corpus if d.pmid in pmids}
    others = [d for d in benchmark.corpus if d.pmid not in pmids][:40]
    documents.update({d.pmid: d for d in others})
    lexical = LexicalIndex.build(list(documents.values()))
    def mentioned(value: str, kind: str, document) -> bool:  # a plain g(e, d): this test is about training
        return value.casefold() in document.text.casefold()

    training = edel.training_set(edel.kb_records(train_records, benchmark), documents, mentioned, lexical,
                                 SamplingConfig(per_class=1, bm25_negatives=1, random_negatives=1))
    positives = [p for p in training.pairs if p.positive]
    assert positives and any(not p.positive for p in training.pairs)
    model = load_encoder(EncoderConfig(max_seq_length=96))
    texts = {pmid: document_text(doc) for pmid, doc in documents.items()}

    def positive_distance() -> float:
        with torch.no_grad():
            q = model.encode([p.query for p in positives], convert_to_tensor=True)
            d = model.encode([texts[p.pmid] for p in positives], convert_to_tensor=True)
        return float(cosine_distance(q, d).mean())

    before = positive_distance()
    result = train(model, training.pairs, texts,
                   TrainConfig(max_seq_length=96).with_loop(epochs=3, batch_size=16, learning_rate=1e-4,
                                                            warmup_ratio=0.1))
    after = positive_distance()
    third = max(1, len(result.losses) // 3)
    assert sum(result.losses[-third:]) / third < sum(result.losses[:third]) / third
    assert after < before
