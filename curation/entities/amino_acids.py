"""Amino-acid names: three-letter codes, full names and one-letter codes, shared by the variant and PTM grammars."""

from __future__ import annotations

AA3 = {
    "ala": "A", "arg": "R", "asn": "N", "asp": "D", "cys": "C", "gln": "Q", "glu": "E",
    "gly": "G", "his": "H", "ile": "I", "leu": "L", "lys": "K", "met": "M", "phe": "F",
    "pro": "P", "ser": "S", "thr": "T", "trp": "W", "tyr": "Y", "val": "V", "sec": "U",
    "ter": "*",
}  # fmt: skip
AA_NAMES = {
    "alanine": "A", "arginine": "R", "asparagine": "N", "aspartate": "D", "aspartic acid": "D",
    "cysteine": "C", "glutamine": "Q", "glutamate": "E", "glutamic acid": "E", "glycine": "G",
    "histidine": "H", "isoleucine": "I", "leucine": "L", "lysine": "K", "methionine": "M",
    "phenylalanine": "F", "proline": "P", "serine": "S", "threonine": "T", "tryptophan": "W",
    "tyrosine": "Y", "valine": "V",
}  # fmt: skip
AA1 = "ACDEFGHIKLMNPQRSTVWY"
