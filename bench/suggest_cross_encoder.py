"""The relation scorer's second candidate: a sentence-pair cross-encoder (bench/results/suggest_cross_encoder.json).

The issue's comparison: the feature scorer the product keeps (``curation.relations``: logistic
regression over pair features) against a cross-encoder reading the sentence that relates the two concepts best
(``relations.evidence_span``), both concepts marked in it (``[[ A ]]``, ``<< B >>``), paired with the two
names — sentence-transformers' ``CrossEncoder`` from the offline MiniLM weights (no biomedical model is
installable here), trained with the project's loop (``curation.learning.cross_encoder.train_cross_encoder``,
binary cross-entropy).

Data as bench/suggest.py: BioRED Train (every relation type) + BC5CDR Train (chemical-induced disease), every Dev
and Test PMID held out, gold mentions. On a CPU the cross-encoder sees a sample of the training pairs (every
related pair and as many unrelated ones, at most ``--train-pairs``) for ``--steps`` steps; its threshold is chosen
on 10% of the training documents held out of its training. Scored on the Dev splits like the feature scorer:
document-level pair precision, recall and F1.

Usage: ``python -m bench.suggest_cross_encoder [--steps N] [--train-pairs N]``. Test splits are not read.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench._relation_extraction import read_documents
from curation.config import load_settings
from curation.relations import training_data as data
from curation.relations.evaluation import pair_scores, uncovered
from curation.relations.features import feature_matrix
from curation.relations.pairs import Pair, candidate_pairs, group_by_concept
from curation.relations.scorer import best_threshold
from curation.relations.stored_pairs import evidence_span
from curation.relations.training import train_scorer

ROOT = Path(__file__).resolve().parent.parent


def marked(document, pair: Pair, by_concept) -> tuple[str, str]:
    """(the two names, the evidence sentence with both concepts' mentions marked) of one pair."""
    text = document.text
    ma, mb = by_concept[pair.concept_a], by_concept[pair.concept_b]
    start, end, _ = evidence_span(text, ma, mb)
    spans = sorted({(m.start, m.end, "a") for m in ma if start <= m.start < m.end <= end}
                   | {(m.start, m.end, "b") for m in mb if start <= m.start < m.end <= end})
    out, at = [], start
    for s, e, side in spans:
        if s < at:
            continue  # overlapping mentions: the first kept
        out.append(text[at:s])
        out.append(f"[[ {text[s:e]} ]]" if side == "a" else f"<< {text[s:e]} >>")
        at = e
    out.append(text[at:end])
    return f"{ma[0].text} ; {mb[0].text}", "".join(out)


def inputs(documents, pairs):
    cache = {}
    rows = []
    for p in pairs:
        if p.pmid not in cache:
            cache[p.pmid] = group_by_concept(documents[p.pmid].mentions)
        rows.append(marked(documents[p.pmid], p, cache[p.pmid]))
    return rows


def main(argv: list[str] | None = None) -> int:
    from curation.learning.cross_encoder import CrossEncoderConfig, CrossEncoderExample, train_cross_encoder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "suggest_cross_encoder.json")
    parser.add_argument("--steps", type=int, default=600, help="training steps (batch 16)")
    parser.add_argument("--train-pairs", type=int, default=9600, help="training pairs sampled, related ones first")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    data_dir = load_settings().data_dir
    rng = random.Random(args.seed)
    training = data.corpus_training_set(data_dir)
    pmids = sorted(training.documents)
    rng.shuffle(pmids)
    held = set(pmids[: len(pmids) // 10])  # the threshold's documents, never trained on
    train_pairs = [p for p in training.pairs if p.pmid not in held]
    threshold_pairs = [p for p in training.pairs if p.pmid in held]
    positives = [p for p in train_pairs if p.label]
    negatives = [p for p in train_pairs if not p.label]
    rng.shuffle(positives)
    rng.shuffle(negatives)
    half = args.train_pairs // 2
    sample = positives[:half] + negatives[: args.train_pairs - min(half, len(positives))]
    rng.shuffle(sample)
    texts = inputs(training.documents, sample)
    examples = [CrossEncoderExample(query, f"x{i}", float(p.label), "relation")
                for i, (p, (query, _)) in enumerate(zip(sample, texts, strict=True))]
    doc_texts = {f"x{i}": sentence for i, (_, sentence) in enumerate(texts)}
    config = CrossEncoderConfig(epochs=1, batch_size=16, max_steps=args.steps, max_length=192, seed=args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = train_cross_encoder(examples, doc_texts, Path(tmp) / "relations-ce", config)
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(result.path, num_labels=1, max_length=192)
        train_s = time.perf_counter() - started

        def probabilities(documents, pairs) -> np.ndarray:
            rows = inputs(documents, pairs)
            scores = model.predict([[q, s] for q, s in rows], batch_size=64, show_progress_bar=False,
                                   convert_to_numpy=True)
            return 1.0 / (1.0 + np.exp(-np.asarray(scores, dtype=np.float64)))

        t = time.perf_counter()
        held_probabilities = probabilities(training.documents, threshold_pairs)
        threshold = best_threshold(np.array([p.label for p in threshold_pairs]), held_probabilities)
        out: dict = {"date": datetime.now(UTC).isoformat(timespec="seconds"),
                     "params": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                                "base_model": result.base_model, "steps": result.steps, "batch_size": 16,
                                "train_pairs": len(sample), "train_positives": sum(p.label for p in sample),
                                "threshold_pairs": len(threshold_pairs), "threshold": round(threshold, 4),
                                "device": result.device, "train_s": round(train_s, 1), "seed": args.seed,
                                "splits_read": "Train and Dev; Test PMIDs only"},
                     "dev": {}}
        feature_scorer = train_scorer(training)
        for corpus, _, dev, _, types in data.CORPORA:
            docs = [d for d in read_documents(data_dir / dev) if d.relations]
            kinds = set(types) if types else None
            pairs = [p for d in docs for p in candidate_pairs(d, types=kinds)]
            by_pmid = {d.pmid: d for d in docs}
            labels = [p.label for p in pairs]
            missed = uncovered(docs, pairs, kinds)
            t = time.perf_counter()
            ce = probabilities(by_pmid, pairs)
            ce_s = time.perf_counter() - t
            features = feature_scorer.probabilities(feature_matrix(by_pmid, pairs))
            out["dev"][corpus] = {
                "pairs": len(pairs),
                "scorer_logreg": pair_scores(labels, (features >= feature_scorer.threshold).astype(int).tolist(),
                                                 missed),
                "scorer_cross_encoder": pair_scores(labels, (ce >= threshold).astype(int).tolist(), missed),
                "cross_encoder_ms_per_pair_cpu": round(ce_s / max(1, len(pairs)) * 1000, 2),
            }
            print(f"{corpus}: logreg F1 {out['dev'][corpus]['scorer_logreg']['f1']}, cross-encoder F1 "
                  f"{out['dev'][corpus]['scorer_cross_encoder']['f1']}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
