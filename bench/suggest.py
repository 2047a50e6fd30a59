"""Suggest the missing slot — the relation scorer's figures (bench/results/suggest.json).

Section ``relation_extraction``: document-level relation extraction over co-mentioned concept pairs with
gold mentions (the upper-bound setting; the product's recogniser and linker mentions are a later section).
The scorer (``curation.learning.relations``: pair features + logistic regression, threshold chosen out of
fold on Train) is trained on BioRED Train (any relation type) + BC5CDR Train (chemical-induced disease),
with every Dev and Test PMID of both corpora held out of training, and scored on the Dev splits:

* BioRED Dev, any relation between any two co-mentioned concepts;
* BC5CDR Dev, CID: chemical–disease pairs only.

Baselines on the same candidates: every co-mentioned pair is related ("co-occurrence", what PubTator-style
co-occurrence search returns) and pairs co-mentioned in one sentence ("same sentence"). A gold relation
whose concepts are not both mentioned has no candidate and counts as a miss for every system. Also a
gradient-boosted learner (scikit-learn's HistGradientBoostingClassifier) on the same features, for
comparison; it is not what the product keeps (the product keeps a JSON scorer, no pickle).

Usage: ``python bench/suggest.py [--out bench/results/suggest.json]``. Test splits are not read here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._benchmark import goal  # noqa: E402
from curation.config import load_settings  # noqa: E402
from curation.ingest.problems import Problems  # noqa: E402
from curation.ingest.pubtator import read_pubtator  # noqa: E402
from curation.learning import relations as rel  # noqa: E402

CID = {frozenset(("Chemical", "Disease"))}
FILES = {
    "biored": {"train": "biored/Train.PubTator", "dev": "biored/Dev.PubTator", "test": "biored/Test.PubTator"},
    "bc5cdr": {"train": "bc5cdr/CDR_TrainingSet.PubTator.txt", "dev": "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
               "test": "bc5cdr/CDR_TestSet.PubTator.txt"},
}


def _read(path: Path) -> list:
    return list(read_pubtator(path, Problems(path, lenient=True)))


def relation_extraction(data_dir: Path) -> dict:
    """Train on both Train splits (Dev and Test PMIDs held out), score both Dev splits."""
    started = time.perf_counter()
    training = rel.corpus_training_set(data_dir)
    pairs, by_pmid, held_out = training.pairs, training.documents, training.held_out
    features = rel.feature_matrix(by_pmid, pairs)
    labels = np.array([p.label for p in pairs])
    scorer = rel.RelationScorer.fit(features, labels)
    train_s = time.perf_counter() - started
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import cross_val_predict

    boosted = HistGradientBoostingClassifier(random_state=0, class_weight="balanced")
    oof = cross_val_predict(boosted, features, labels, cv=5, method="predict_proba")[:, 1]
    boosted_threshold = rel.best_threshold(labels, oof)
    boosted.fit(features, labels)

    out: dict = {"training": {"documents": len(by_pmid), "pairs": len(pairs), "positives": int(labels.sum()),
                              "held_out_pmids": len(held_out),
                              "train_pmids_also_held_out": training.train_pmids_held_out,
                              "seconds": round(train_s, 1), "threshold_logreg": round(scorer.threshold, 4),
                              "threshold_boosted": round(boosted_threshold, 4)},
                 "dev": {}}
    for corpus, types in (("biored", None), ("bc5cdr", CID)):
        docs = [d for d in _read(data_dir / FILES[corpus]["dev"]) if d.relations]
        assert not {d.pmid for d in docs} & set(by_pmid)
        dev_pairs = [p for d in docs for p in rel.candidate_pairs(d, types=types)]
        x = rel.feature_matrix({d.pmid: d for d in docs}, dev_pairs)
        y = [p.label for p in dev_pairs]
        missed = rel.uncovered(docs, dev_pairs, types)
        same = x[:, rel.FEATURES.index("same_sentence")] > 0
        t = time.perf_counter()
        probabilities = scorer.probabilities(x)
        score_ms = (time.perf_counter() - t) * 1000
        out["dev"][corpus] = {
            "documents": len(docs), "candidate_pairs": len(dev_pairs), "gold_relations": int(sum(y)) + missed,
            "gold_without_candidate": missed,
            "systems": {
                "cooccurrence": rel.pair_scores(y, [1] * len(y), missed),
                "same_sentence": rel.pair_scores(y, same.astype(int).tolist(), missed),
                "scorer_logreg": rel.pair_scores(y, (probabilities >= scorer.threshold).astype(int).tolist(), missed),
                "scorer_boosted": rel.pair_scores(
                    y, (boosted.predict_proba(x)[:, 1] >= boosted_threshold).astype(int).tolist(), missed),
            },
            "scoring_ms_per_1000_pairs": round(score_ms / max(1, len(dev_pairs)) * 1000, 2),
        }
        print(f"{corpus} dev: " + ", ".join(f"{n} F1 {s['f1']}" for n, s in out["dev"][corpus]["systems"].items()),
              file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "suggest.json")
    args = parser.parse_args(argv)
    data_dir = load_settings().data_dir
    report = {"date": datetime.now(UTC).isoformat(timespec="seconds"),
              "params": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                         "mentions": "gold (upper bound)", "splits_read": "Train and Dev; Test PMIDs only"},
              "relation_extraction": relation_extraction(data_dir)}
    dev = report["relation_extraction"]["dev"]
    best = {c: max(dev[c]["systems"]["scorer_logreg"]["f1"], dev[c]["systems"]["scorer_boosted"]["f1"])
            for c in dev}
    report["goals"] = {  # only the goals this run measures; the suggestion goals come with their sections
        "cid_f1_bc5cdr_dev": goal(dev["bc5cdr"]["systems"]["scorer_logreg"]["f1"], 0.60, ">="),
        "pair_f1_biored_dev": goal(dev["biored"]["systems"]["scorer_logreg"]["f1"], 0.60, ">="),
    }
    report["best_scorer_f1"] = best
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}: " + "; ".join(f"{k} {v['value']} ({'met' if v['met'] else 'missed'})"
                                           for k, v in report["goals"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
