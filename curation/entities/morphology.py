"""What a name looks like: a drug or chemical, or a gene product, by its word shape.

Dictionaries miss new compounds ("thioperamide", "7-nitroindazole"), but drug names carry
their class in USAN/INN stems ("-tinib", "-olol", "-azepam"), chemical names in
nomenclature parts ("methyl", "nitro", "-amide") and salts in their last word ("otilonium
bromide"); gene products end in head nouns ("receptor", "kinase", "-ase"). The matcher
uses these shapes for the long forms of abbreviations an abstract defines ("thioperamide
(THP)"), and :func:`find_drug_stems` for drug names on their own.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# USAN / INN stems that name a drug class; all at least four letters, so few English words end so.
DRUG_STEMS = (
    "azepam", "azolam", "barbital", "caine", "cillin", "cycline", "dipine", "floxacin", "oxacin",
    "mycin", "micin", "olol", "alol", "pril", "sartan", "statin", "tinib", "ciclib", "parib",
    "rafenib", "zomib", "profen", "coxib", "thiazide", "triptan", "parin", "vudine", "citabine",
    "ciclovir", "navir", "previr", "buvir", "setron", "tidine", "prazole", "conazole", "dronate",
    "lukast", "gliptin", "glitazone", "gliflozin", "semide", "pamil", "oxetine", "triptyline",
    "pramine", "peridol", "apine", "peridone", "azosin", "terol", "fentanil", "orphine", "curium",
    "curonium", "denafil", "lutamide", "rubicin", "platin", "taxel", "mustine", "trexate",
    "sulfamide", "azoline", "oxazole", "imidazole", "indazole", "quinone", "uracil", "dopa",
    "steride", "vastatin", "amivir", "fibrate", "flurane", "codone", "morphone",
)  # fmt: skip
# Parts of systematic chemical names.
_NOMENCLATURE = (
    "methyl", "ethyl", "propyl", "butyl", "phenyl", "benzyl", "hydroxy", "amino", "nitro",
    "chloro", "fluoro", "bromo", "iodo", "thio", "oxo", "carboxy", "acetyl", "phospho",
    "sulfo", "deoxy", "dihydro", "tetrahydro", "glyc", "chol", "ester", "oside",
)  # fmt: skip
# Last words that make a chemical: salts, acids, classes of compounds.
_CHEMICAL_HEADS = (
    "acid", "bromide", "chloride", "iodide", "fluoride", "sulfate", "sulphate", "phosphate",
    "nitrate", "nitrite", "citrate", "acetate", "hydrochloride", "maleate", "tartrate",
    "fumarate", "succinate", "mesylate", "besylate", "oxide", "peroxide", "carbonate",
    "hydroxide", "glycoside", "alkaloid", "ester", "amide", "amine", "steroid", "sodium",
    "potassium", "calcium",
)  # fmt: skip
_GENE_HEADS = (
    "receptor", "receptors", "kinase", "kinases", "factor", "protein", "proteins", "enzyme",
    "synthase", "transporter", "channel", "ligand", "antigen", "phosphatase", "oxidase",
    "reductase", "dehydrogenase", "transferase", "hydrolase", "protease", "peptidase",
    "isomerase", "ligase", "polymerase", "cyclase", "lipase", "integrin", "cadherin",
    "interleukin", "symporter", "exchanger", "subunit", "homolog", "oncogene", "gene",
)  # fmt: skip
_NOT_CHEMICAL = frozenset({"discipline", "examine", "determine", "routine", "medicine", "decline", "machine"})

_STEM_WORD = re.compile(
    r"(?<![A-Za-z0-9-])(?:[A-Z]?[a-z]{3,}(?:"
    + "|".join(sorted(DRUG_STEMS, key=len, reverse=True))
    + r"))(?![A-Za-z0-9-])"
)


_METALS = "Li|Na|K|Mg|Ca|Ba|Sr|Al|Fe|Zn|Cu|Mn|Co|Ni|Cd|Hg|Pb|Ag|Cs|Rb|Cr|NH4"
_ANIONS = "Cl|Br|I|F|SO4|NO3|NO2|PO4|HPO4|H2PO4|CO3|HCO3|OH|CN|SCN|O"
_COUNT = r"(?:\(\d\)|\d)?"
# Salts and small molecules written as formulas: "CaCl(2)", "NaCl", "MgSO4", "H2O2", "CO2".
_FORMULA = re.compile(
    rf"(?<![A-Za-z0-9])(?:(?:{_METALS}){_COUNT}(?:{_ANIONS}){_COUNT}|H2O2|CO2|H2S|N2O|NaHCO3|KH2PO4)(?![A-Za-z0-9])"
)
# A chemical name followed by the head noun of a protein: "mineralocorticoid receptor",
# "bradykinin B2 receptor", "NO synthase" are genes, not chemicals.
GENE_AFTER_CHEMICAL = re.compile(
    r"(?:\s[A-Z0-9][A-Za-z0-9-]{0,5})?\s(?:receptors?|synthases?|transporters?|kinases?|channels?)\b(?![\s-](?:ant)?agonist|[\s-]inhibit|[\s-]block)"
)
# A target followed by a drug-class noun: "COX-2 inhibitors", "bradykinin receptor
# antagonists", "angiotensin receptor blocker" name chemicals.
CHEMICAL_AFTER_TARGET = re.compile(
    r"(?:[\s-](?:receptor|enzyme|synthase))?[\s-](?:antagonists?|agonists?|inhibitors?|blockers?)\b"
)


class ShapeMention(NamedTuple):
    start: int
    end: int
    text: str


def looks_chemical(name: str) -> bool:
    """Whether a phrase is shaped like a chemical or drug name.

    True for a drug stem ("quetiapine"), a chemical head as last word ("otilonium bromide",
    "retinoic acid") or systematic-name parts in a long word ("monohydroxyethylrutoside",
    "(R)-alpha-methylhistamine", "7-nitroindazole").
    """
    words = re.findall(r"[A-Za-z]+", name.lower())
    if not words or len(words) > 5 or words[-1] in _NOT_CHEMICAL or looks_gene_product(name):
        return False
    last = words[-1]
    if len(last) >= 7 and last.endswith(DRUG_STEMS):
        return True
    if last in _CHEMICAL_HEADS and len(words) >= 2:
        return True
    longest = max(words, key=len)
    return len(longest) >= 9 and any(part in longest for part in _NOMENCLATURE)


def looks_gene_product(name: str) -> bool:
    """Whether a phrase is shaped like a gene product ("T-cell immunoglobulin mucin" is not;
    "angiotensin II type 1a receptor", "neuronal NO synthase", "phosphodiesterase 4D",
    "matrix metalloproteinases" are)."""
    words = re.findall(r"[A-Za-z0-9]+", name.lower())
    while len(words) > 1 and (len(words[-1]) <= 3 or not words[-1].isalpha()):
        words.pop()  # "phosphodiesterase 4D", "interleukin 6": the head comes before the number
    if not words or len(words) > 6:
        return False
    last = words[-1]
    return last in _GENE_HEADS or (
        len(last) >= 8 and last.endswith(("ase", "ases")) and last not in ("disease", "diseases")
    )


def find_formulas(text: str) -> list[ShapeMention]:
    """Salt and small-molecule formulas ("CaCl(2)", "NaCl", "MgSO4", "H2O2")."""
    return [ShapeMention(m.start(), m.end(), m.group(0)) for m in _FORMULA.finditer(text)]


def find_drug_stems(text: str) -> list[ShapeMention]:
    """Single words ending in a drug-class stem ("thioperamide" is not one: "-amide" is too
    common; "quetiapine", "rosuvastatin", "7-nitroindazole" are)."""
    return [ShapeMention(m.start(), m.end(), m.group(0)) for m in _STEM_WORD.finditer(text)]
