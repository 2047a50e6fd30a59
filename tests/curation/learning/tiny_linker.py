"""Tiny hand-written names for the linker's tests: drugs and genes with their synonyms, as a lexicon, as synonym
sets, and as a data directory laid out like the real one (BioRED, BC5CDR, DrugBank's vocabulary)."""

from __future__ import annotations

from pathlib import Path

from curation.entities.synonyms import Lexicon
from curation.records import Synonym

NAMES = {
    "DB08881": ["Vemurafenib", "PLX4032", "Zelboraf"],
    "DB99999": ["PLX4720"],  # a different tool compound one edit from PLX4032
    "DB00619": ["Imatinib", "Gleevec", "STI571"],
    "DB05773": ["Trastuzumab emtansine", "T-DM1", "Kadcyla"],
    "DB08912": ["Dabrafenib", "Tafinlar"],
    "DB00072": ["Trastuzumab", "Herceptin"],
}
GENES = {"2064": ["ERBB2", "HER2", "HER-2/neu"], "673": ["BRAF", "B-Raf"], "1956": ["EGFR", "ErbB1"]}


def tiny_lexicon() -> Lexicon:
    synonyms = [Synonym(c, "chemical", n, "test", i == 0) for c, names in NAMES.items() for i, n in enumerate(names)]
    synonyms += [Synonym(c, "gene", n, "test", i == 0) for c, names in GENES.items() for i, n in enumerate(names)]
    synonyms.append(Synonym("DB00001", "chemical", "Dabrafenib", "test"))  # an ambiguous name
    return Lexicon(synonyms)


def tiny_sets() -> dict[str, list[str]]:
    """Concept label -> names, as the linker trains on them."""
    return {f"chemical:{c}": n for c, n in NAMES.items()} | {f"gene:{c}": n for c, n in GENES.items()}


def _pubtator(pmid: int, mentions: list[tuple[str, str, str]]) -> str:
    """One PubTator document whose abstract names each (text, type, id) once, with the offsets right."""
    title = f"Document {pmid}"
    abstract = " and ".join(text for text, _, _ in mentions) + "."
    lines = [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
    at = len(title) + 1
    for text, kind, concept in mentions:
        lines.append(f"{pmid}\t{at}\t{at + len(text)}\t{text}\t{kind}\t{concept}")
        at += len(text) + len(" and ")
    return "\n".join(lines) + "\n\n"


def write_tiny_data_dir(folder: Path) -> Path:
    """A data directory the linker's data reads (:data:`curation.learning.linker.data.FILES`), made of the names
    above: drugs under DrugBank ids, genes under NCBI Gene ids."""
    chemical, gene = "ChemicalEntity", "GeneOrGeneProduct"
    train = [(n, chemical, c) for c, names in NAMES.items() for n in names]
    train += [(n, gene, c) for c, names in GENES.items() for n in names]
    dev = [("vemurafinib", chemical, "DB08881"), ("Her-2", gene, "2064"), ("Gleevec", chemical, "DB00619")]
    test = [("imatinib", chemical, "DB00619"), ("B-raf", gene, "673")]
    files = {
        "biored/Train.PubTator": _pubtator(1, train[:8]) + _pubtator(2, train[8:]),
        "biored/Dev.PubTator": _pubtator(3, dev), "biored/Test.PubTator": _pubtator(4, test),
        "bc5cdr/CDR_TrainingSet.PubTator.txt": _pubtator(5, train[:4]),
        "bc5cdr/CDR_DevelopmentSet.PubTator.txt": _pubtator(6, dev[:1]),
        "bc5cdr/CDR_TestSet.PubTator.txt": _pubtator(7, test[:1]),
        "dicts/drugbank_vocabulary.csv": (
            "Column1;Column2\nDrugBank ID;Accession Numbers;Common name;CAS;UNII;Synonyms;Standard InChI Key\n"
            + "".join(f"{c};;{names[0]};;;{' | '.join(names[1:])};\n" for c, names in NAMES.items())),
    }
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    return folder
