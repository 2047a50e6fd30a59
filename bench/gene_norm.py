"""Gene normalisation: mention -> NCBI Gene id, end to end, on held-out text ingested as plain text.

Usage::

    python -m bench.gene_norm [--data-dir D] [--test] [--out bench/results/entities.json]

The dictionaries are :func:`bench.entities.train_lexicon`'s (training side only: CIViC, DrugBank, BioRED Train and
BC5CDR Train gold, the installed vocabularies), plus the gene names of GNormPlus Train and NLM-Gene Train with
their dev split left out (:mod:`curation.entities.corpus_genes`, the ``corpus-genes`` kind "Load the sample"
ingests). The served annotator (the shipped recogniser, the dictionaries, the per-kind policy, no trained linker:
the app's default) annotates each held-out abstract's text; a predicted gene mention is right when its span is a
gold gene mention's and its concept one of the gold ids. Figures:

* ``end_to_end``: mention-level P / R / F1 (exact span and id) and document-level (PMID, id) P / R / F1;
* ``gold_spans``: accuracy when the recogniser is given the gold spans (linking alone: the same choice of
  :func:`curation.entities.gene_choice.choose_gene`, else unlinked), with ablations: without the corpus
  names, without the text's species, without families; and the ceiling the dictionaries set: the share of
  gold mentions whose gene has any name in them (a mouse gene known only by its Ensembl id cannot be
  answered with its NCBI id), and the accuracy on those;
* on BioRED Dev and the NLM-Gene dev split (``--test``: BioRED Test too, read once at the end).

Writes the ``gene_norm`` section of ``bench/results/entities.json`` (the file re-read just before writing; the
other sections kept) and the goals ``gene_norm_f1_biored_dev`` (>= 0.80) and ``gene_norm_f1_nlmgene_dev``
(>= 0.75), the mention-level end-to-end F1.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from bench import _scaffold as scaffold
from bench._scaffold import goal
from bench.entities import train_lexicon
from curation.entities import gene_choice
from curation.entities.annotation import Annotator
from curation.entities.corpus_genes import corpus_gene_synonyms, is_dev, is_family, read_annotated
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.recogniser import load_recogniser
from curation.entities.species import dominant_species, text_species
from curation.learning.recogniser.data import load_corpora
from curation.learning.recogniser.shipped import SHIPPED
from curation.records import Document

GENE_TYPES = ("Gene", "GeneOrGeneProduct")
CORPUS_FILES = ("ner_corpora/gnormplus/GNormPlus_Train.PubTator", "ner_corpora/nlmgene/NLMgene_Train.PubTator")
GOALS = {"gene_norm_f1_biored_dev": ("biored_dev", 0.80), "gene_norm_f1_nlmgene_dev": ("nlmgene_dev", 0.75)}

Gold = dict[tuple[str, int, int], frozenset[str]]


def gold_genes(documents: Sequence[Document]) -> Gold:
    """(pmid, start, end) -> the gold NCBI Gene ids of each gene mention ("1017,1019": either is right)."""
    out: Gold = {}
    for d in documents:
        for m in d.mentions:
            ids = frozenset(i.strip() for i in m.concept_id.replace(";", ",").split(",") if i.strip().isdigit())
            if m.type in GENE_TYPES and ids:
                out[(d.pmid, m.start, m.end)] = ids
    return out


def _prf(tp: int, predicted: int, gold: int) -> dict[str, float]:
    p, r = tp / max(1, predicted), tp / max(1, gold)
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / max(1e-9, p + r), 4),
            "tp": tp, "predicted": predicted, "gold": gold}


def end_to_end(annotator: Annotator, documents: Sequence[Document]) -> dict:
    """Mention- and document-level normalisation figures of ``annotator`` on the documents' plain text."""
    gold = gold_genes(documents)
    started = time.perf_counter()
    found = annotator.annotate([d.text for d in documents])
    seconds = time.perf_counter() - started
    predicted = {(d.pmid, a.start, a.end): a.concept_id for d, annotations in zip(documents, found, strict=True)
                 for a in annotations if a.type == "gene" and a.concept_id}
    tp = sum(concept in gold.get(key, ()) for key, concept in predicted.items())
    gold_docs = {(key[0], i) for key, ids in gold.items() for i in ids if len(ids) == 1}
    pred_docs = {(key[0], c) for key, c in predicted.items()}
    families = sum(is_family(c) for c in predicted.values())
    return {"documents": len(documents), "mention": _prf(tp, len(predicted), len(gold)),
            "document": _prf(len(gold_docs & pred_docs), len(pred_docs), len(gold_docs)),
            "family_predictions": families, "seconds": round(seconds, 1)}


def gold_spans(lexicon: Lexicon, documents: Sequence[Document],
               choose: Callable[[Lexicon, str, str], str] = gene_choice.choose_gene, species: bool = True) -> dict:
    """Accuracy of the gene chosen for each gold span's text (the text's species unless ``species`` is False)."""
    gold = gold_genes(documents)
    by_pmid = {d.pmid: d for d in documents}
    found = {pmid: dominant_species(text_species(d.text)) if species else "" for pmid, d in by_pmid.items()}
    right = linked = unknown = known = right_known = 0
    wrong: Counter[tuple[str, str, str]] = Counter()
    for (pmid, start, end), ids in gold.items():
        concept = choose(lexicon, by_pmid[pmid].text[start:end], found[pmid])
        linked += bool(concept)
        unknown += not concept
        right += concept in ids
        # the gold gene has at least one name in the dictionaries: a choice could reach it
        reachable = any(lexicon.names("gene", i) for i in ids)
        known += reachable
        right_known += reachable and concept in ids
        if concept and concept not in ids:
            wrong[(by_pmid[pmid].text[start:end], ",".join(sorted(ids)), concept)] += 1
    return {"mentions": len(gold), "acc1": round(right / max(1, len(gold)), 4), "linked": linked,
            "no_exact_name": unknown, "precision_of_linked": round(right / max(1, linked), 4),
            "gold_gene_in_dictionaries": round(known / max(1, len(gold)), 4),
            "acc1_where_gold_gene_in_dictionaries": round(right_known / max(1, known), 4),
            "most_common_wrong": [[*key, n] for key, n in wrong.most_common(15)]}


def _no_family(lexicon: Lexicon, name: str, species: str) -> str:
    concepts = [c for _, c in lexicon.lookup(name, "gene") if not is_family(c)]
    if len(concepts) < 2:
        return concepts[0] if concepts else ""
    return gene_choice.choose_gene(_GenesOnly(lexicon), name, species)


class _GenesOnly:
    """A lexicon view whose lookups leave family concepts out (the no-family ablation)."""

    def __init__(self, lexicon: Lexicon) -> None:
        self._lexicon = lexicon

    def lookup(self, name: str, kind: str | None = None):
        return [(k, c) for k, c in self._lexicon.lookup(name, kind) if not is_family(c)]

    def __getattr__(self, attribute: str):
        return getattr(self._lexicon, attribute)


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "entities", data_dir=True)
    parser.add_argument("--test", action="store_true", help="also BioRED Test (read once, for the final figures)")
    args = parser.parse_args(argv)
    data: Path = args.data_dir
    started = time.perf_counter()
    corpora = load_corpora(data)
    lexicon, info = train_lexicon(data, corpora)
    baseline = Lexicon(lexicon.entries())  # the dictionaries before the corpus names (one record per name)
    learned = [s for path in CORPUS_FILES for s in corpus_gene_synonyms(data / path)]
    lexicon.add(learned)
    nlm_dev = [d for d in read_annotated(data / CORPUS_FILES[1]) if is_dev(d.pmid)]
    gnorm_dev = [d for d in read_annotated(data / CORPUS_FILES[0]) if is_dev(d.pmid)]
    parts = {"biored_dev": list(corpora.dev.documents), "nlmgene_dev": nlm_dev, "gnormplus_dev": gnorm_dev}
    if args.test:
        parts["biored_test"] = list(corpora.biored_test.documents)
    setup = time.perf_counter() - started
    print(f"setup {setup:.0f} s; {len(learned)} corpus gene names")

    spans: dict[str, dict] = {}
    for split, documents in parts.items():
        spans[split] = {
            "chosen": gold_spans(lexicon, documents),
            "without_corpus_names": gold_spans(baseline, documents),
            "without_species": gold_spans(lexicon, documents, species=False),
            "without_families": gold_spans(lexicon, documents, _no_family),
        }
        print(split, {k: v["acc1"] for k, v in spans[split].items()})
    matcher = Matcher(lexicon)
    annotator = Annotator(matcher, load_recogniser(SHIPPED))
    ends = {split: end_to_end(annotator, documents) for split, documents in parts.items()}
    for split, figures in ends.items():
        print(split, figures["mention"], figures["document"]["f1"])
    goals = {name: goal(ends[split]["mention"]["f1"], target, ">=") for name, (split, target) in GOALS.items()}
    section = {
        "date": scaffold.now(),
        "test_read": args.test,
        "dev_split": "GNormPlus / NLM-Gene Train documents whose PMID's SHA-256 first byte is 0 mod 5 "
                     "(curation.entities.corpus_genes.is_dev); left out of the corpus names",
        "annotator": "served: shipped recogniser + dictionaries, default per-kind policy, no trained linker",
        "corpus_gene_names": len(learned),
        "families": len({s.concept_id for s in learned if is_family(s.concept_id)}),
        "dictionary_sizes": info["sizes"].get("gene"),
        "end_to_end": ends, "gold_spans": spans, "goal_values": {k: v["value"] for k, v in goals.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    scaffold.write(args.out, section, section="gene_norm", goals=goals)  # other scripts' sections kept
    scaffold.print_goals(goals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
