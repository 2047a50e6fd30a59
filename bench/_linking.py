"""Entity linking figures: accuracy@1/@5 of seven systems and the auto-link precision.

``measure_linking(data_dir, models_dir)`` trains the linker (or loads it from
``models_dir/linkers/<LINKER_NAME>`` when it is there) through the same functions as
``python -m curation train-linker``, then links held-out names:

* BC5CDR Test chemical and disease mentions -> MeSH ids, dictionary = BioRED Train + BC5CDR Train
  mentions + DrugBank joined to MeSH by shared names (:mod:`curation.learning.linker.data`);
  a mention whose concept the dictionary lacks is unreachable and counted wrong;
* BioRED Dev (as asked; also used for calibration, so its w choice is not blind) and BioRED Test
  gene mentions -> NCBI Gene ids;
* held-out DrugBank synonyms -> DrugBank ids, dictionary = DrugBank without them.

Systems: exact dictionary, char TF-IDF, zero-shot encoder, trained encoder, trained prototypes
(a concept = the mean of its name embeddings; the seed-001 ablation), TF-IDF + trained encoder
re-ranked, and the linker itself (exact unambiguous names first, then the re-ranked list).
Accuracy is given per mention ("mention"), per distinct (text, concept) ("unique") and per
mention whose concept the dictionary holds ("reachable"); the goal values use all mentions.
Auto-link precision is that of what ``link()`` applies to BC5CDR Test chemicals and diseases and
BioRED Test genes under the rule chosen on dev (exact names the rule applies included; fuzzy
links also reported alone). DrugBank's held-out names are linked under the chemical rule chosen
on corpus dev, a rule never fitted to them. ``with_dev_dictionary`` repeats BC5CDR with dev's
names added to the dictionary (as BC5CDR linking work usually does), rule unchanged.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from curation.entities.linking import DevName, LexiconLinker, TrainedLinker, load_linker, read_manifest
from curation.entities.name_scoring import NameScorer
from curation.entities.synonyms import Lexicon
from curation.learning.linker.data import LinkerData, load_linker_data
from curation.learning.linker.name_encoder import NameEncoderConfig
from curation.learning.linker.training import train_linker
from curation.records import Synonym

LINKER_NAME = "names-minilm"
SYSTEMS = ("exact", "tfidf", "zero_shot", "trained", "trained_prototype", "combined", "linker")
GOALS = {"link_acc1_bc5cdr_chemical": ("bc5cdr_chemical", 0.90), "link_acc1_bc5cdr_disease": ("bc5cdr_disease", 0.90),
         "auto_link_precision": ("auto_link", 0.98)}


def _accuracy(names: list[DevName], ranked: dict[str, list[str]], known: set[str]) -> dict[str, float]:
    """acc@1 / acc@5 per mention, per distinct (text, concept), and per mention whose concept
    the dictionary holds ("reachable": what the method does, the dictionary's gaps aside)."""
    unique = list(dict.fromkeys((n.text, n.concept_id) for n in names))
    mentions = [(n.text, n.concept_id) for n in names]
    reachable = [(t, c) for t, c in mentions if c in known]
    out = {}
    for label, rows in (("mention", mentions), ("unique", unique), ("reachable", reachable)):
        for k in (1, 5):
            hits = sum(gold in ranked.get(text, [])[:k] for text, gold in rows)
            out[f"{label}_acc{k}"] = round(hits / max(1, len(rows)), 4)
    return out


def _rankings(system: str, texts: list[str], kind: str, linker: LexiconLinker,
              zero: NameScorer | None) -> dict[str, list[str]]:
    """text -> concept ids best first (5) for one system."""
    lexicon = linker.lexicon
    if system == "exact":
        return {t: list(dict.fromkeys(c for _, c in lexicon.lookup(t, kind)))[:5] for t in texts}
    if system == "linker":
        return {t: [c for c, _, _ in link.candidates] for t, link in zip(texts, linker.link_many(texts, kind),
                                                                          strict=True)}
    scorer, mode = {"tfidf": (linker.scorer, "tfidf"), "zero_shot": (zero, "dense"),
                    "trained": (linker.scorer, "dense"), "trained_prototype": (linker.scorer, "prototype"),
                    "combined": (linker.scorer, "combined")}[system]
    found = scorer.rank(texts, kind, k=5, mode=mode)
    return {t: [r.concept_id for r in f] for t, f in zip(texts, found, strict=True)}


def _auto_links(names: list[DevName], linker: LexiconLinker) -> dict[str, float]:
    texts = list(dict.fromkeys(n.text for n in names))
    links = dict(zip(texts, linker.link_many(texts, names[0].kind), strict=True))
    applied = [(links[n.text], n.concept_id) for n in names if links[n.text].applied]
    fuzzy = [(link, gold) for link, gold in applied if link.confidence < 1.0]
    return {
        "mentions": len(names), "applied": len(applied),
        "correct": sum(link.concept_id == gold for link, gold in applied),
        "fuzzy_applied": len(fuzzy), "fuzzy_correct": sum(link.concept_id == gold for link, gold in fuzzy),
    }


def measure_linking(data_dir: str | Path, models_dir: str | Path | None = None,
                    config: NameEncoderConfig | None = None) -> dict:
    """Train (or load) the linker and measure it; returns figures with ``goal_values``.

    Args:
        data_dir: the shared data folder (biored/, bc5cdr/, dicts/).
        models_dir: where ``linkers/<LINKER_NAME>`` is loaded from or saved to (None: a temporary
            folder, removed afterwards).
        config: fine-tuning hyper-parameters when training.
    """
    from index.encoder import EncoderConfig, load_encoder

    config = config or NameEncoderConfig()
    started = time.perf_counter()
    data: LinkerData = load_linker_data(data_dir)
    temporary = None if models_dir is not None else Path(tempfile.mkdtemp(prefix="linker-"))
    folder = Path(models_dir or temporary) / "linkers" / LINKER_NAME
    try:
        if (folder / "manifest.json").exists():
            linker = load_linker(folder, data.lexicon, device=config.loop.device)
            trained_now = False
        else:
            linker, _ = train_linker(data.sets, data.kinds, data.lexicon, data.dev, folder, config,
                                     counts=data.counts)
            trained_now = True
        manifest = read_manifest(folder)
        zero_encoder = load_encoder(EncoderConfig(device=config.loop.device, max_seq_length=config.max_seq_length))
        linkers = {
            "corpus": linker,
            "drugbank": TrainedLinker(data.drugbank_lexicon, linker.scorer.encoder, linker.scorer.weight,
                                      linker.thresholds, linker.name),
        }
        zeros = {key: NameScorer(each.lexicon, zero_encoder) for key, each in linkers.items()}
        results: dict[str, dict] = {}
        for test, names in data.tests.items():
            key = "drugbank" if test.startswith("drugbank") else "corpus"
            kind = names[0].kind
            texts = list(dict.fromkeys(n.text for n in names))
            known = set(linkers[key].lexicon.concepts(kind))
            figures: dict[str, object] = {
                "mentions": len(names), "unique_names": len(set((n.text, n.concept_id) for n in names)),
                "unreachable_mentions": sum(n.concept_id not in known for n in names),
            }
            for system in SYSTEMS:
                ranked = _rankings(system, texts, kind, linkers[key], zeros[key])
                figures[system] = _accuracy(names, ranked, known)
            figures["auto_link"] = _auto_links(names, linkers[key])
            results[test] = figures
        # BC5CDR work usually links test mentions into a dictionary that holds dev's names too:
        # the same linker (w, thresholds unchanged) over train + dev names shows what coverage adds.
        wider = Lexicon([*data.lexicon.entries(), *(Synonym(n.concept_id, n.kind, n.text, "dev") for n in data.dev)])
        wide = TrainedLinker(wider, linker.scorer.encoder, linker.scorer.weight, linker.thresholds, linker.name)
        with_dev: dict[str, dict] = {}
        for test in ("bc5cdr_chemical", "bc5cdr_disease"):
            names = data.tests[test]
            texts = list(dict.fromkeys(n.text for n in names))
            known = set(wider.concepts(names[0].kind))
            with_dev[test] = {"unreachable_mentions": sum(n.concept_id not in known for n in names),
                              "auto_link": _auto_links(names, wide)}
            for system in ("exact", "tfidf", "linker"):
                with_dev[test][system] = _accuracy(names, _rankings(system, texts, names[0].kind, wide, None), known)
        corpus_tests = ("bc5cdr_chemical", "bc5cdr_disease", "biored_test_gene")
        total = {f: sum(results[t]["auto_link"][f] for t in corpus_tests)
                 for f in ("applied", "correct", "fuzzy_applied", "fuzzy_correct", "mentions")}
        auto = {
            "sets": list(corpus_tests), **total,
            "precision": round(total["correct"] / max(1, total["applied"]), 4),
            "fuzzy_precision": round(total["fuzzy_correct"] / max(1, total["fuzzy_applied"]), 4),
            "coverage": round(total["applied"] / max(1, total["mentions"]), 4),
            "thresholds": manifest.thresholds, "weight": manifest.weight,
        }
        goal_values = {
            "link_acc1_bc5cdr_chemical": results["bc5cdr_chemical"]["linker"]["mention_acc1"],
            "link_acc1_bc5cdr_disease": results["bc5cdr_disease"]["linker"]["mention_acc1"],
            "auto_link_precision": auto["precision"],
        }
        return {
            "linker": LINKER_NAME, "trained_now": trained_now, "train_seconds": manifest.train_seconds,
            "device": manifest.device, "base_model": manifest.base_model, "counts": manifest.counts,
            "config": manifest.config, "dev": manifest.dev, "tests": results, "auto_link": auto,
            "with_dev_dictionary": with_dev,
            "goal_values": goal_values, "goals": {k: v[1] for k, v in GOALS.items()},
            "evaluation_level": "goal values and auto-link: per mention; 'unique' = per distinct (text, concept)",
            "seconds": round(time.perf_counter() - started, 1),
        }
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
