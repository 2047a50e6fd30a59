"""The suggest benchmark's relation extraction.

The relation scorer against co-occurrence on BioRED and BC5CDR Dev (or Test), gold mentions; and the direction
model trained with it (:mod:`curation.relations.direction`), its disease head scored on the same split.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.relations import training_data as data
from curation.relations.direction import corpus_examples, evaluate, train_direction
from curation.relations.evaluation import pair_scores, uncovered
from curation.relations.features import FEATURES, feature_matrix
from curation.relations.pairs import candidate_pairs
from curation.relations.scorer import RelationScorer, best_threshold
from curation.relations.training import civic_statements, pair_text_model

CID = {frozenset(("Chemical", "Disease"))}
FILES = {
    "biored": {"train": "biored/Train.PubTator", "dev": "biored/Dev.PubTator", "test": "biored/Test.PubTator"},
    "bc5cdr": {"train": "bc5cdr/CDR_TrainingSet.PubTator.txt", "dev": "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
               "test": "bc5cdr/CDR_TestSet.PubTator.txt"},
}


def read_documents(path: Path) -> list:
    """The documents of a PubTator file, read leniently (a bad row is skipped, not fatal)."""
    return list(read_pubtator(path, Problems(path, lenient=True)))


def induced(docs, pairs, related, direction) -> list[int]:
    """CID decisions: related by the scorer and, where a sentence holds both, said to induce by the direction
    model's disease head (at its threshold, chosen on dev; a pair no sentence holds keeps the scorer's decision)."""
    from curation.relations.direction import pair_direction
    from curation.relations.pairs import concept_ids

    head = direction.heads["disease"]
    spans: dict[str, dict[str, list[tuple[int, int]]]] = {}
    texts = {}
    for d in docs:
        texts[d.pmid] = d.text
        grouped: dict[str, list[tuple[int, int]]] = {}
        for m in d.mentions:
            for cid in concept_ids(m):
                grouped.setdefault(cid, []).append((m.start, m.end))
        spans[d.pmid] = grouped
    out = []
    for pair, keep in zip(pairs, related, strict=True):
        chemical, disease = ((pair.concept_a, pair.concept_b) if pair.type_a == "Chemical"
                             else (pair.concept_b, pair.concept_a))
        p = pair_direction(head, texts[pair.pmid], spans[pair.pmid].get(disease, []),
                           spans[pair.pmid].get(chemical, [])) if keep else None
        out.append(int(bool(keep) and (p is None or p >= head.threshold)))
    return out


def without(x: np.ndarray) -> np.ndarray:
    """``x`` with the pair text model's two features 0 (the ablation's input)."""
    out = x.copy()
    out[:, [FEATURES.index("text_related"), FEATURES.index("text_log_odds")]] = 0.0
    return out


def relation_extraction(data_dir: Path, split: str = "dev") -> tuple[dict, RelationScorer, data.TrainingSet]:
    """Train on both Train splits (Dev and Test PMIDs held out), score both Dev splits."""
    started = time.perf_counter()
    training = data.corpus_training_set(data_dir)
    pairs, by_pmid, held_out = training.pairs, training.documents, training.held_out
    civic = civic_statements(data_dir, training)
    text, oof = pair_text_model(training, civic)  # as train_scorer does: the training pairs read it out of fold
    features = feature_matrix(by_pmid, pairs, text_probabilities=oof)
    labels = np.array([p.label for p in pairs])
    scorer = replace(RelationScorer.fit(features, labels), text=text)
    train_s = time.perf_counter() - started
    without_text = without(features)
    plain = RelationScorer.fit(without_text, labels)  # the ablation: the same scorer without the words
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import cross_val_predict

    boosted = HistGradientBoostingClassifier(random_state=0, class_weight="balanced")
    oof = cross_val_predict(boosted, features, labels, cv=5, method="predict_proba")[:, 1]
    boosted_threshold = best_threshold(labels, oof)
    boosted.fit(features, labels)

    out: dict = {"training": {"documents": len(by_pmid), "pairs": len(pairs), "positives": int(labels.sum()),
                              "held_out_pmids": len(held_out),
                              "train_pmids_also_held_out": training.train_pmids_held_out,
                              "seconds": round(train_s, 1), "threshold_logreg": round(scorer.threshold, 4),
                              "threshold_boosted": round(boosted_threshold, 4),
                              "pair_text": dict(text.figures) if text is not None else None},
                 split: {}}
    read = {corpus: [d for d in read_documents(data_dir / FILES[corpus][split]) if d.relations]
            for corpus in ("biored", "bc5cdr")}
    dev = read if split == "dev" else {corpus: [d for d in read_documents(data_dir / FILES[corpus]["dev"])
                                                if d.relations] for corpus in ("biored", "bc5cdr")}
    started = time.perf_counter()
    direction = train_direction(data_dir, held_out, by_pmid.values(), dev["biored"] + dev["bc5cdr"])  # chosen on dev
    out["direction"] = {**direction.figures, "seconds": round(time.perf_counter() - started, 1)}
    if split != "dev" and "disease" in direction.heads:
        out["direction"]["disease"]["test_corpora"] = evaluate(
            direction.heads["disease"], corpus_examples(read["biored"] + read["bc5cdr"]))
    for corpus, types in (("biored", None), ("bc5cdr", CID)):
        docs = read[corpus]
        assert not {d.pmid for d in docs} & set(by_pmid)
        dev_pairs = [p for d in docs for p in candidate_pairs(d, types=types)]
        x = feature_matrix({d.pmid: d for d in docs}, dev_pairs, text_model=scorer.text)
        y = [p.label for p in dev_pairs]
        missed = uncovered(docs, dev_pairs, types)
        same = x[:, FEATURES.index("same_sentence")] > 0
        t = time.perf_counter()
        probabilities = scorer.probabilities(x)
        score_ms = (time.perf_counter() - t) * 1000
        out[split][corpus] = {
            "documents": len(docs), "candidate_pairs": len(dev_pairs), "gold_relations": int(sum(y)) + missed,
            "gold_without_candidate": missed,
            "systems": {
                "cooccurrence": pair_scores(y, [1] * len(y), missed),
                "same_sentence": pair_scores(y, same.astype(int).tolist(), missed),
                "scorer_logreg": pair_scores(y, (probabilities >= scorer.threshold).astype(int).tolist(), missed),
                "scorer_without_text": pair_scores(y, (plain.probabilities(without(x)) >= plain.threshold).astype(
                    int).tolist(), missed),
                "scorer_boosted": pair_scores(
                    y, (boosted.predict_proba(x)[:, 1] >= boosted_threshold).astype(int).tolist(), missed),
                **({"scorer_induces": pair_scores(y, induced(docs, dev_pairs, probabilities >= scorer.threshold,
                                                             direction), missed)} if types == CID else {}),
            },
            "scoring_ms_per_1000_pairs": round(score_ms / max(1, len(dev_pairs)) * 1000, 2),
        }
        print(f"{corpus} {split}: " + ", ".join(f"{n} F1 {s['f1']}" for n, s in out[split][corpus]["systems"].items()),
              file=sys.stderr)
    return out, replace(scorer, direction=direction), training
