"""What the installed vocabularies add: gold ids the dictionaries can reach, the MeSH kind rule, text matches.

``mesh_reach(data_dir)``: per split (BC5CDR Test and Dev, BioRED Dev; the standard split of
:func:`curation.learning.recogniser.data.load_corpora`, whose held-out documents no dictionary saw) and
per kind (chemical, disease), the share of gold mention ids (one per mention and id; composite ids
count each part; placeholder ids are no ids) that some dictionary synonym of that kind names:

* ``before``: today's sources: CIViC's KB values, DrugBank, the corpora's training-side gold mentions;
* ``after``: plus the MeSH descriptors (kinds from the training-side gold, then the label rule) and the
  drug vocabulary. MeSH chemicals the product files under a DrugBank id count through
  :func:`curation.entities.vocabularies.mesh_to_drugbank` (the same join).

Ids of other sources (DrugBank's, CIViC's names) never equal a MeSH id, so "before" is the training-side
gold. Supplementary MeSH records ("C" ids) are in none of the installed sources (``supplementary``).

``mesh_kind_rule(data_dir)``: the rule of :mod:`curation.entities.mesh_kinds` on the gold ids the training
side does not place. ``mesh_text_effect(data_dir)``: exact-span precision / recall of the dictionary matcher
on BC5CDR Dev and BioRED Dev, before and after, with and without the measured name filter.

Usage::

    python -m bench._vocabularies [--data-dir D] [--text]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from curation.config import load_settings
from curation.entities.lexicon import is_placeholder_id
from curation.entities.mesh_kinds import CHEMICAL, descriptor_kind
from curation.entities.synonyms import PUBTATOR_KINDS, drugbank_synonyms, kb_synonyms, mention_synonyms
from curation.entities.vocabularies import (
    drug_ner_synonyms,
    gold_kinds,
    installed,
    mesh_file,
    mesh_rows,
    mesh_synonyms,
    mesh_to_drugbank,
    package_version,
)
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.learning.recogniser.data import Corpora, CorpusPart, load_corpora
from curation.records import Synonym
from curation.schemas import PO

KINDS = ("chemical", "disease")
GOALS = {"mesh_reachable_share_disease": 0.95, "mesh_reachable_share_chemical": 0.85}


def gold_ids(part: CorpusPart) -> list[tuple[str, str]]:
    """(kind, id) per chemical / disease gold mention and id part; placeholders dropped."""
    out = []
    for document in part.documents:
        for mention in document.mentions:
            kind = PUBTATOR_KINDS.get(mention.type)
            if kind in KINDS:
                out += [(kind, p.strip()) for p in re.split(r"[,|;]", mention.concept_id or "")
                        if not is_placeholder_id(p)]
    return out


def _splits(corpora: Corpora) -> dict[str, CorpusPart]:
    return {"bc5cdr_test": corpora.bc5cdr_test, "bc5cdr_dev": corpora.bc5cdr_dev, "biored_dev": corpora.dev}


def before_synonyms(data_dir: Path, corpora: Corpora) -> list[Synonym]:
    """Today's sources: CIViC values, DrugBank, the training-side gold mentions."""
    civic_path = data_dir / "civic" / "civic_evidence_2026-05.tsv"
    synonyms = kb_synonyms(list(read_civic(civic_path, Problems(civic_path))), PO)
    synonyms += drugbank_synonyms(data_dir / "dicts" / "drugbank_vocabulary.csv")
    return synonyms + mention_synonyms(m for part in corpora.train for d in part.documents for m in d.mentions)


def _train_kinds(corpora: Corpora) -> dict[str, str]:
    return gold_kinds(m for part in corpora.train for d in part.documents for m in d.mentions)


def vocabulary_synonyms(corpora: Corpora) -> tuple[list[Synonym], dict[str, str]]:
    """The installed vocabularies' synonyms as the product ingests them (MeSH kinds from the training
    side only), and the MeSH -> DrugBank join. Empty where a package is missing."""
    join = mesh_to_drugbank()
    synonyms = list(mesh_synonyms(known=_train_kinds(corpora), drugbank=join)) if installed("mesh") else []
    return synonyms + (list(drug_ner_synonyms()) if installed("drug-ner") else []), join


def _named(synonyms: list[Synonym], join: dict[str, str]) -> set[tuple[str, str]]:
    named = {(s.entity_type, s.concept_id) for s in synonyms}
    # A MeSH chemical filed under a DrugBank id is reached through that id.
    return named | {(CHEMICAL, mesh) for mesh, drug in join.items() if (CHEMICAL, drug) in named}


def mesh_reach(data_dir: str | Path, corpora: Corpora | None = None) -> dict:
    """Share of gold ids named before / after the vocabularies, per split and kind, with ``goal_values``."""
    data_dir = Path(data_dir)
    corpora = corpora or load_corpora(data_dir)
    before = _named(before_synonyms(data_dir, corpora), {})
    added, join = vocabulary_synonyms(corpora)
    after = before | _named(added, join)
    splits: dict[str, dict] = {}
    for split, part in _splits(corpora).items():
        ids = gold_ids(part)
        splits[split] = {}
        for kind in KINDS:
            mine = [i for k, i in ids if k == kind]
            supplementary = [i for i in mine if i.startswith("C")]
            splits[split][kind] = {
                "mention_ids": len(mine),
                "before": round(sum((kind, i) in before for i in mine) / max(1, len(mine)), 4),
                "after": round(sum((kind, i) in after for i in mine) / max(1, len(mine)), 4),
                "supplementary_share": round(len(supplementary) / max(1, len(mine)), 4),
                "unreachable_after": sum((kind, i) not in after for i in mine),
            }
    return {
        "splits": splits,
        "vocabularies": {kind: package_version(kind) for kind in ("mesh", "drug-ner") if installed(kind)},
        "mesh_drugbank_join": len(join),
        "supplementary": supplementary_sources(),
        "goal_values": {f"mesh_reachable_share_{kind}": splits["bc5cdr_test"][kind]["after"] for kind in KINDS},
        "goals": GOALS,
    }


def supplementary_sources() -> dict:
    """Whether an installed source holds MeSH supplementary ("C") records: the MeSH CSV's C rows."""
    rows = list(mesh_rows(mesh_file())) if installed("mesh") else []
    return {"mesh_csv_rows": len(rows), "mesh_csv_supplementary_rows": sum(d.startswith("C") for d, _ in rows)}


def mesh_kind_rule(data_dir: str | Path, corpora: Corpora | None = None) -> dict:
    """The label rule (and the drug-name join) on the gold ids the training side does not place:
    distinct ids per split and kind, placed right, placed wrong, left out."""
    corpora = corpora or load_corpora(Path(data_dir))
    known = _train_kinds(corpora)
    labels = dict(mesh_rows(mesh_file()))
    join = mesh_to_drugbank()
    out: dict[str, dict] = {}
    for split, part in _splits(corpora).items():
        tally: Counter[tuple[str, str]] = Counter()
        for kind, descriptor in set(gold_ids(part)):
            if descriptor in known or descriptor not in labels:
                continue
            got = descriptor_kind(descriptor, labels[descriptor], {}) or (CHEMICAL if descriptor in join else None)
            tally[(kind, "right" if got == kind else "left_out" if got is None else "wrong")] += 1
        out[split] = {kind: {o: tally[(kind, o)] for o in ("right", "wrong", "left_out")} for kind in KINDS}
    return out


def mesh_text_effect(data_dir: str | Path, corpora: Corpora | None = None) -> dict:
    """Exact-span P/R/F1 of the dictionary matcher on BC5CDR Dev (chemical, disease) and BioRED Dev (those and
    genes, which drug names could take): before, after without the name filter, after with it (names measured
    usually wrong on the training side left out, as the product does)."""
    from bench.matching import measured_exclusions, score
    from curation.entities.lexicon import Lexicon
    from curation.entities.matching import Matcher

    data_dir = Path(data_dir)
    corpora = corpora or load_corpora(data_dir)
    before = before_synonyms(data_dir, corpora)
    after = before + vocabulary_synonyms(corpora)[0]
    biored, bc5cdr = (list(p.documents) for p in corpora.train)
    parts = {"bc5cdr_dev": (corpora.bc5cdr_dev, KINDS), "biored_dev": (corpora.dev, (*KINDS, "gene"))}
    out: dict[str, dict] = {}
    for name, synonyms, filtered in (("before", before, True), ("after_unfiltered", after, False),
                                     ("after", after, True)):
        exclude = measured_exclusions(synonyms, biored, bc5cdr, min_hits=2, max_precision=0.5) if filtered else {}
        matcher = Matcher(Lexicon(synonyms, exclude=exclude), abbreviations=False, veto=False, shapes=False)
        out[name] = {"excluded_names": sum(len(v) for k, v in exclude.items() if k in KINDS)}
        for split, (part, kinds) in parts.items():
            docs = list(part.documents)
            gold = [(d.pmid, m.start, m.end, PUBTATOR_KINDS.get(m.type)) for d in docs for m in d.mentions
                    if PUBTATOR_KINDS.get(m.type) in kinds]
            found = [(d.pmid, s.start, s.end, s.entity_type) for d in docs for s in matcher.find_all(d, kinds=kinds)]
            out[name][split] = {kind: figures["exact"] for kind, figures in score(found, gold).items()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=load_settings().data_dir)
    parser.add_argument("--text", action="store_true", help="also the text-match effect on BC5CDR Dev (minutes)")
    args = parser.parse_args(argv)
    corpora = load_corpora(args.data_dir)
    result = {"reach": mesh_reach(args.data_dir, corpora), "kind_rule": mesh_kind_rule(args.data_dir, corpora)}
    if args.text:
        result["text"] = mesh_text_effect(args.data_dir, corpora)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
