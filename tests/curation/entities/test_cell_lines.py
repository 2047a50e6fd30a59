"""Cell-line names: found by shape and context, never a chemical (or another name) inside them."""

from __future__ import annotations

import pytest

from curation.config import Settings
from curation.entities.cell_lines import find_cell_lines, is_code
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.ingest.problems import Problems
from curation.records import Synonym


def _names(text: str) -> list[str]:
    return [c.text for c in find_cell_lines(text)]


def test_codes_said_of_cells_are_cell_lines():
    assert _names("Growth of MDA-MB-231 breast cancer cells was inhibited.") == ["MDA-MB-231"]
    assert _names("in the cell lines MCF-7, T47D and MDA-MB-468, as compared") == ["MCF-7", "T47D", "MDA-MB-468"]
    assert _names("knock down of MCM8 in PC3, DU145 and LNCaP cells induced arrest") == ["PC3", "DU145", "LNCaP"]
    assert _names("epithelial cell (HK-2) model in vitro") == ["HK-2"]
    assert _names("HCT116 xenografts grew slowly") == ["HCT116"]


def test_drugs_genes_and_variants_beside_cells_are_not_cell_lines():
    assert _names("PLX4720 treated cells died, and HER2-positive cells grew.") == []
    assert _names("CCR2 positive cells were counted in vemurafenib-treated cells") == []
    assert _names("peripheral blood mononuclear cells (PBMCs) were isolated") == []
    assert [is_code(w) for w in ("SH-SY5Y", "NCI-H1975", "EGFR-mutant", "BRAF", "V600E")] == [True, True, False,
                                                                                                False, True]


def test_a_name_inside_a_cell_line_is_no_chemical_but_the_name_alone_is():
    # "MDA" is a DrugBank synonym of tenamfetamine; it is also malondialdehyde's abbreviation.
    lexicon = Lexicon([Synonym("DB01509", "chemical", "MDA"), Synonym("DB01509", "chemical", "Tenamfetamine"),
                       Synonym("920", "gene", "CD4"), Synonym("DB00530", "chemical", "erlotinib")])
    matcher = Matcher(lexicon, abbreviations=False)
    text = "Erlotinib inhibited MDA-MB-231 cells and CD4 cells; MDA levels rose."
    found = [(s.text, s.entity_type) for s in matcher.find_all(text)]
    assert found == [("Erlotinib", "chemical"), ("CD4", "gene"), ("MDA", "chemical")]
    lines = [(s.text, s.entity_type) for s in matcher.find_all(text, ["cellline", "chemical"])]
    assert ("MDA-MB-231", "cellline") in lines and ("MDA", "chemical") in lines


def _biored_documents():
    from curation.ingest.pubtator import read_pubtator

    folder = Settings().data_dir / "biored"
    files = [folder / f"{split}.PubTator" for split in ("Train", "Dev", "Test")]
    if not all(f.exists() for f in files):
        pytest.skip(f"BioRED not found under {folder}")
    return [d for f in files for d in read_pubtator(f, Problems(f))]


def _drugbank_matcher() -> Matcher:
    from curation.entities.synonyms import drugbank_synonyms

    drugbank = Settings().data_dir / "dicts" / "drugbank_vocabulary.csv"
    if not drugbank.exists():
        pytest.skip(f"no DrugBank vocabulary at {drugbank}")
    return Matcher(Lexicon(list(drugbank_synonyms(drugbank))), abbreviations=False)


def test_biored_cell_lines_are_found_and_no_drugbank_name_is_linked_inside_one():
    """Real text: BioRED's gold CellLine mentions against the rule and against the DrugBank vocabulary's names."""
    documents = [d for d in _biored_documents() if any(m.type == "CellLine" for m in d.mentions)]
    gold = [(d, m) for d in documents for m in d.mentions if m.type == "CellLine"]
    found = {d.pmid: find_cell_lines(d.text) for d in documents}
    hit = sum(any(c.start < m.end and m.start < c.end for c in found[d.pmid]) for d, m in gold)
    claimed = [(d, c) for d in documents for c in found[d.pmid]]
    right = sum(any(c.start < m.end and m.start < c.end for m in d.mentions if m.type == "CellLine")
                for d, c in claimed)
    assert hit / len(gold) >= 0.5 and right / len(claimed) >= 0.85  # measured 102 of 175; 102 of 105 are gold
    matcher = _drugbank_matcher()
    inside = [(m.text, s.text) for d, m in gold for s in matcher.find_all(d, ["chemical"])
              if m.start <= s.start and s.end <= m.end and any(c.start <= s.start and s.end <= c.end
                                                                for c in found[d.pmid])]
    assert inside == []


def test_hoc_mda_mb_lines_are_not_tenamfetamine(monkeypatch):
    """Real text: HoC abstracts naming MDA-MB-231 and its kin, where DrugBank's "MDA" (tenamfetamine) matched
    inside every one until cell lines took their stretch."""
    import curation.entities.matching as matching
    from curation.ingest.jsonl import read_jsonl

    path = Settings().data_dir / "hoc" / "hoc_abstracts.jsonl"
    if not path.exists():
        pytest.skip(f"HoC not found at {path}")
    documents = [d for d in read_jsonl(path, Problems(path)) if "MDA-MB-" in d.text]
    matcher = _drugbank_matcher()

    def tenamfetamine() -> list[str]:
        return [s.text for d in documents for s in matcher.find_all(d, ["chemical"]) if s.concept == "DB01509"]

    assert len(documents) >= 20 and tenamfetamine() == []
    assert any(s.text.startswith("MDA-MB-") for d in documents for s in matcher.find_all(d, ["cellline"]))
    monkeypatch.setattr(matching, "cell_line_hits", lambda text: [])
    matcher._cache.clear()  # the same analyses, settled without the rule
    assert len(tenamfetamine()) >= 20
