"""Span-level precision and recall of ``Matcher.find_all`` on BioRED Dev.

Usage::

    python -m bench.matching [--data-dir D] [--out bench/results/matching.json]

Gold: BioRED ``Dev.PubTator`` mentions of GeneOrGeneProduct, SequenceVariant and
ChemicalEntity. Dictionaries come only from other sources: the CIViC 2026 evidence TSV
(genes, variants, therapies), DrugBank, BioRED Train mentions and BC5CDR mentions (every
BC5CDR document whose PMID is also in BioRED Dev is left out: a dictionary holding Dev's
own gold names measures nothing).

Scores: exact span (same start, end and kind) and overlap span (a prediction is right if it
overlaps a gold mention of its kind; a gold mention is found if a prediction of its kind
overlaps it). Ablations switch off abbreviations, the abbreviation veto and the variant
rules. Writes one JSON with date, params, counts, per-system scores and timings.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from bench import _scaffold as scaffold
from curation.entities.matching import Matcher
from curation.entities.name_filter import measure_names, merge_stats, unreliable_names
from curation.entities.synonyms import (
    Lexicon,
    drugbank_synonyms,
    element_synonyms,
    kb_synonyms,
    mention_synonyms,
    ptm_synonyms,
)
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document, KBRecord
from curation.schemas import PO

EVALUATED = {"GeneOrGeneProduct": "gene", "SequenceVariant": "variant", "ChemicalEntity": "chemical",
             "DiseaseOrPhenotypicFeature": "disease"}


def load_pubtator(path: Path) -> list[Document]:
    """Documents with gold mentions, through the project's strict PubTator loader."""
    return list(read_pubtator(path, Problems(path)))


def load_civic(path: Path) -> list[KBRecord]:
    """PO records from a CIViC evidence export, through the project's loader."""
    return list(read_civic(path, Problems(path)))


def dictionary_synonyms(data: Path, held_out: set[str]) -> tuple[list, list[Document], list[Document], dict]:
    """Synonyms from CIViC, DrugBank, BioRED Train and BC5CDR (minus held-out PMIDs).

    Returns the synonyms, the BioRED Train and kept BC5CDR documents (for measuring names)
    and a description of the sources.
    """
    sources: dict[str, object] = {}
    synonyms = []
    civic = load_civic(data / "civic" / "civic_evidence_2026-05.tsv")
    synonyms += kb_synonyms(civic, PO)
    sources["civic_records"] = len(civic)
    drugbank = drugbank_synonyms(data / "dicts" / "drugbank_vocabulary.csv")
    synonyms += drugbank
    sources["drugbank_names"] = len(drugbank)
    train = load_pubtator(data / "biored" / "Train.PubTator")
    leaked = sorted(d.pmid for d in train if d.pmid in held_out)
    if leaked:
        raise SystemExit(f"BioRED Train shares PMIDs with the evaluated splits: {leaked[:5]}")
    synonyms += mention_synonyms(m for d in train for m in d.mentions)
    sources["biored_train_docs"] = len(train)
    bc5cdr: dict[str, Document] = {}
    for path in sorted((data / "bc5cdr").glob("*.PubTator.txt")):
        for doc in load_pubtator(path):
            bc5cdr.setdefault(doc.pmid, doc)
    kept = [d for pmid, d in bc5cdr.items() if pmid not in held_out]
    synonyms += mention_synonyms(m for d in kept for m in d.mentions)
    sources["bc5cdr_docs"] = len(kept)
    sources["bc5cdr_docs_excluded_as_evaluated"] = len(bc5cdr) - len(kept)
    synonyms += ptm_synonyms() + element_synonyms()
    return synonyms, train, kept, sources


def measured_exclusions(
    synonyms: list, train: list[Document], bc5cdr: list[Document], min_hits: int, max_precision: float
) -> dict[str, frozenset[str]]:
    """Names usually wrong in BioRED Train / BC5CDR text (see curation.entities.name_filter)."""
    probe = Matcher(Lexicon(synonyms), abbreviations=False, veto=False, shapes=False)
    stats = merge_stats(
        measure_names(probe, train, ("gene", "chemical", "disease", "variant")),
        measure_names(probe, bc5cdr, ("chemical", "disease")),
    )
    return unreliable_names(stats, min_hits=min_hits, max_precision=max_precision)


def score(predicted: Iterable[tuple[str, int, int, str]], gold: Iterable[tuple[str, int, int, str]]) -> dict:
    """Exact and overlap P/R/F1 per kind; items are (pmid, start, end, kind)."""
    predicted, gold = set(predicted), set(gold)
    out = {}
    for kind in sorted({k for *_, k in gold} | {k for *_, k in predicted}):
        p = [x for x in predicted if x[3] == kind]
        g = [x for x in gold if x[3] == kind]
        exact = len(set(p) & set(g))
        by_doc: dict[str, list[tuple[int, int]]] = {}
        for pmid, s, e, _ in g:
            by_doc.setdefault(pmid, []).append((s, e))
        pred_by_doc: dict[str, list[tuple[int, int]]] = {}
        for pmid, s, e, _ in p:
            pred_by_doc.setdefault(pmid, []).append((s, e))
        p_hit = sum(any(s < ge and gs < e for gs, ge in by_doc.get(pmid, ())) for pmid, s, e, _ in p)
        g_hit = sum(any(s < pe and ps < e for ps, pe in pred_by_doc.get(pmid, ())) for pmid, s, e, _ in g)
        out[kind] = {
            "gold": len(g),
            "predicted": len(p),
            "exact": _prf(exact, len(p), exact, len(g)),
            "overlap": _prf(p_hit, len(p), g_hit, len(g)),
        }
    return out


def _prf(p_hit: int, n_pred: int, g_hit: int, n_gold: int) -> dict[str, float]:
    precision = p_hit / n_pred if n_pred else 0.0
    recall = g_hit / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def run_system(matcher: Matcher, docs: list[Document], kinds: tuple[str, ...]) -> tuple[list, float]:
    """Predicted (pmid, start, end, kind) of ``find_all`` over docs, and the seconds it took."""
    start = time.perf_counter()
    predicted = []
    for doc in docs:
        for span in matcher.find_all(doc, kinds=kinds):
            predicted.append((doc.pmid, span.start, span.end, span.entity_type))
    return predicted, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "matching", data_dir=True)
    parser.add_argument("--min-hits", type=int, default=2, help="name filter: hits needed to judge a name")
    parser.add_argument("--max-precision", type=float, default=0.5, help="name filter: drop names below this")
    parser.add_argument("--errors", type=int, default=0, help="print this many misses and false hits per kind")
    args = parser.parse_args(argv)
    data: Path = args.data_dir
    if not (data / "biored" / "Dev.PubTator").exists():
        print(f"no BioRED at {data / 'biored'}; pass --data-dir", file=sys.stderr)
        return 2

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    splits = {name: load_pubtator(data / "biored" / f"{name.capitalize()}.PubTator") for name in ("dev", "test")}
    gold = {
        name: [(m.pmid, m.start, m.end, EVALUATED[m.type]) for d in docs for m in d.mentions if m.type in EVALUATED]
        for name, docs in splits.items()
    }
    held_out = {d.pmid for docs in splits.values() for d in docs}
    synonyms, train, bc5cdr, sources = dictionary_synonyms(data, held_out)
    timings["load_sources_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    exclude = measured_exclusions(synonyms, train, bc5cdr, args.min_hits, args.max_precision)
    timings["measure_names_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    lexicon = Lexicon(synonyms, exclude=exclude)
    timings["lexicon_s"] = round(time.perf_counter() - t0, 3)
    unfiltered = Lexicon(synonyms)
    sources["excluded_names"] = {kind: len(names) for kind, names in exclude.items()}
    sources["dropped_names"] = dict(lexicon.dropped)
    kinds = ("gene", "variant", "chemical", "disease")

    configs = {
        "matcher": (lexicon, {"abbreviations": True, "veto": True, "shapes": True}),
        "no_shapes": (lexicon, {"abbreviations": True, "veto": True, "shapes": False}),
        "no_name_filter": (unfiltered, {"abbreviations": True, "veto": True, "shapes": True}),
        "no_veto": (lexicon, {"abbreviations": True, "veto": False, "shapes": True}),
        "no_abbreviations": (lexicon, {"abbreviations": False, "veto": False, "shapes": True}),
        "variant_rules_only": (Lexicon(), {"abbreviations": False, "veto": False, "shapes": False}),
    }
    systems: dict[str, dict] = {}
    for name, (lex, config) in configs.items():
        t0 = time.perf_counter()
        matcher = Matcher(lex, **config)
        build_s = time.perf_counter() - t0
        entry: dict[str, object] = {"config": {**config, "name_filter": lex is lexicon}, "build_s": round(build_s, 3)}
        for split, docs in splits.items():
            wanted = ("variant",) if name == "variant_rules_only" else kinds
            predicted, cold_s = run_system(matcher, docs, wanted)
            split_gold = [g for g in gold[split] if g[3] in wanted]
            entry[split] = score(predicted, split_gold)
            entry[f"{split}_ms_per_abstract"] = round(1000 * cold_s / len(docs), 2)
            if name == "matcher" and split == "dev":
                if args.errors:
                    _print_errors(predicted, split_gold, docs, args.errors)
                _, warm_s = run_system(matcher, docs, wanted)
                timings["matcher_build_s"] = round(build_s, 3)
                timings["find_all_ms_per_abstract"] = round(1000 * cold_s / len(docs), 2)
                timings["find_all_ms_per_abstract_cached_text"] = round(1000 * warm_s / len(docs), 3)
                timings["g_ed_ms_per_pair"] = round(_time_g(matcher, docs), 4)
        systems[name] = entry

    scaffold.write(args.out, {
        "date": scaffold.now(),
        "params": {
            "data_dir": str(data),
            "evaluated": {
                "dev": "BioRED Dev.PubTator (used while developing)",
                "test": "BioRED Test.PubTator (held out)",
            },
            "types": EVALUATED,
            "name_filter": {
                "min_hits": args.min_hits,
                "max_precision": args.max_precision,
                "measured_on": "BioRED Train (all kinds), BC5CDR minus Dev/Test PMIDs (chemical, disease)",
            },
            "dictionary_sources": sources,
            **scaffold.machine("python"),
        },
        "counts": {
            "documents": {split: len(docs) for split, docs in splits.items()},
            "gold_mentions": {split: dict(Counter(k for *_, k in g)) for split, g in gold.items()},
            "dictionary": lexicon.sizes(),
        },
        "systems": systems,
        "timings_s": timings,
        "notes": {
            "spans": "exact = same (start, end, kind); overlap = shares a character with a gold span of the kind",
            "timing": "find_all = first sight of an abstract (spaCy pass + rules); cached_text = second call; "
            "g_ed = Matcher.matches per (entity, abstract) pair, abstract already analysed",
        },
    })
    for split in splits:
        for kind in kinds:
            s = systems["matcher"][split].get(kind)
            if s:
                print(
                    f"{split:4s} {kind:9s} exact P={s['exact']['precision']:.3f} R={s['exact']['recall']:.3f}  "
                    f"overlap P={s['overlap']['precision']:.3f} R={s['overlap']['recall']:.3f}"
                )
    print(f"find_all {timings['find_all_ms_per_abstract']} ms/abstract; wrote {args.out}")
    return 0


def _time_g(matcher: Matcher, docs: list[Document]) -> float:
    """Mean ms of one g(e, d) call over (gold entity text, other abstract) pairs."""
    pairs = []
    for i, doc in enumerate(docs):
        other = docs[(i + 1) % len(docs)]
        for m in doc.mentions[:10]:
            if m.type in EVALUATED:
                pairs.append((m.text, EVALUATED[m.type], other))
    start = time.perf_counter()
    for entity, kind, doc in pairs:
        matcher.matches(entity, kind, doc)
    return 1000 * (time.perf_counter() - start) / max(len(pairs), 1)


def _print_errors(predicted: list, gold: list, docs: list[Document], limit: int) -> None:
    text = {d.pmid: d.text for d in docs}
    pred_set, gold_set = set(predicted), set(gold)
    for kind in ("variant", "chemical", "gene", "disease"):
        misses = Counter(text[p][s:e] for p, s, e, k in gold_set - pred_set if k == kind)
        false = Counter(text[p][s:e] for p, s, e, k in pred_set - gold_set if k == kind)
        print(f"\n== {kind}: missed (exact) {sum(misses.values())}: {misses.most_common(limit)}")
        print(f"== {kind}: false (exact) {sum(false.values())}: {false.most_common(limit)}")


if __name__ == "__main__":
    raise SystemExit(main())
