"""``python -m curation annotate``: text, JSONL and PubTator in; PubTator or JSONL out; bad input named."""

from __future__ import annotations

import json

import pytest

from curation.cli import main
from curation.entities.annotation import Annotator
from curation.entities.batch_annotation import annotate_corpus, to_jsonl, to_pubtator
from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.errors import InputError
from curation.ingest.annotation_inputs import read_inputs
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.store.annotations import get_active_entity_model
from curation.store.base import stats
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb


@pytest.fixture
def db(tmp_path, fixtures):
    path = tmp_path / "store.duckdb"
    con = open_store(path)
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    con.close()
    return path


def test_inputs_of_every_format(fixtures):
    folder = fixtures / "annotate"
    docs = read_inputs([folder / "abstracts.txt", folder / "documents.jsonl", fixtures / "pubtator" / "small.PubTator"])
    assert [d.pmid for d in docs] == ["abstracts_1", "abstracts_2", "1000101", "note-7", "1000001", "1000002"]
    # A block's line break becomes one space: offsets still count into the original block.
    assert docs[0].text == "BRAF V600E mutant melanoma responded to vemurafenib. A second line of the same document."
    assert (docs[2].title, docs[3].title) == ("BRAF V600E in melanoma", "")
    assert docs[3].abstract == "Cisplatin nephrotoxicity"
    assert not docs[4].mentions  # the input's own annotations are not copied
    with pytest.raises(InputError, match=r"bad.jsonl, line 2: not valid JSON"):
        read_inputs([folder / "bad.jsonl"])
    with pytest.raises(InputError, match="already used"):
        read_inputs([folder / "documents.jsonl", folder / "documents.jsonl"])
    with pytest.raises(InputError, match="file not found"):
        read_inputs([folder / "nope.txt"])


def test_pubtator_output_reads_back_with_confidence_and_source(con, fixtures, tmp_path):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    annotator = Annotator(Matcher(build_lexicon(con)))
    corpus = annotate_corpus(read_inputs([fixtures / "annotate" / "documents.jsonl"]), annotator)
    out = tmp_path / "out.PubTator"
    out.write_text(to_pubtator(corpus))
    lines = [line.split("\t") for line in out.read_text().splitlines() if line.startswith("1000101\t")]
    assert ["1000101", "0", "4", "BRAF", "GeneOrGeneProduct", "BRAF", "1.000", "dictionary"] in lines
    assert ["1000101", "5", "10", "V600E", "SequenceVariant", "V600E", "1.000", "rule"] in lines
    # This project's reader takes PubMed ids only ("note-7" is skipped); the offsets of the rest read back.
    (doc,) = [d for d in read_pubtator(out, Problems(out, lenient=True)) if d.pmid == "1000101"]
    found = {(m.text, m.type) for m in doc.mentions}
    assert found >= {("BRAF", "GeneOrGeneProduct"), ("Vemurafenib", "ChemicalEntity")}
    rows = [json.loads(line) for line in to_jsonl(corpus).splitlines()]
    first = rows[0]
    assert first["id"] == "1000101" and first["title"] == "BRAF V600E in melanoma"
    for a in first["annotations"]:
        assert first["text"][a["start"] : a["end"]] == a["text"] and 0 <= a["confidence"] <= 1


def test_cli_writes_atomically_and_names_bad_input(db, fixtures, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    status = main(["annotate", str(fixtures / "annotate" / "abstracts.txt"), "--db", str(db),
                   "--output-format", "jsonl", "--out", str(out)])
    assert status == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["abstracts_1", "abstracts_2"]
    assert {(a["text"], a["type"]) for a in rows[0]["annotations"]} >= {("BRAF", "gene"), ("V600E", "variant")}
    assert "no recogniser trained" in capsys.readouterr().err
    before = out.read_text()
    status = main(["annotate", str(fixtures / "annotate" / "documents.jsonl"), str(fixtures / "annotate" / "bad.jsonl"),
                   "--db", str(db), "--out", str(out)])
    assert status == 2
    assert "bad.jsonl, line 2" in capsys.readouterr().err
    assert out.read_text() == before  # nothing half-written
    status = main(["annotate", str(fixtures / "annotate" / "abstracts.txt"), "--db", str(db),
                   "--recogniser", str(tmp_path / "no-such-model"), "--out", str(tmp_path / "x.txt")])
    assert status == 2 and not (tmp_path / "x.txt").exists()
    assert "no-such-model: no such folder" in capsys.readouterr().err


def test_cli_activate_refuses_a_bad_folder_and_reannotate_fills_the_index(db, tmp_path, capsys):
    bad = tmp_path / "bad-model"
    bad.mkdir()
    (bad / "manifest.json").write_text('{"format": "recogniser/0"}')
    assert main(["activate-recogniser", str(bad), "--db", str(db)]) == 2
    assert "bad-model" in capsys.readouterr().err
    assert main(["reannotate", "--db", str(db)]) == 0
    assert "2 documents annotated" in capsys.readouterr().out
    con = open_store(db)
    try:
        assert get_active_entity_model(con, "recogniser") is None
        assert stats(con)["annotated_documents"] == 2
    finally:
        con.close()
    assert main(["reannotate", "--db", str(db)]) == 0
    assert "0 documents annotated" in capsys.readouterr().out


def test_activate_linker_refuses_a_folder_that_is_not_a_linker_and_changes_nothing(db, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["activate-linker", str(tmp_path / "empty"), "--db", str(db)]) == 2
    assert "error:" in capsys.readouterr().err
    con = open_store(db)
    assert get_active_entity_model(con, "linker") is None
    con.close()
    assert main(["activate-linker", "--off", "--db", str(db)]) == 0
