"""The bad-input catalogue: every kind of bad input the workbench meets, and what it does with it.

Each case asserts two things: (a) the person gets a message that says what was wrong, where
(file, line, field where they apply) and what to do, never a traceback; (b) nothing was
half-written: every table of the store holds exactly the rows it held before. The page-level
cases (uploads, rendering in the app) are in tests/app/test_bad_input_pages.py.
"""

from __future__ import annotations

import gzip
import json
import time
from html.parser import HTMLParser

import pytest

from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.errors import CurationError, InputError, SchemaError
from curation.grades import Grade
from curation.ingest.limits import MAX_ABSTRACT_CHARS
from curation.records import Document, Span
from curation.retrieval.relation_search import SearchInputError
from curation.retrieval.result_rows import curate_search
from curation.schemas import PO, PTM
from curation.store.base import content_counts, stats, transaction
from curation.store.corpus import add_documents, get_documents, iter_documents
from curation.store.decisions import list_decisions, record_decision, undo_last_decision
from curation.store.kb import list_kb_records
from curation.store.opening import open_store
from curation.store.worklist import add_worklist_item, list_worklist, set_worklist_status
from curation.workflows.annotation_queue import annotation_view
from curation.workflows.answers import AnswerKindError
from curation.workflows.curate import card_decisions, record_judgement
from curation.workflows.ingestion import MAX_UPLOAD_MB, check_upload_size, ingest_corpus, ingest_kb
from index.lexical import LexicalIndex
from index.search import Retriever, SearchError
from pages.parts.highlight import escape_text, marked_html, title_html, to_html

BRAF = {"Gene": "BRAF", "Variant": "V600E"}
CIVIC_HEADER = "molecular_profile\ttherapies\tcitation_id\tsource_type\tevidence_id\n"
CIVIC_ROW = "BRAF V600E\tVemurafenib\t20818844\tPubMed\t901\n"
TEN_MB = "BRAF V600E responds to vemurafenib. " * 300_000  # about 10.8 million characters
SQL = "'; DROP TABLE decisions; --"


@pytest.fixture
def loaded(con, fixtures):
    """A store that already holds the fixture KB and corpus, so a partial write would show."""
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    return con


def snapshot(con) -> dict[str, list[tuple]]:
    """Every row of every table: equal before and after means nothing was written."""
    tables = [row[0] for row in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    # As text: timestamps with a time zone would need pytz to come back as Python values.
    return {t: con.execute(f'SELECT COLUMNS(*)::VARCHAR FROM "{t}" ORDER BY ALL').fetchall() for t in tables}


def _xml(*articles: str, prolog: str = "") -> str:
    body = "".join(articles)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{prolog}<PubmedArticleSet>\n{body}</PubmedArticleSet>\n'


def _article(pmid: str, abstract: str, title: str = "A title") -> str:
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>{title}</ArticleTitle>"
        f"<Abstract><AbstractText>{abstract}</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>\n"
    )


def _truncated_gzip() -> bytes:
    data = gzip.compress((CIVIC_HEADER + CIVIC_ROW * 2000).encode())
    return data[: len(data) // 2]


BILLION_LAUGHS = _xml(
    _article("1", "&lol9;"),
    prolog=(
        '<!DOCTYPE PubmedArticleSet [\n<!ENTITY lol "lol">\n'
        + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n' for i in range(1, 10))
        + "]>\n"
    ),
)

# (kind of import, format, file name, content, what the message must say)
FILE_CASES = [
    pytest.param(
        "kb", "civic", "evidence.tsv", CIVIC_HEADER + CIVIC_ROW + "KIT D816V\tImatinib\t12",
        ["line 3", "has 3 fields but the header has 5", "export the file again"], id="truncated-tsv",
    ),
    pytest.param(
        "kb", "civic", "evidence.tsv.gz", _truncated_gzip(),
        ["gzip stream is broken or truncated", "download or compress it again"], id="truncated-gzip",
    ),
    pytest.param(
        "kb", "civic", "evidence.csv", CIVIC_HEADER.replace("\t", ",") + CIVIC_ROW.replace("\t", ","),
        ["line 1", "not tab-separated (it looks ','-separated)", "export the file as TSV"], id="comma-delimited",
    ),
    pytest.param(
        "kb", "civic", "evidence.tsv", CIVIC_HEADER.replace("\t", ";") + CIVIC_ROW.replace("\t", ";"),
        ["line 1", "it looks ';'-separated", "export the file as TSV"], id="semicolon-delimited",
    ),
    pytest.param(
        "kb", "civic", "evidence.tsv",
        "molecular_profile\ttherapies\tsource_type\tevidence_id\nBRAF V600E\tX\tPubMed\t1\n",
        ["line 1", "field 'citation_id'", "missing required column", "rename the columns"], id="missing-column",
    ),
    pytest.param(
        "kb", "tsv", "po.tsv", "gene\tvariant\tgene\ttreatment\tpmid\nBRAF\tV600E\tKRAS\tVemurafenib\t1\n",
        ["line 1", "field 'gene'", "names column 'gene' twice (columns 1 and 3)", "rename or remove one"],
        id="repeated-column",
    ),
    pytest.param(
        "kb", "civic", "evidence.tsv",
        (CIVIC_HEADER + CIVIC_ROW).encode() + b"KIT D816V\tImatinib \xe9\t1\tPubMed\t2\n",
        ["line 3", "not UTF-8 text (byte 0xe9 at column 20)", "re-save the file as UTF-8"], id="non-utf8-tsv",
    ),
    pytest.param(
        "corpus", "pubtator", "c.PubTator", b"5|t|Caf\xe9 au lait\n5|a|An abstract.\n",
        ["line 1", "not UTF-8 text (byte 0xe9", "re-save the file as UTF-8"], id="non-utf8-pubtator",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", _xml(_article("5", "Caf\xe9")).encode("latin-1"),
        ["line 3", "not UTF-8 text (byte 0xe9", "download the file again or re-save it as UTF-8"],
        id="non-utf8-xml",
    ),
    pytest.param(
        "kb", "civic", "evidence.tsv", b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
        ["line 1", "not UTF-8 text (byte 0x89 at column 1)", "re-save the file as UTF-8"], id="binary-file",
    ),
    pytest.param("kb", "civic", "evidence.tsv", b"", ["the file is empty", "expected a tab-separated header"],
                 id="empty-file"),
    pytest.param(
        "kb", "civic", "evidence.tsv", CIVIC_HEADER + CIVIC_ROW.replace("20818844", "PMID:20818844"),
        ["line 2", "field 'citation_id'", "'PMID:20818844' is not a PubMed id (1 to 9 digits)"], id="bad-pmid",
    ),
    pytest.param(
        "corpus", "jsonl", "c.jsonl",
        '{"pmid": "7", "title": "T", "abstract": "A."}\n{"pmid": "7", "title": "T", "abstract": "B."}\n',
        ["line 2", "field 'pmid'", "PMID 7 already appeared on line 1", "keep one of the two"],
        id="duplicate-pmid-jsonl",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", _xml(_article("7", "One text."), _article("7", "Another text.")),
        ["line 4", "field 'PMID'", "PMID 7 appears again (line 3) with a different text", "keep one version"],
        id="duplicate-pmid-xml",
    ),
    pytest.param(
        "corpus", "jsonl", "c.jsonl", '{"pmid": "8", "title": "Only a title", "abstract": "  "}\n',
        ["line 1", "field 'abstract'", "PMID 8 has an empty abstract", "nothing to retrieve"],
        id="empty-abstract-jsonl",
    ),
    pytest.param(
        "corpus", "pubtator", "c.PubTator", "8|t|Only a title\n8|a|\n",
        ["line 1", "field 'abstract'", "PMID 8 has an empty abstract", "nothing to retrieve"],
        id="empty-abstract-pubtator",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", _xml(_article("8", "")),
        ["line 3", "field 'Abstract'", "PMID 8: empty abstract", "nothing to retrieve"], id="empty-abstract-xml",
    ),
    pytest.param(
        "corpus", "jsonl", "c.jsonl", json.dumps({"pmid": "9", "title": "T", "abstract": TEN_MB}) + "\n",
        ["line 1", "field 'abstract'", f"more than the limit of {MAX_ABSTRACT_CHARS:,}", "check how the file was"],
        id="10mb-abstract-jsonl",
    ),
    pytest.param(
        "corpus", "pubtator", "c.PubTator", f"9|t|T\n9|a|{TEN_MB}\n",
        ["line 1", "field 'abstract'", f"more than the limit of {MAX_ABSTRACT_CHARS:,}"], id="10mb-abstract-pubtator",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", _xml(_article("9", TEN_MB)),
        ["line 3", "field 'Abstract'", f"more than the limit of {MAX_ABSTRACT_CHARS:,}"], id="10mb-abstract-xml",
    ),
    pytest.param(
        "kb", "civic", "evidence.tsv", CIVIC_HEADER + CIVIC_ROW.replace("Vemurafenib", TEN_MB),
        ["line 2", "field 'therapies'", "more than the limit of 100,000 for one field"], id="10mb-field-tsv",
    ),
    pytest.param(
        "corpus", "jsonl", "c.jsonl", '{"pmid": "10", "title": "T", "abstract": "BRAF \\ud800 V600E"}\n',
        ["line 1", "field 'abstract'", "unpaired surrogate (U+D800", "fix the escape in the file"],
        id="unpaired-surrogate-json",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", BILLION_LAUGHS,
        ["line 3", "declares the entity 'lol'", "billion laughs", "use the file as NCBI serves it"],
        id="billion-laughs-xml",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml",
        _xml(_article("11", "&xxe;"), prolog='<!DOCTYPE PubmedArticleSet [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'),
        ["declares the entity 'xxe'", "external-entity"], id="external-entity-xml",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", '<?xml version="1.0"?>\n<html><body>Not found</body></html>\n',
        ["line 2", "the root element is <html>, expected <PubmedArticleSet>"], id="wrong-root-xml",
    ),
    pytest.param(
        "corpus", "jsonl", "c.jsonl", "7|t|A PubTator title\n7|a|An abstract.\n",
        ["line 1", "not valid JSON", "one {\"pmid\", \"title\", \"abstract\"} object per line"],
        id="wrong-format-chosen",
    ),
    pytest.param(
        "corpus", "pubtator", "c.PubTator", "7|t|BRAF V600E\n7|a|Text.\n7\t0\t4\tKRAS\tGene\t3845\n",
        ["line 3", "field 'offsets'", "mention 'KRAS' at 0-4 does not match the text there ('BRAF')",
         "correct the offsets or the mention", "no document of the file could be read"],
        id="offsets-do-not-match",  # its one document skipped: nothing left to read
    ),
    # Digits of other scripts pass str.isdigit: "١٢٣" would be a second copy of PMID 123, "²³" crashes int().
    pytest.param(
        "corpus", "jsonl", "c.jsonl", '{"pmid": "\u0661\u0662\u0663", "title": "T", "abstract": "A."}\n',
        ["line 1", "is not a PubMed id"], id="arabic-indic-digits-pmid-jsonl",
    ),
    pytest.param(
        "corpus", "pubtator", "c.PubTator", "\u00b2\u00b3|t|BRAF V600E\n\u00b2\u00b3|a|Text.\n",
        ["line 1", "field 'pmid'"], id="superscript-digits-pmid-pubtator",
    ),
    pytest.param(
        "corpus", "pubtator", "c.PubTator", "7|t|BRAF V600E\n7|a|Text.\n7\t\u2070\t\u2074\tBRAF\tGene\t673\n",
        ["line 3"], id="superscript-digits-offsets-pubtator",
    ),
    pytest.param(
        "corpus", "pubmed-xml", "p.xml", _xml(_article("\uff11\uff12", "BRAF V600E.")),
        ["is not a PubMed id"], id="fullwidth-digits-pmid-xml",
    ),
]


@pytest.mark.parametrize(("kind", "fmt", "name", "content", "expected"), FILE_CASES)
def test_a_bad_file_is_named_explained_and_writes_nothing(loaded, tmp_path, kind, fmt, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = snapshot(loaded)
    with pytest.raises(InputError) as caught:
        if kind == "kb":
            ingest_kb(loaded, fmt, path, schema="PO" if fmt == "tsv" else None)
        else:
            ingest_corpus(loaded, fmt, path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"
    assert "Traceback" not in message
    assert snapshot(loaded) == before


def test_the_billion_laughs_are_refused_before_any_expansion(tmp_path):
    path = tmp_path / "laughs.xml"
    path.write_text(BILLION_LAUGHS)
    con = open_store(tmp_path / "s.duckdb")
    started = time.perf_counter()
    with pytest.raises(InputError, match="declares the entity"):
        ingest_corpus(con, "pubmed-xml", path)
    assert time.perf_counter() - started < 2.0  # 10^9 "lol"s expanded would take minutes and gigabytes


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        pytest.param(lambda con, p: ingest_kb(con, "tsv", p, schema="NOPE"),
                     ["unknown schema 'NOPE'",
                      "known schemas: Chemical-Disease, Disease-Treatment, Gene-Disease, PO, PTM", "add-schemas"],
                     id="unknown-schema"),
        pytest.param(lambda con, p: ingest_kb(con, "tsv", p),
                     ["needs --schema NAME"], id="schema-not-given"),
        pytest.param(lambda con, p: ingest_kb(con, "csv", p),
                     ["unknown knowledge-base format 'csv'", "use one of"], id="unknown-format"),
        pytest.param(lambda con, p: ingest_corpus(con, "jsonl", p.parent / "missing.jsonl"),
                     ["missing.jsonl", "file not found"], id="missing-file"),
        pytest.param(lambda con, p: ingest_corpus(con, "jsonl", p.parent),
                     ["is a folder; give a file"], id="folder-not-file"),
    ],
)
def test_a_bad_import_request_is_explained_and_writes_nothing(loaded, tmp_path, call, expected):
    path = tmp_path / "po.tsv"
    path.write_text("gene\tvariant\ttreatment\tpmid\nBRAF\tV600E\tVemurafenib\t1000001\n")
    before = snapshot(loaded)
    with pytest.raises((InputError, SchemaError)) as caught:
        call(loaded, path)
    for part in expected:
        assert part in str(caught.value), str(caught.value)
    assert snapshot(loaded) == before


def test_lenient_import_skips_each_bad_row_and_says_which(loaded, tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        b'{"pmid": "21", "title": "T", "abstract": "Good one."}\n'
        b'{"pmid": "22", "abstract": "Caf\xe9"}\n'
        b'{"pmid": "21", "abstract": "Again."}\n'
        b'{"pmid": "23", "abstract": ""}\n'
        + json.dumps({"pmid": "24", "abstract": TEN_MB}).encode() + b"\n"
        b'{"pmid": "25", "title": "T", "abstract": "Good two."}\n'
    )
    documents = content_counts(loaded)[0]
    report = ingest_corpus(loaded, "jsonl", path, lenient=True)
    assert (report.added, content_counts(loaded)[0]) == (2, documents + 2)
    assert [s.split(": ", 1)[0] for s in report.skipped] == [
        f"{path}, line 2", f"{path}, line 3, field 'pmid'", f"{path}, line 4, field 'abstract'",
        f"{path}, line 5, field 'abstract'",
    ]


def test_an_upload_over_the_limit_is_refused_with_the_way_around_it():
    check_upload_size("evidence.tsv", MAX_UPLOAD_MB * 1024 * 1024)  # at the limit: accepted
    with pytest.raises(InputError) as caught:
        check_upload_size("evidence.tsv", MAX_UPLOAD_MB * 1024 * 1024 + 1)
    message = str(caught.value)
    assert message.startswith("evidence.tsv: ")
    assert f"upload limit of {MAX_UPLOAD_MB} MB" in message
    assert "python -m curation ingest-kb" in message and "split it" in message


# --- decisions ------------------------------------------------------------------------------


def _decide(con, **changes):
    args = {"curator": "ana", "values": BRAF, "pmid": "1000001", "grade": Grade.COMPLETE, "answer": "", "note": ""}
    args.update(changes)
    return record_decision(
        con, args["curator"], PO, args["values"], args["pmid"], args["grade"], args["answer"], args["note"]
    )


@pytest.mark.parametrize("curator", ["", "   ", "\t\n"], ids=["empty", "spaces", "tab-newline"])
def test_a_decision_without_a_curator_name_is_refused(loaded, curator):
    before = snapshot(loaded)
    with pytest.raises(CurationError, match="enter your name as curator before recording decisions"):
        _decide(loaded, curator=curator)
    with pytest.raises(CurationError, match="enter your name as curator"):
        record_judgement(loaded, build_lexicon(loaded), curator, PO, BRAF, "1000001", Grade.PARTIAL)
    assert snapshot(loaded) == before


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param({"curator": "a" * 101}, "the curator name has 101 characters; at most 100: shorten it",
                     id="long-curator"),
        pytest.param({"values": {"Gene": "B" * 10_000}}, "the Gene entity has 10000 characters; at most 500",
                     id="10k-query-entity"),
        pytest.param({"answer": "x" * 501}, "the Treatment entity has 501 characters; at most 500", id="long-answer"),
        pytest.param({"note": "n" * 10_001}, "the note has 10001 characters; at most 10000: shorten it",
                     id="long-note"),
        pytest.param({"grade": "maybe"}, "grade must be one of ('complete', 'partial', 'not_relevant'), got 'maybe'",
                     id="unknown-grade"),
        pytest.param({"pmid": "999"}, "PMID 999 is not in the corpus; import its abstract", id="unknown-pmid"),
        pytest.param({"values": {"Gene": "  "}}, "fill in at least one of ['Gene', 'Variant']", id="empty-relation"),
    ],
)
def test_a_bad_decision_is_refused_with_its_reason_and_writes_nothing(loaded, changes, expected):
    before = snapshot(loaded)
    with pytest.raises(CurationError) as caught:
        _decide(loaded, **changes)
    assert expected in str(caught.value)
    assert snapshot(loaded) == before


@pytest.mark.parametrize(
    ("schema", "values", "answer", "named"),
    [
        pytest.param(PO, BRAF, "BRAF", "'BRAF' is known as a gene name, not a chemical", id="gene-as-treatment"),
        pytest.param(PO, BRAF, "v600e", "'v600e' is known as a variant name, not a chemical",
                     id="variant-as-treatment"),
        pytest.param(PTM, {"Protein": "AKT1", "PTM type": "phosphorylation"}, "Phosphorylation",
                     "'Phosphorylation' is known as a ptm name, not a gene", id="ptm-as-catalyst"),
    ],
)
def test_an_answer_of_the_wrong_kind_is_questioned_and_writes_nothing(loaded, schema, values, answer, named):
    lexicon = build_lexicon(loaded)
    before = snapshot(loaded)
    with pytest.raises(AnswerKindError) as caught:
        record_judgement(loaded, lexicon, "ana", schema, values, "1000001", Grade.COMPLETE, answer=answer)
    message = str(caught.value)
    assert named in message
    assert f"the {schema.answer} of a {schema.name} relation" in message and "record it anyway" in message
    assert snapshot(loaded) == before
    # Confirmed by the curator, it is recorded as typed.
    decision = record_judgement(
        loaded, lexicon, "ana", schema, values, "1000001", Grade.COMPLETE, answer=answer, confirm_kind=True
    )
    assert decision.answer == answer


@pytest.mark.parametrize(
    "answer", ["Vemurafenib", "dabrafenib", "Drug-X 1234", ""], ids=["known", "other-case", "unknown", "none"]
)
def test_answers_of_the_right_or_an_unknown_kind_pass_the_check(loaded, answer):
    decision = record_judgement(
        loaded, build_lexicon(loaded), "ana", PO, BRAF, "1000001", Grade.COMPLETE, answer=answer
    )
    assert [d.answer for d in list_decisions(loaded)] == [decision.answer] == [answer]


def test_a_grade_without_an_answer_needs_no_lexicon_but_an_answer_does(loaded):
    # The Curate page grades without waiting for the dictionaries; an answer is always checked.
    decision = record_judgement(loaded, None, "ana", PO, BRAF, "1000001", Grade.PARTIAL)
    assert decision.grade == Grade.PARTIAL
    before = snapshot(loaded)
    with pytest.raises(ValueError, match="an answer is checked against a lexicon"):
        record_judgement(loaded, None, "ana", PO, BRAF, "1000001", Grade.COMPLETE, answer="BRAF")
    assert snapshot(loaded) == before


def test_a_cards_decisions_are_those_of_its_abstract_and_relation(loaded):
    record_judgement(loaded, None, "ana", PO, BRAF, "1000001", Grade.PARTIAL)
    record_judgement(loaded, None, "bo", PO, BRAF, "1000001", Grade.COMPLETE)
    record_judgement(loaded, None, "ana", PO, BRAF, "1000002", Grade.NOT_RELEVANT)
    record_judgement(loaded, None, "ana", PO, {"Gene": "KRAS"}, "1000001", Grade.COMPLETE)
    record_judgement(loaded, None, "ana", PO, BRAF, "1000001", Grade.COMPLETE)  # supersedes ana's first
    shown = card_decisions(loaded, PO, BRAF, "1000001")
    assert sorted((d.curator, d.grade) for d in shown) == [("ana", Grade.COMPLETE), ("bo", Grade.COMPLETE)]
    assert card_decisions(loaded, PO, BRAF, "1000003") == ()


def test_sql_metacharacters_in_every_text_field_are_stored_verbatim(loaded, tmp_path):
    tables = set(snapshot(loaded))
    corpus = tmp_path / "sql.jsonl"
    corpus.write_text(json.dumps({"pmid": "31", "title": f"{SQL} title", "abstract": f"BRAF {SQL} abstract"}) + "\n")
    ingest_corpus(loaded, "jsonl", corpus)
    kb = tmp_path / "sql.tsv"
    kb.write_text(f"gene\tvariant\ttreatment\tpmid\tnote\nBRAF\t{SQL}\t{SQL}\t31\t{SQL}\n")
    ingest_kb(loaded, "tsv", kb, schema="PO")
    values = {"Gene": f"BRAF{SQL}", "Variant": SQL}
    decision = record_decision(loaded, SQL, PO, values, "31", Grade.COMPLETE, answer=SQL, note=SQL)
    assert add_worklist_item(loaded, PO, values) is True
    (item,) = [i for i in list_worklist(loaded, PO) if i["values"] == values]
    set_worklist_status(loaded, item["item_id"], "in_progress", SQL)
    docs = list(iter_documents(loaded))
    hits = Retriever(lexical=LexicalIndex.build(docs)).search(PO, values, "bm25", k=5).hits
    # Everything came back as typed, from where it was stored, and every table is still there.
    assert set(snapshot(loaded)) == tables
    (stored,) = list_decisions(loaded, curator=SQL)
    assert (stored.curator, stored.answer, stored.note, dict(stored.query_entities)) == (SQL, SQL, SQL, values)
    assert stored.decision_id == decision.decision_id
    assert [(d.title, d.abstract) for d in get_documents(loaded, ["31"])] == [
        (f"{SQL} title", f"BRAF {SQL} abstract")
    ]
    records = {r.source: r for r in list_kb_records(loaded, "PO") if r.pmid == "31"}
    assert records["tsv"].get("Variant") == SQL and records["tsv"].attribute("note") == SQL
    assert records["curator"].get("Treatment") == SQL and records["curator"].attribute("curator") == SQL
    assert [i["assignee"] for i in list_worklist(loaded, PO, status="in_progress")] == [SQL]
    assert "31" in [h.pmid for h in hits]
    assert undo_last_decision(loaded, SQL).decision_id == decision.decision_id
    assert stats(loaded)["decisions"] == 0


# --- queries --------------------------------------------------------------------------------


@pytest.fixture
def searchable(loaded):
    docs = list(iter_documents(loaded))
    return loaded, Retriever(lexical=LexicalIndex.build(docs)), Matcher(build_lexicon(loaded))


@pytest.mark.parametrize(
    ("values", "error", "expected"),
    [
        pytest.param({}, SearchInputError, "fill in at least one of Gene, Variant to search", id="no-entity"),
        pytest.param({"Gene": "   ", "Variant": "\t"}, SearchInputError, "fill in at least one of",
                     id="blank-entities"),
        pytest.param({"Gene": "B" * 10_000}, SearchInputError, "Gene: 10,000 characters typed; a name has at most",
                     id="10k-character-query"),
    ],
)
def test_an_empty_or_overlong_query_is_refused_with_a_message(searchable, values, error, expected):
    con, retriever, matcher = searchable
    before = snapshot(con)
    with pytest.raises(error) as caught:
        curate_search(con, retriever, matcher, PO, values, mode="bm25")
    assert expected in str(caught.value)
    with pytest.raises(SearchError, match="the query is empty; fill in at least one entity"):
        retriever.search_text(" \n\t ", "bm25")
    assert snapshot(con) == before


# --- hostile text in HTML ---------------------------------------------------------------------

HOSTILE = [
    pytest.param("<script>alert(1)</script>", id="script"),
    pytest.param('<img src=x onerror="alert(1)">', id="img-onerror"),
    pytest.param('"><svg onload=alert(1)>', id="attribute-breakout"),
    pytest.param("[click](javascript:alert(1)) ![x](http://127.0.0.1:9/t.png)", id="markdown-link-and-image"),
    pytest.param("*2/*2 genotype, _x_, ~5%~, $x^2$, :red[red], `code`", id="markdown-emphasis-math-directives"),
    pytest.param("1. not a list\n- nor this\n# nor a heading\n    nor code", id="markdown-blocks"),
    pytest.param("&lt;b&gt; is already escaped &amp; stays so", id="entities"),
]


class _Tags(HTMLParser):
    """The tags of an HTML fragment, and its text with every reference decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_renders_as_itself_and_nothing_else(text):
    # escape_text: no tag at all, and not one character Markdown would act on.
    escaped = escape_text(text)
    parsed = _parse(escaped)
    assert parsed.tags == [] and "".join(parsed.text) == text
    assert not set(escaped) & set("<>\"'`*_[]~$|\\")
    assert "\n-" not in escaped and "\n1" not in escaped and "\n " not in escaped
    # to_html: only the <mark> tags it writes, and the text itself, even when a span covers the hostile part.
    marked = to_html(f"BRAF {text} V600E", [Span(0, 4, "BRAF", "Gene", '"><script>x</script>'),
                                            Span(5, 5 + len(text), text, "Treatment")])
    parsed = _parse(marked)
    assert parsed.tags == ["mark", "mark"] and "".join(parsed.text) == f"BRAF {text} V600E"


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_titles_and_abstracts_reach_the_pages_escaped(searchable, text):
    con, _, matcher = searchable
    with transaction(con):
        add_documents(con, [Document("1000009", f"BRAF V600E {text}", f"BRAF V600E with vemurafenib. {text}")])
    retriever = Retriever(lexical=LexicalIndex.build(list(iter_documents(con))))
    result = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5)
    (row,) = [r for r in result.rows if r.pmid == "1000009"]
    record_decision(con, "<b>bo</b>", PO, BRAF, "1000009", Grade.COMPLETE, note=text)
    view = annotation_view(con, retriever, matcher, PO, "ana")  # ana's queue: the pair bo decided
    assert view.next is not None and view.next.entry.pmid == "1000009"
    shown = [title_html(row.title), marked_html(row.abstract), *map(marked_html, row.best), title_html(view.next.title),
             marked_html(view.next.abstract)]
    for fragment in shown:
        assert set(_parse(fragment).tags) <= {"mark"}, fragment
        assert not set(fragment.replace("<mark", "").replace("</mark>", "")) & set("<`*_[]~$|"), fragment
    for fragment in (title_html(row.title), title_html(view.next.title)):
        assert "".join(_parse(fragment).text) == f"BRAF V600E {text}"
    for fragment in (marked_html(row.abstract), marked_html(view.next.abstract)):
        assert "".join(_parse(fragment).text) == f"BRAF V600E with vemurafenib. {text}"


# --- the command line: paths, counts and PMIDs ------------------------------------------------------------------


@pytest.fixture
def cli_db(loaded, tmp_path, monkeypatch):
    """The loaded store, closed so that commands can open it; no model version (BM25 serves)."""
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    loaded.close()
    return tmp_path / "test.duckdb"


def _output_commands(db, target) -> dict[str, list[str]]:
    search = ["--schema", "PO", "--entity", "Gene=BRAF", "--mode", "bm25"]
    return {
        "search": ["search", "--db", str(db), *search, "--out", str(target)],
        "export": ["export", "decisions", "--db", str(db), "--out", str(target)],
        "suggest": ["suggest", "--db", str(db), *search, "--export", str(target), "--export-format", "csv"],
    }


@pytest.mark.parametrize("command", ["search", "export", "suggest"])
@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_an_output_path_that_cannot_be_written_is_one_line_naming_it(cli_db, tmp_path, capsys, command, where):
    from curation.cli import main

    target = tmp_path / "no" / "such" / "out.txt" if where == "missing folder" else tmp_path / "folder.csv"
    if where == "a folder":
        target.mkdir()
    capsys.readouterr()
    assert main(_output_commands(cli_db, target)[command]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and "Traceback" not in err, err


def test_a_backup_folder_that_is_a_file_is_one_line_naming_it(cli_db, tmp_path, capsys):
    from curation.cli import main

    target = tmp_path / "backups-file"
    target.write_text("not a folder")
    capsys.readouterr()
    assert main(["backup", "--db", str(cli_db), "--dir", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err, err
    assert target.read_text() == "not a folder"


@pytest.mark.parametrize("pmid", ["\u0661\u0662\u0663", "\u00b2\u00b3", "\uff11\uff12\uff13", "\u09e9", "12 3", ""])
def test_a_pmid_is_ascii_digits_only_wherever_one_is_read(pmid):
    from curation.ingest import fetch
    from curation.ingest.tabular import valid_pmid

    assert not valid_pmid(pmid)
    with pytest.raises(InputError, match="not a PubMed id"):
        fetch._valid_pmids(["123", pmid])
    assert valid_pmid("123") and fetch._valid_pmids(["123", " 123 "]) == ["123"]


def test_uniprot_evidence_cites_ascii_pmids_only():
    from curation.ingest.uniprot import _evidence_by_pmid

    other_script = "ECO:0000269|PubMed:\u0661\u0662\u0663"
    assert _evidence_by_pmid(other_script) == [(None, other_script)]
    assert _evidence_by_pmid("ECO:0000269|PubMed:123") == [("123", "ECO:0000269")]


@pytest.mark.parametrize("command", [
    ["stats"], ["stats", "--json"], ["export", "decisions"], ["backup"], ["roles"], ["roles", "audit"],
    ["withdraw", "1"], ["rescore"], ["normalise", "BRAF"], ["train-relations"], ["retrain"],
    ["search", "--schema", "PO", "--entity", "Gene=BRAF", "--mode", "bm25"],
    ["suggest", "--schema", "PO", "--entity", "Gene=BRAF", "--mode", "bm25"],
])
def test_a_mistyped_db_is_refused_and_creates_nothing(tmp_path, capsys, monkeypatch, command):
    """Only commands that put data in a store (ingest, fetch, quickstart, add-schemas) may create one."""
    from curation.cli import main

    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(tmp_path / "backups"))
    typo = tmp_path / "dta" / "curation.duckdb"
    capsys.readouterr()
    assert main([command[0], "--db", str(typo), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(typo) in err and "no store" in err, err
    assert not (tmp_path / "dta").exists() and not (tmp_path / "backups").exists()


def test_an_import_still_creates_its_store(tmp_path, fixtures, capsys):
    from curation.cli import main

    db = tmp_path / "new" / "folder" / "store.duckdb"
    assert main(["ingest-kb", "civic", str(fixtures / "civic" / "current.tsv"), "--db", str(db)]) == 0
    assert db.exists()
