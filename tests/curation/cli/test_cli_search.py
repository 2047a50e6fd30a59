"""``python -m curation search``: the Curate page's ranking from a script, with provenance; bad input refused."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from curation.cli import main
from curation.store.base import list_schemas
from curation.store.opening import open_store
from curation.workflows.search import NO_HITS

DOCS = [
    ("21", "Vemurafenib in BRAF V600E melanoma", "BRAF V600E melanoma responds to vemurafenib."),
    ("22", "Dabrafenib and BRAF", "Dabrafenib inhibits BRAF p.Val600Glu kinase."),  # the variant in another notation
    ("23", "Osimertinib for EGFR T790M", "EGFR T790M lung cancer responds to osimertinib."),
    ("24", "Gefitinib in EGFR L858R", "EGFR Leu858Arg tumours respond to gefitinib."),
    ("25", "Sotorasib and KRAS G12C", "KRAS G12C colorectal cancer and sotorasib."),
    ("26", "BRAF V600K", "A BRAF V600K mutation in a melanoma."),  # the gene, another variant
    ("27", "V600E in thyroid", "The V600E change is common in papillary thyroid cancer."),  # the variant alone
    ("28", "Sleep in cats", "Cats sleep most of the day."),
]
LONG = "A" * 1000
FIXTURES = Path(__file__).parents[2] / "fixtures"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-search")
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"pmid": p, "title": t, "abstract": a}) + "\n" for p, t, a in DOCS))
    path = folder / "s.duckdb"
    assert main(["ingest-kb", "civic", str(FIXTURES / "civic" / "current.tsv"), "--db", str(path)]) == 0
    assert main(["ingest-corpus", "jsonl", str(corpus), "--db", str(path)]) == 0
    return path


@pytest.fixture
def search(db, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))  # no version: BM25 serves
    capsys.readouterr()

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["search", "--db", str(db), *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _json(search, *args: str) -> dict:
    code, out, err = search("--json", *args)
    assert code in (0, 1), err
    return json.loads(out)


def test_the_table_shows_the_linked_concepts_and_the_ranked_hits(search):
    code, out, err = search("--schema", "PO", "--entity", "Gene=BRAF", "--entity", "Variant=V600E", "--mode", "bm25")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("PO: Gene=BRAF, Variant=V600E") and "bm25-only" in lines[0]
    concepts = {line.split()[0]: line.split() for line in lines if line.startswith(("  Gene ", "  Variant "))}
    assert concepts["Gene"][1:4] == ["BRAF", "linked", "BRAF"]
    assert concepts["Variant"][1:4] == ["V600E", "linked", "V600E"]
    ranked = [row for row in map(str.split, lines) if len(row) > 2 and row[0].isdigit() and row[2] in ("all", "some")]
    assert [row[0] for row in ranked] == ["1", "2", "3", "4"] and [row[2] for row in ranked] == [
        "all", "all", "some", "some"]
    pmids = [row[1] for row in ranked]
    assert set(pmids[:2]) == {"21", "22"} and set(pmids[2:]) == {"26", "27"}  # every concept first, then some
    assert "concept index" in out and "fused" in out


def test_json_gives_each_concept_as_linked_and_each_hit_with_its_provenance(search):
    record = _json(search, "--schema", "PO", "--entity", "Gene=BRAF", "--entity", "Variant=p.Val600Glu",
                   "--mode", "bm25", "--top", "3")
    assert set(record) >= {"schema", "entities", "query", "mode", "version", "concepts", "groups", "per_concept",
                           "hits", "problems", "notes", "message"}
    assert record["schema"] == "PO" and record["mode"] == "bm25" and record["message"] == ""
    gene, variant = record["concepts"]
    assert (gene["slot"], gene["typed"], gene["status"], gene["canonical"], gene["how"]) == (
        "Gene", "BRAF", "linked", "BRAF", "exact")
    assert variant["ids"] == ["V600E"] and variant["how"] == "notation" and variant["confidence"] == 1.0
    assert {"V600E", "Val600Glu"} <= {f.removeprefix("p.") for f in variant["forms"]}
    assert isinstance(gene["alternatives"], list)
    assert record["groups"]["all"] == 2 and record["per_concept"] == {"Gene": 3, "Variant": 3}
    hits = record["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3] and {h["pmid"] for h in hits[:2]} == {"21", "22"}
    first = hits[0]
    assert set(first) == {"rank", "pmid", "title", "score", "bm25", "dense", "group", "stages", "concepts"}
    assert first["group"] == "all" and first["title"]
    assert [s["stage"] for s in first["stages"]][0] == "concepts" and first["stages"][-1]["stage"] == "fused"
    assert first["stages"][-1]["rank"] == 1
    assert [(c["slot"], c["how"].split(":")[0]) for c in first["concepts"]] == [
        ("Gene", "concept index"), ("Variant", "concept index")]
    assert all("spans" not in c for h in hits for c in h["concepts"])


def test_the_ranking_is_the_curate_pages(search, db):
    from curation.config import load_settings
    from curation.retrieval.result_rows import curate_search
    from curation.workflows.serving import build_matcher, open_served, serving_key

    values = {"Gene": "BRAF", "Variant": "V600E"}
    record = _json(search, "--schema", "PO", "--entity", "Gene=BRAF", "--entity", "Variant=V600E")
    con = open_store(db, read_only=True)
    try:
        engine = open_served(con, load_settings().models_dir, serving_key(con, "PO"))
        schema = {s.name: s for s in list_schemas(con)}["PO"]
        page = curate_search(con, engine, build_matcher(con), schema, values)
    finally:
        con.close()
    assert [(h["pmid"], h["group"]) for h in record["hits"]] == [(r.pmid, r.group) for r in page.rows]
    assert [h["score"] for h in record["hits"]] == pytest.approx([r.fused for r in page.rows])


def test_a_gene_no_document_mentions_gives_no_hits_and_says_so(search):
    code, out, _ = search("--schema", "PO", "--entity", "Gene=XYZQ1", "--mode", "bm25")
    assert code == 1
    assert "No abstract mentions Gene 'XYZQ1'" in out and NO_HITS in out
    record = _json(search, "--schema", "PO", "--entity", "Gene=XYZQ1")
    assert record["hits"] == [] and record["message"] == NO_HITS
    assert any("XYZQ1" in p for p in record["problems"])


def test_a_batch_answers_every_line_in_order_from_one_process(search, tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join([
        json.dumps({"schema": "PO", "entities": {"Gene": "EGFR", "Variant": "Leu858Arg"}, "id": "egfr"}),
        "",  # a blank line is skipped
        json.dumps({"entities": {"Gene": "BRAF", "Variant": "V600E"}, "top": 2}),  # the schema from --schema
        json.dumps({"schema": "PO", "entities": {"Gene": "XYZQ1"}, "id": 7}),
        json.dumps({"schema": "po", "entities": {"gene": "KRAS"}}),  # names as the schema spells them
    ]) + "\n")
    code, out, err = search("--queries", str(queries), "--schema", "PO", "--mode", "bm25")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["line"] for r in records] == [1, 3, 4, 5]
    assert [r.get("id") for r in records] == ["egfr", None, 7, None]
    assert [h["pmid"] for h in records[0]["hits"]][0] == "24"
    assert len(records[1]["hits"]) == 2 and {h["pmid"] for h in records[1]["hits"]} == {"21", "22"}
    assert records[2]["hits"] == [] and records[2]["message"] == NO_HITS
    assert records[3]["entities"] == {"Gene": "KRAS"} and [h["pmid"] for h in records[3]["hits"]] == ["25"]

    out_file = tmp_path / "results.jsonl"
    code, written, err = search("--queries", str(queries), "--schema", "PO", "--mode", "bm25", "--out",
                                str(out_file))
    assert code == 0 and written == "" and "wrote 4 results" in err
    assert out_file.read_text() == out
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize(("args", "message"), [
    (["--schema", "XX", "--entity", "Gene=BRAF"], "--schema: unknown schema 'XX'; this store knows PO, PTM"),
    (["--schema", "PO", "--entity", "Genes=BRAF"], "'Genes' is not a slot of PO; its slots are Gene, Variant"),
    (["--schema", "PO", "--entity", "Treatment=vemurafenib"], "Treatment is what a PO search looks for"),
    (["--schema", "PO", "--entity", "BRAF"], "--entity 'BRAF': write SLOT=NAME, e.g. --entity Gene=BRAF"),
    (["--schema", "PO", "--entity", "Gene="], "--entity Gene: the value is empty"),
    (["--schema", "PO", "--entity", "Gene=  "], "--entity Gene: the value is empty"),
    (["--schema", "PO", "--entity", f"Gene={LONG}"], "Gene: 1,000 characters typed; a name has at most 200"),
    (["--schema", "PO", "--entity", "Gene=BRAF", "--entity", "gene=NRAS"], "Gene is given twice"),
    (["--schema", "PO", "--entity", "Gene=BRAF", "--top", "0"], "--top: 0 hits asked; ask for 1 to 1000"),
    (["--schema", "PO", "--entity", "Gene=BRAF", "--apply", "Variant=V600E"], "Variant is applied but not typed"),
    (["--schema", "PO", "--entity", "Gene=BRFA", "--apply", "Gene=NOPE1"], "no gene concept has the id 'NOPE1'"),
    (["--entity", "Gene=BRAF"], "--schema: give the relation's schema"),
    (["--schema", "PO"], "give the relation with --entity SLOT=NAME"),
])
def test_bad_arguments_say_what_is_wrong_and_write_nothing(search, tmp_path, args, message):
    out_file = tmp_path / "out.json"
    code, out, err = search(*args, "--out", str(out_file))
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert not out_file.exists()


@pytest.mark.parametrize(("lines", "message"), [
    (['{"schema": "PO", "entities": {"Gene": "BRAF"}', ],
     "line 1: not JSON (Expecting ',' delimiter"),
    (['{"schema": "PO", "entities": {"Gene": "BRAF"}}', '[1, 2]'], "line 2: not a JSON object"),
    (['{"entities": {"Gene": "BRAF"}}'], "line 1, field 'schema': missing"),
    (['{"schema": "PO", "entities": {"Gene": "BRAF"}}', '{"schema": "XX", "entities": {"Gene": "BRAF"}}'],
     "line 2, field 'schema': unknown schema 'XX'"),
    (['{"schema": "PO", "entities": {"Genes": "BRAF"}}'], "line 1, field 'entities.Genes': 'Genes' is not a slot"),
    (['{"schema": "PO", "entities": {"Gene": ""}}'], "line 1, field 'entities.Gene': is empty"),
    (['{"schema": "PO", "entities": {"Gene": 7}}'], "line 1, field 'entities.Gene': must be a string"),
    (['{"schema": "PO", "entities": {}}'], "line 1, field 'entities': empty"),
    ([json.dumps({"schema": "PO", "entities": {"Variant": LONG}})],
     "line 1, field 'entities.Variant': Variant: 1,000 characters typed"),
    (['{"schema": "PO", "entities": {"Gene": "BRAF"}, "topp": 3}'], "line 1, field 'topp': unknown field"),
    (['{"schema": "PO", "entities": {"Gene": "BRAF"}, "top": "5"}'], "line 1, field 'top': must be a whole number"),
    (['{"schema": "PO", "entities": {"Gene": "BRAF"}, "top": 5000}'], "line 1, field 'top': 5000 hits asked"),
    ([], "no relations"),
])
def test_a_bad_queries_file_names_the_line_and_field_and_writes_nothing(search, tmp_path, lines, message):
    queries, out_file = tmp_path / "q.jsonl", tmp_path / "out.jsonl"
    queries.write_text("".join(line + "\n" for line in lines))
    code, out, err = search("--queries", str(queries), "--out", str(out_file))
    assert code == 2 and out == ""
    assert f"error: {queries}" in err and message in err, err
    assert not out_file.exists()


def test_a_missing_store_or_queries_file_is_named(search, tmp_path, capsys):
    assert main(["search", "--db", str(tmp_path / "none.duckdb"), "--schema", "PO", "--entity", "Gene=BRAF"]) == 2
    assert "none.duckdb: no store here" in capsys.readouterr().err
    assert not (tmp_path / "none.duckdb").exists()  # a search never creates a store
    code, _, err = search("--queries", str(tmp_path / "none.jsonl"))
    assert code == 2 and "none.jsonl: no such file" in err


def test_a_store_held_by_the_app_is_named(search, db, tmp_path, capsys):
    held = tmp_path / "held.duckdb"
    held.write_bytes(db.read_bytes())
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys
            con = duckdb.connect({str(held)!r})
            print("ready", flush=True)
            sys.stdin.readline()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        code = main(["search", "--db", str(held), "--schema", "PO", "--entity", "Gene=BRAF"])
    finally:
        holder.communicate("\n", timeout=30)
    err = capsys.readouterr().err
    assert code == 2 and f"in use by process {holder.pid}" in err
    assert "If it is the app, do this on its Curate page instead." in err  # the page that searches, no other
