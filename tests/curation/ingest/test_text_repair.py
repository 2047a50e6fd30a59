"""Text repaired at ingest (ftfy): mojibake undone, gold mention offsets moved with the text."""

from __future__ import annotations

import json

from curation.ingest.jsonl import read_jsonl
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.ingest.repair import repair_document, repair_text, repaired
from curation.records import Document, Mention
from curation.store.corpus import get_documents
from curation.workflows.ingestion import ingest_corpus

MOJIBAKE = ("Î", "Ã", "â\x80")  # UTF-8 read as Latin-1: the lead bytes of Greek letters, accented letters, dashes


def test_mojibake_is_undone_and_good_text_is_kept():
    assert repair_text("TGFÎ²1 and NF-ÎºB") == "TGFβ1 and NF-κB"
    assert repair_text("BRAF V600E") == "BRAF V600E"
    kept = "“curly” quotes, Ｆｕｌｌ width, P &lt; 0.05, TGFβ1, 5 µM"  # none of it is damage
    assert repair_text(kept) == kept


def test_gold_mentions_follow_the_repaired_text():
    title, abstract = "Î²-catenin in CRC", "TGFÎ²1 activates Î²-catenin; BRAF V600E and NF-ÎºB too."
    text = f"{title} {abstract}"
    spans = [("Î²-catenin", 0), ("TGFÎ²1", text.index("TGF")), ("Î²-catenin", text.index("Î²-catenin;")),
             ("BRAF", text.index("BRAF")), ("V600E", text.index("V600E")), ("NF-ÎºB", text.index("NF-"))]
    mentions = tuple(Mention("1", s, s + len(t), t, "Gene", "G1") for t, s in spans)
    assert all(text[m.start:m.end] == m.text for m in mentions)
    doc = repair_document(Document("1", title, abstract, mentions=mentions))
    assert (doc.title, doc.abstract) == ("β-catenin in CRC", "TGFβ1 activates β-catenin; BRAF V600E and NF-κB too.")
    assert [m.text for m in doc.mentions] == ["β-catenin", "TGFβ1", "β-catenin", "BRAF", "V600E", "NF-κB"]
    assert all(doc.text[m.start:m.end] == m.text for m in doc.mentions)
    # A mention ending inside a damaged sequence covers the whole repaired letter.
    (half,) = repair_document(Document("1", "", "TGFÎ²1", mentions=(Mention("1", 0, 4, "TGFÎ", "Gene", "G"),))).mentions
    assert (half.start, half.end, half.text) == (0, 4, "TGFβ")
    clean = Document("2", "BRAF", "V600E", mentions=(Mention("2", 0, 4, "BRAF", "Gene", "673"),))
    assert repair_document(clean) is clean


def test_an_ingested_pubtator_file_stores_repaired_text_with_matching_offsets(con, tmp_path):
    title, abstract = "TGFÎ²1 in cancer", "We show that TGFÎ²1 and SMAD4 interact."
    text = f"{title} {abstract}"
    second = text.index("TGFÎ²1", 1)
    lines = [f"7|t|{title}", f"7|a|{abstract}", "7\t0\t6\tTGFÎ²1\tGene\t7040",
             f"7\t{second}\t{second + 6}\tTGFÎ²1\tGene\t7040",
             f"7\t{text.index('SMAD4')}\t{text.index('SMAD4') + 5}\tSMAD4\tGene\t4089", ""]
    path = tmp_path / "mojibake.PubTator"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest_corpus(con, "pubtator", path)
    (doc,) = get_documents(con, ["7"], with_mentions=True)
    assert doc.title == "TGFβ1 in cancer" and "TGFβ1 and SMAD4" in doc.abstract
    assert sorted((m.text, doc.text[m.start:m.end]) for m in doc.mentions) == [
        ("SMAD4", "SMAD4"), ("TGFβ1", "TGFβ1"), ("TGFβ1", "TGFβ1")]


def test_hoc_mojibake_is_repaired_on_the_real_file(data_dir, con, tmp_path):
    hoc = data_dir / "hoc" / "hoc_abstracts.jsonl"
    raw = list(read_jsonl(hoc, Problems(hoc)))
    damaged = [d for d in raw if "TGFÎ²1" in d.abstract]
    assert damaged, "the HoC file no longer carries the mojibake this test checks"
    fixed = {d.pmid: d for d in repaired(raw)}
    for d in damaged:
        assert "TGFβ1" in fixed[d.pmid].abstract and "TGFÎ²1" not in fixed[d.pmid].abstract
    assert not [p for p, d in fixed.items() if any(m in d.abstract for m in MOJIBAKE)]
    # Through the ingest a curator runs: a few of the damaged lines, stored repaired.
    sample = tmp_path / "hoc_sample.jsonl"
    with open(hoc, encoding="utf-8") as source:
        wanted = {d.pmid for d in damaged[:3]}
        sample.write_text("".join(line for line in source if str(json.loads(line)["pmid"]) in wanted))
    ingest_corpus(con, "jsonl", sample)
    stored = get_documents(con, sorted(wanted))
    assert len(stored) == len(wanted) and all("TGFβ1" in d.abstract and "Î" not in d.abstract for d in stored)


def test_the_corpora_with_gold_offsets_need_no_repair(data_dir):
    # BioRED and BC5CDR carry mention offsets; their text is clean, so the repair leaves their annotations as
    # they are (the offset mapping above is for a file that is not).
    files = sorted((data_dir / "biored").glob("*.PubTator")) + sorted((data_dir / "bc5cdr").glob("*.PubTator.txt"))
    assert len(files) == 6
    for path in files:
        docs = list(read_pubtator(path, Problems(path, lenient=True)))
        assert docs and all(repair_document(d) is d for d in docs), path.name
