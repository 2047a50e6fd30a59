"""How well a relation scorer finds the related pairs: pair precision, recall and F1, and its Dev figures.

:func:`dev_pair_f1` is what decides whether a newly trained scorer replaces the active one
(:func:`curation.relations.active.judge`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from curation.records import Document
from curation.relations.features import feature_matrix
from curation.relations.pairs import Pair, candidate_pairs, group_by_concept, related_pairs
from curation.relations.scorer import RelationScorer
from curation.relations.training_data import CORPORA


def pair_scores(labels: Sequence[int], predicted: Sequence[int], missed: int = 0) -> dict[str, float]:
    """Precision, recall and F1 of predicted pairs; ``missed``: gold relations no candidate pair could cover."""
    labels, predicted = np.asarray(labels), np.asarray(predicted)
    tp = int(((labels == 1) & (predicted == 1)).sum())
    fp = int(((labels == 0) & (predicted == 1)).sum())
    fn = int(((labels == 1) & (predicted == 0)).sum()) + missed
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "tp": tp, "fp": fp, "fn": fn}


def uncovered(documents: Iterable[Document], pairs: Sequence[Pair],
              types: set[frozenset[str]] | None = None) -> int:
    """Gold relations (of ``types``) with no candidate pair: a concept never mentioned, so no scorer can find it."""
    covered = {(p.pmid, p.concept_a, p.concept_b) for p in pairs if p.label}
    missing = 0
    for document in documents:
        kinds = {c: m[0].type for c, m in group_by_concept(document.mentions).items()}
        for a, b in related_pairs(document):
            if types is not None and (a in kinds and b in kinds) and frozenset((kinds[a], kinds[b])) not in types:
                continue
            if (document.pmid, a, b) not in covered:
                missing += 1
    return missing


def dev_pair_f1(scorer: RelationScorer, data_dir: Path) -> dict[str, float]:
    """Document-level pair F1 on the Dev splits (gold mentions): BioRED any relation, BC5CDR chemical-induced
    disease — what decides whether a newly trained scorer replaces the active one (the retriever's gate, for
    relations). A corpus whose Dev file the data folder lacks has no figure (:func:`describe_dev` says so)."""
    from curation.ingest.problems import Problems
    from curation.ingest.pubtator import read_pubtator

    out = {}
    for corpus, _, dev, _, types in CORPORA:
        path = Path(data_dir) / dev
        if not path.is_file():
            continue
        docs = [d for d in read_pubtator(path, Problems(path, lenient=True)) if d.relations]
        kinds = set(types) if types else None
        pairs = [p for d in docs for p in candidate_pairs(d, types=kinds)]
        x = feature_matrix({d.pmid: d for d in docs}, pairs, text_model=scorer.text)
        predicted = (scorer.probabilities(x) >= scorer.threshold).astype(int).tolist()
        out[corpus] = pair_scores([p.label for p in pairs], predicted, uncovered(docs, pairs, kinds))["f1"]
    return out


def describe_dev(dev: Mapping[str, float]) -> str:
    """A scorer's Dev figures for a person, and the corpora it has none on (no Dev file in its data folder)."""
    absent = [corpus for corpus, *_ in CORPORA if corpus not in dev]
    if not dev:
        return "no Dev figure: no Dev file in the data folder to judge it on"
    figures = "Dev pair F1 " + ", ".join(f"{k} {v:.3f}" for k, v in dev.items())
    return figures + (f" (no {', '.join(absent)} Dev file: not judged on it)" if absent else "")
