"""``python -m curation screen``: the learner simulated on a curator's own graded topics; bad files refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.cli import main

FIXTURES = Path(__file__).parents[2] / "fixtures"
# BRAF abstracts: the ones that state a response to a drug are relevant; the rest mention BRAF only.
RELEVANT = [(f"{100 + i}", f"BRAF V600E melanoma responds to vemurafenib, trial {i}",
             "Patients with BRAF V600E melanoma responded to vemurafenib treatment with tumour shrinkage.")
            for i in range(6)]
OTHER = [(f"{200 + i}", f"BRAF expression in tissue survey {i}",
          "BRAF transcripts were measured in normal tissue by sequencing; no treatment was given.")
         for i in range(14)]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-screen")
    corpus = folder / "corpus.jsonl"
    # The relevant ones come last in the corpus, so the static order does not already put them first.
    corpus.write_text("".join(json.dumps({"pmid": p, "title": t, "abstract": a}) + "\n"
                              for p, t, a in OTHER + RELEVANT))
    path = folder / "s.duckdb"
    assert main(["ingest-kb", "civic", str(FIXTURES / "civic" / "current.tsv"), "--db", str(path)]) == 0
    assert main(["ingest-corpus", "jsonl", str(corpus), "--db", str(path)]) == 0
    return path


@pytest.fixture
def screen(db, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))  # no version: BM25 serves
    capsys.readouterr()

    def run(lines: list[object], *args: str) -> tuple[int, str, str]:
        topics = tmp_path / "topics.jsonl"
        topics.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
        code = main(["screen", str(topics), "--db", str(db), *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_screen_simulates_the_learner_and_the_static_order(screen, tmp_path):
    gold = {p: "complete" for p, _, _ in RELEVANT} | {"200": "not_relevant", "999": "partial"}
    out_file = tmp_path / "orders.json"
    code, out, err = screen([{"id": "braf", "schema": "PO", "entities": {"Gene": "BRAF"}, "gold": gold}],
                            "--json", str(out_file), "--mode", "bm25")
    assert code == 0, err
    assert "static" in out and "learner" in out and "not among the candidates" in out
    [record] = json.loads(out_file.read_text())
    assert record["candidates"] == 20 and record["relevant_in_candidates"] == 6
    assert record["relevant_not_found"] == ["999"]
    for which in ("static", "learner"):
        assert sorted(record[which]["order"]) == sorted(p for p, _, _ in RELEVANT + OTHER)
    assert record["learner"]["atd"] <= record["static"]["atd"]


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "line 1"),
    ({"schema": "PO", "entities": {"Gene": "BRAF"}, "gold": {"1": "great"}}, "grade 'great'"),
    ({"schema": "PO", "entities": {"Gene": "BRAF"}, "gold": {"1": "not_relevant"}}, "no relevant abstract"),
    ({"schema": "PO", "entities": {"Gene": "BRAF"}, "gold": {"1": 2}, "extra": 1}, "extra"),
    ({"schema": "Nope", "entities": {"Gene": "BRAF"}, "gold": {"1": 2}}, "unknown schema"),
    ({"schema": "PO", "gold": {"1": 2}}, "entities"),
])
def test_bad_topic_files_stop_with_their_line(screen, line, message, tmp_path):
    code, out, err = screen([line])
    assert code == 2 and message in err and err.count("\n") == 1 and out == ""
