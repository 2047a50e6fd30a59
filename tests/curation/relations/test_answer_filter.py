"""The answer-kind filter: a Treatment suggestion is a drug or therapy, learned from the KB's Treatment names."""

from __future__ import annotations

import csv
import re

import pytest

from curation.config import Settings
from curation.relations.answer_filter import THRESHOLD, AnswerFilter, choose_on_dev, learn_answer_filter

# The examples of what is no Treatment (the filter never sees this list; it learns from the KB).
REAGENTS = ("Bromide", "Formaldehyde", "Paraffin", "Heparin", "Guanosine Triphosphate", "GTP", "Vitamin D",
            "Tenamfetamine", "Water", "Ethanol", "Sodium Chloride", "Dimethyl Sulfoxide")


def test_the_kb_says_so_wins_and_a_candidate_is_kept_when_one_of_its_ids_is():
    only_drugbank = AnswerFilter("Treatment", "drugbank", frozenset({"D000077484"}))
    assert only_drugbank.keep("D000077484", "Vemurafenib")  # the KB names it: kept whatever the rule says
    assert only_drugbank.keep("DB00530", "Erlotinib") and not only_drugbank.keep("D006160", "GTP")
    assert only_drugbank.keep_many([(["D006160"], "GTP"), (["D006160", "DB00530"], "erlotinib"), ([], "x")]) == [
        False, True, False]


def _civic_and_corpus_examples() -> list[tuple[str, str, int]]:
    """Without a store: CIViC's therapies (positives) against the gold chemical names of BC5CDR and BioRED that
    CIViC does not list (negatives), the split the filter learns from in a loaded store."""
    data = Settings().data_dir
    civic = data / "civic" / "civic_evidence_2026-05.tsv"
    corpora = [*sorted((data / "bc5cdr").glob("*.PubTator.txt")), *sorted((data / "biored").glob("*.PubTator"))]
    if not civic.exists() or not corpora:
        pytest.skip(f"CIViC or the corpora not found under {data}")
    with civic.open(newline="", encoding="utf-8") as handle:
        therapies = {p.strip() for row in csv.DictReader(handle, delimiter="\t")
                     for p in re.split(r"[,+]", row["therapies"] or "") if len(p.strip()) > 1}
    known = {t.casefold() for t in therapies}
    chemicals: dict[str, str] = {}
    for path in corpora:
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = line.split("\t")
            if len(cells) >= 6 and cells[4] in ("Chemical", "ChemicalEntity") and cells[3].casefold() not in known:
                chemicals.setdefault(cells[3].casefold(), cells[5].split("|")[0])
    return [("", t, 1) for t in sorted(therapies)] + [(cid, name, 0) for name, cid in sorted(chemicals.items())]


def test_learned_from_civic_it_keeps_drugs_and_leaves_out_reagents():
    examples = _civic_and_corpus_examples()
    dev = choose_on_dev(examples)
    chosen = dev[f"learned@{THRESHOLD:.2f}"]
    assert chosen["precision"] >= 0.8 and chosen["f1"] >= 0.6, dev
    treatment = learn_answer_filter(examples, frozenset(), "Treatment")
    assert not any(treatment.keep_many([([""], name) for name in REAGENTS]))
    unseen = ("Zanubrutinib", "Tucatinib", "Asciminib", "Ripretinib", "Avapritinib", "Fruquintinib",
              "Acalabrutinib", "Momelotinib", "Tarlatamab", "Belzutifan")  # drugs in neither CIViC nor the corpora
    assert sum(treatment.keep_many([([""], name) for name in unseen])) >= 8
