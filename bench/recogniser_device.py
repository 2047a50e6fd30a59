"""The transformer recogniser trained on the device present (a GPU when there is one) against the CNN, on BioRED Dev.

Usage::

    python -m bench.recogniser_device --write-spans spans.json        # here: BC5CDR's unlabelled gene/variant spans
    python -m bench.recogniser_device --spans spans.json --base DIR --cnn-manifest M [--epochs 10]
                                      [--configs 1e-4:frozen,3e-4:frozen,1e-4:unfrozen]
                                      [--out bench/results/recogniser_device.json]

Each configuration (peak learning rate, word-piece embeddings frozen or trained) fine-tunes the offline MiniLM
(``--base``: its folder) as a word-piece BIO tagger through the one training loop
(:func:`curation.entities.transformer_recogniser.train_transformer_recogniser`), on BioRED Train + BC5CDR Train,
keeping the best BioRED Dev epoch; its exact-span F1 per kind on BioRED Dev (spans alone, no notation rules) is
set beside the CNN recogniser's (the ``dev_scores`` of its manifest, same split and scorer). The configuration is
chosen on dev; no test document is read.

BC5CDR does not annotate genes or variants: the tokens a dictionary of BioRED Train's gene and variant names finds
there are left out of the loss. That matcher needs spaCy, which a GPU machine may lack, so ``--write-spans`` writes
those spans (text → spans) where spaCy is, and ``--spans`` reads them.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from bench import _scaffold as scaffold
from bench._scaffold import goal
from curation.learning.recogniser.data import gene_variant_spans, load_corpora

KINDS = ("GENE", "VARIANT", "CHEMICAL", "DISEASE")


def write_spans(data_dir: Path, out: Path) -> int:
    corpora = load_corpora(data_dir)
    spans = gene_variant_spans(corpora.train[0].documents)
    texts = {d.text: spans(d.text) for part in corpora.train for d in part.documents}
    out.write_text(json.dumps(texts), encoding="utf-8")
    print(f"wrote {len(texts)} texts' spans to {out}")
    return 0


def run(args: argparse.Namespace) -> int:
    import torch

    from curation.entities.transformer_recogniser import TransformerSettings, train_transformer_recogniser

    spans = json.loads(args.spans.read_text(encoding="utf-8"))
    corpora = load_corpora(args.data_dir)
    cnn = json.loads(args.cnn_manifest.read_text(encoding="utf-8"))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    runs = {}
    for config in args.configs.split(","):
        rate, embeddings = config.split(":")
        settings = TransformerSettings(base_model=str(args.base), freeze_embeddings=embeddings == "frozen").with_loop(
            device=device, epochs=args.epochs, learning_rate=float(rate))
        folder = args.work / f"transformer-{rate}-{embeddings}"
        started = time.perf_counter()
        manifest = train_transformer_recogniser(corpora.train, corpora.dev, folder,
                                                unlabelled=lambda text: spans.get(text, []), settings=settings)
        seconds = time.perf_counter() - started
        scores = manifest.dev_scores
        runs[config] = {"settings": settings.recorded(), "seconds": round(seconds, 1),
                        "best_epoch": manifest.best_epoch,
                        "dev_f1": {k.lower(): round(scores[f"{k}.f"], 4) for k in KINDS},
                        "dev_ents_f": round(scores["ents_f"], 4),
                        "epoch_ents_f": [round(e["ents_f"], 4) for e in manifest.epoch_scores]}
        print(config, runs[config]["dev_f1"], runs[config]["seconds"], "s", flush=True)
    best = max(runs, key=lambda c: runs[c]["dev_ents_f"])
    cnn_f1 = {k.lower(): round(cnn["dev_scores"][f"{k}.f"], 4) for k in KINDS}
    report = {
        "date": scaffold.now(),
        "device": torch.cuda.get_device_name() if device == "cuda" else platform.processor() or "cpu",
        "params": {"epochs": args.epochs, "configs": args.configs, "torch": torch.__version__},
        "runs": runs,
        "chosen_on_dev": best,
        "cnn": {"name": cnn.get("name"), "dev_f1": cnn_f1, "dev_ents_f": round(cnn["dev_scores"]["ents_f"], 4),
                "train_seconds": cnn.get("train_seconds"), "device": cnn.get("device")},
        "per_kind_better": {k: "transformer" if runs[best]["dev_f1"][k] > cnn_f1[k] else "cnn" for k in cnn_f1},
        "goals": {
            "ran_on_cuda": goal(int(device == "cuda"), 1, ">="),
            "transformer_minus_cnn_ents_f1_biored_dev": goal(
                round(runs[best]["dev_ents_f"] - cnn["dev_scores"]["ents_f"], 4), 0.0, ">="),
        },
    }
    scaffold.write(args.out, report)
    scaffold.print_goals(report["goals"])
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "recogniser_device", data_dir=True)
    parser.add_argument("--write-spans", type=Path, default=None, help="write BC5CDR's unlabelled spans and stop")
    parser.add_argument("--spans", type=Path, help="the spans --write-spans wrote")
    parser.add_argument("--base", type=Path, help="the offline MiniLM's folder (a transformers model)")
    parser.add_argument("--cnn-manifest", type=Path, help="the CNN recogniser's manifest.json")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--configs", default="1e-4:frozen,3e-4:frozen,1e-4:unfrozen",
                        help="comma-separated learning-rate:frozen|unfrozen")
    parser.add_argument("--work", type=Path, default=Path("/tmp/recogniser-device"))
    args = parser.parse_args(argv)
    if args.write_spans is not None:
        return write_spans(args.data_dir, args.write_spans)
    if not (args.spans and args.base and args.cnn_manifest):
        parser.error("--spans, --base and --cnn-manifest are needed to train")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
