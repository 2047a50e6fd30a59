from __future__ import annotations

import json

import pytest

from curation.errors import InputError
from curation.ingest.jsonl import read_jsonl
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator


def test_pubtator_documents_mentions_relations_and_repeats(fixtures):
    docs = list(read_pubtator(fixtures / "pubtator" / "small.PubTator", Problems("small")))
    assert [d.pmid for d in docs] == ["1000001", "1000002"]
    braf = docs[0]
    assert braf.text == "BRAF V600E in melanoma. Vemurafenib inhibits BRAF (V600E) kinase."
    # The repeated block adds its one new mention; the repeated one is not duplicated.
    assert [(m.start, m.text, m.type) for m in braf.mentions] == [
        (0, "BRAF", "GeneOrGeneProduct"), (5, "V600E", "SequenceVariant"), (24, "Vemurafenib", "ChemicalEntity"),
        (45, "BRAF", "GeneOrGeneProduct"),
    ]
    assert all(braf.text[m.start : m.end] == m.text for m in braf.mentions)
    assert [(r.type, r.concept1, r.novelty) for r in braf.relations] == [("Association", "D000077484", "Novel")]
    assert docs[1].relations[0].type == "CID" and docs[1].source == "small"


@pytest.mark.parametrize(
    ("content", "line", "field", "message"),
    [
        ("1|t|Title\n1|a|Abstract\n1\t0\t5\tTitlX\tGene\t7\n", 1, "offsets", "does not match"),
        ("1|t|Title\n1|a|Abstract\n2\t0\t5\tTitle\tGene\t7\n", 3, "pmid", "outside that document"),
        ("abc|t|Title\n", 1, "pmid", "expected 'PMID|t|title'"),
        ("1|t|Title\n\n", 1, "abstract", "no |a| line"),
        ("1|t|A\n1|a|B\n\n1|t|A\n1|a|C\n", 4, "abstract", "different text"),
        ("1|t|Title\n1|a|Abstract\n1\t3\t2\tx\tGene\t7\n", 3, "end", "not after start"),
    ],
)
def test_pubtator_bad_input(tmp_path, content, line, field, message):
    path = tmp_path / "bad.PubTator"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        list(read_pubtator(path, Problems(path)))
    assert (info.value.line, info.value.field) == (line, field)


def test_jsonl_accepts_title_abstract_and_hoc_text(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [{"pmid": "11", "title": "T", "abstract": "A ( b ) ."},
             {"pmid": 12, "text": "BRAF ( V600E ) , in the cell 's nucleus [ P &lt ; 0.05 ; 12 % ] ."}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    docs = list(read_jsonl(path, Problems(path)))
    # HoC's tokenised text is put back as written; an abstract field is kept as it is
    assert [(d.pmid, d.title, d.abstract) for d in docs] == [
        ("11", "T", "A ( b ) ."), ("12", "", "BRAF (V600E), in the cell's nucleus [P < 0.05; 12%].")]


@pytest.mark.parametrize(
    ("line2", "field", "message"),
    [
        ('{"pmid": "11", "abstract": "again"}', "pmid", "already appeared on line 1"),
        ('{"pmid": "x1", "abstract": "A"}', "pmid", "not a PubMed id"),
        ('{"pmid": "13", "abstract": "  "}', "abstract", "empty abstract"),
        ('{"pmid": "13", "abstract": ', None, "not valid JSON"),
        ('["13"]', None, "JSON object"),
    ],
)
def test_jsonl_bad_lines(tmp_path, line2, field, message):
    path = tmp_path / "c.jsonl"
    path.write_text('{"pmid": "11", "abstract": "A"}\n' + line2 + "\n")
    with pytest.raises(InputError, match=message) as info:
        list(read_jsonl(path, Problems(path)))
    assert (info.value.line, info.value.field) == (2, field)
