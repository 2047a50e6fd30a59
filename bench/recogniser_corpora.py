"""Recognisers trained on BioRED + BC5CDR against one trained on all six NCBI corpora, the recogniser alone.

Usage::

    python -m bench.recogniser_corpora --recogniser NAME=FOLDER [--recogniser NAME=FOLDER ...]

Each recogniser (a folder ``train-recogniser`` published; the shipped one by default) labels the plain text of the
dev documents: BioRED Dev (every kind) and the dev fifth of GNormPlus, NLM-Gene, tmVar3 and NCBI disease
(:mod:`curation.learning.recogniser.ncbi_corpora`; each scored on the kinds it annotates, the others' predictions
left out).
Exact-span precision / recall / F1 per kind; annotation speed (abstracts/s, one process). No test split is read:
this is the dev comparison that decides which corpora the shipped recogniser trains on. Writes
``bench/results/recogniser_corpora.json`` with ``goals`` (the issue's BioRED Dev per-kind targets, for the best
recogniser on dev, alone: ``recogniser_<kind>_f1_biored_dev``).
"""

from __future__ import annotations

import time
from pathlib import Path

from bench import _scaffold as scaffold
from bench._scaffold import goal
from curation.entities.recogniser import load_recogniser
from curation.entities.recogniser_corpus import LABELS, CorpusPart
from curation.entities.transformer_recogniser import exact_scores, gold_spans
from curation.learning.recogniser.data import ALL, load_corpora
from curation.learning.recogniser.shipped import SHIPPED

# issue 46's BioRED Dev targets, here for the recogniser alone (bench/entities.py scores the served system)
GOALS = {"GENE": ("recogniser_gene_f1_biored_dev", 0.87), "CHEMICAL": ("recogniser_chemical_f1_biored_dev", 0.90),
         "DISEASE": ("recogniser_disease_f1_biored_dev", 0.85), "VARIANT": ("recogniser_variant_f1_biored_dev", 0.88)}


def score(recogniser, part: CorpusPart) -> dict[str, float]:
    """Exact-span scores of ``recogniser`` on ``part``'s plain text, over the kinds the part annotates."""
    kinds = set(part.labels) if part.labels is not None else set(LABELS.values())
    started = time.perf_counter()
    found = recogniser.recognise([d.text for d in part.documents])
    seconds = time.perf_counter() - started
    predicted = {(i, s, e, k.upper()) for i, spans in enumerate(found) for s, e, k in spans if k.upper() in kinds}
    gold = {(i, s, e, k) for i, d in enumerate(part.documents) for s, e, k in gold_spans(d, part.labels)}
    return {**exact_scores(predicted, gold), "documents": len(part.documents),
            "abstracts_per_s": round(len(part.documents) / seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "recogniser_corpora", data_dir=True)
    parser.add_argument("--recogniser", action="append", default=[], metavar="NAME=FOLDER",
                        help="a recogniser folder to score (repeat; default: the shipped one)")
    args = parser.parse_args(argv)
    chosen = dict(r.split("=", 1) for r in args.recogniser) or {"shipped": str(SHIPPED)}
    corpora = load_corpora(args.data_dir, ALL)
    parts = (corpora.dev, *corpora.corpus_dev)
    results = {}
    for name, folder in chosen.items():
        recogniser = load_recogniser(Path(folder))
        results[name] = {"folder": folder, "manifest": {"trained_on": recogniser.manifest.trained_on,
                                                        "settings": recogniser.manifest.settings,
                                                        "train_seconds": recogniser.manifest.train_seconds},
                         "dev": {part.name: score(recogniser, part) for part in parts}}
        print(name, {p: s["ents_f"] for p, s in results[name]["dev"].items()}, flush=True)
    best = max(results, key=lambda n: results[n]["dev"]["biored_dev"]["ents_f"])
    dev = results[best]["dev"]["biored_dev"]
    goals = {key: goal(dev.get(f"{kind}.f", 0.0), target, ">=") for kind, (key, target) in GOALS.items()}
    report = {"date": scaffold.now(), "data_dir": str(args.data_dir), "best_on_dev": best,
              "recognisers": results, "goals": goals,
              "notes": {"split": "dev only: BioRED Dev and the fifth of each NCBI corpus that corpus_genes.is_dev "
                                 "names; each part scored on the kinds its corpus annotates",
                        "scope": "the recogniser alone on plain text (no dictionaries, no linker)"}}
    scaffold.write(args.out, report)
    scaffold.print_goals(goals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
