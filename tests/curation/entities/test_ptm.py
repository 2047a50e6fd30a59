"""PTM types and modified residues: keys and finding them in text."""

from __future__ import annotations

import pytest

from curation.entities.ptm import find_ptms, find_residues, normalise_ptm, normalise_residue


@pytest.mark.parametrize(
    "text", ["serine 473", "Ser473", "S473", "Ser-473", "Ser 473", "Ser(473)", "pSer473", "pS473", "phospho-Ser473"]
)
def test_residue_forms_share_one_key(text: str) -> None:
    assert normalise_residue(text) == "S473"


@pytest.mark.parametrize("text", ["serine", "V600E", "473", "Xyz 12"])
def test_not_residues(text: str) -> None:
    assert normalise_residue(text) is None


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("phosphorylation", "phosphorylation"),
        ("Phosphorylated", "phosphorylation"),
        ("phosphorylates", "phosphorylation"),
        ("phospho-", "phosphorylation"),
        ("Phosphoserine", "phosphorylation"),
        ("S473 Phosphorylation", "phosphorylation"),
        ("dephosphorylation", "dephosphorylation"),
        ("ubiquitylated", "ubiquitination"),
        ("N-linked (GlcNAc...) asparagine", "glycosylation"),
        ("acetylated", "acetylation"),
        ("sumoylation", "sumoylation"),
    ],
)
def test_ptm_types(text: str, key: str) -> None:
    assert normalise_ptm(text) == key


@pytest.mark.parametrize("text", ["phospholipid", "phosphoinositide", "glucose", ""])
def test_not_ptm_types(text: str) -> None:
    assert normalise_ptm(text) is None


def test_find_residues_and_ptms_in_text() -> None:
    text = "AKT1 is phosphorylated at serine 473 (Ser-473) and Thr308; phospho-AKT; his 2 sons; S473A mutant."
    residues = find_residues(text)
    assert [r.key for r in residues] == ["S473", "S473", "T308"]
    assert [text[r.start : r.end] for r in residues] == ["serine 473", "Ser-473", "Thr308"]
    ptms = find_ptms(text)
    assert [p.key for p in ptms] == ["phosphorylation", "phosphorylation"]
    assert ptms[1].text == "phospho"  # the prefix of "phospho-AKT", without its dash


def test_one_letter_residues_can_be_left_out() -> None:
    assert [r.key for r in find_residues("pY705 and K562 cells")] == ["Y705", "K562"]
    assert find_residues("pY705 and K562 cells", one_letter=False) == []
