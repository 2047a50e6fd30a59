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


GOOD = "9|t|Good title\n9|a|Good abstract.\n9\t0\t4\tGood\tGene\t7\n"


@pytest.mark.parametrize(
    ("content", "line", "field", "message"),
    [
        ("1|t|Title\n1|a|Abstract\n1\t0\t5\tTitlX\tGene\t7\n", 3, "offsets", "does not match"),
        ("abc|t|Title\n", 1, "pmid", "expected 'PMID|t|title'"),
        ("1|t|Title\n\n", 1, "abstract", "no |a| line"),
        ("1|t|Title\n1|a|Abstract\n1\t3\t2\tx\tGene\t7\n", 3, "end", "not after start"),
        ("1|t|Title\n1|a|Abstract\n1\t0\tx\n", 3, None, "neither a mention"),
    ],
)
def test_a_bad_pubtator_document_is_skipped_and_named_and_the_others_read(tmp_path, content, line, field, message):
    path = tmp_path / "bad.PubTator"
    path.write_text(content + "\n" + GOOD)
    problems = Problems(path)  # strict: a document stands on its own, it never fails the file
    assert [d.pmid for d in read_pubtator(path, problems)] == ["9"]
    (skipped,) = problems.skipped
    where = f"bad.PubTator, line {line}" + (f", field '{field}'" if field else "")
    assert where in skipped and message in skipped and "skipped (its block starts at line 1)" in skipped
    # A file no document can be read from is the one error, naming the first problem.
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        list(read_pubtator(path, Problems(path, lenient=True)))
    assert (info.value.line, info.value.field) == (line, field)
    assert "no document of the file could be read" in str(info.value)


def test_a_case_or_spacing_only_mention_is_kept_with_the_texts_spelling_and_a_warning(tmp_path):
    path = tmp_path / "gnormplus.PubTator"
    text = "1|t|Intersex genes\n1|a|The  SRY gene.\n"
    path.write_text(text + "1\t0\t8\tintersex\tGene\t7\n1\t15\t23\tThe SRY\tGene\t6736\n\n" + GOOD)
    problems = Problems(path)  # strict
    first, _ = read_pubtator(path, problems)
    # the annotation's offsets kept, its text the document's own
    assert [(m.start, m.end, m.text) for m in first.mentions] == [(0, 8, "Intersex"), (15, 23, "The  SRY")]
    assert not problems.skipped
    assert problems.warnings[0] == (f"{path}, line 3, field 'text': PMID 1: mention 'intersex' at 0-8 differs from "
                                    "the text there ('Intersex') only in case or spacing; kept as 'Intersex'")
    assert "line 4" in problems.warnings[1] and "'The SRY' at 15-23" in problems.warnings[1]


def test_a_stray_line_or_a_repeat_with_another_text_leaves_out_that_only(tmp_path):
    path = tmp_path / "c.PubTator"
    path.write_text("1|t|A\n1|a|B\n2\t0\t1\tA\tGene\t7\n\n1|t|A\n1|a|C\n\n" + GOOD)
    problems = Problems(path)
    assert [(d.pmid, d.abstract) for d in read_pubtator(path, problems)] == [("1", "B"), ("9", "Good abstract.")]
    stray, repeat = problems.skipped
    assert "line 3, field 'pmid': annotation for PMID '2' outside that document's block; the line is skipped" in stray
    assert "line 5, field 'abstract'" in repeat and "different text" in repeat and "this copy skipped" in repeat


def test_a_line_that_is_not_utf8_skips_its_document(tmp_path):
    path = tmp_path / "c.PubTator"
    path.write_bytes(b"1|t|A\n1|a|B \xff\n\n" + GOOD.encode())
    problems = Problems(path)
    assert [d.pmid for d in read_pubtator(path, problems)] == ["9"]
    assert "line 2" in problems.skipped[0] and "not UTF-8" in problems.skipped[0] and "PMID 1 skipped" in \
        problems.skipped[0]


def test_nlm_gene_as_ncbi_ships_it_reads_whole_but_one_document(data_dir):
    """NLM-Gene Train has 'ERK' over "Erk" (kept) and 'KRAS' over "atio" (its document skipped)."""
    path = data_dir / "ner_corpora" / "nlmgene" / "NLMgene_Train.PubTator"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    problems = Problems(path)
    docs = {d.pmid: d for d in read_pubtator(path, problems)}
    assert "19430421" not in docs and len(docs) == 408
    assert len(problems.skipped) == 1 and "PMID 19430421" in problems.skipped[0]
    assert any("PMID 20105280: mention 'ERK' at 1441-1444" in w and "('Erk')" in w for w in problems.warnings)
    assert any(m.start == 1441 and m.text == "Erk" for m in docs["20105280"].mentions)


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
