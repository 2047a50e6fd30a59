"""BM25 alone kept between processes: read back when the documents are as they were, built again when not."""

from __future__ import annotations

from curation.records import Document
from curation.store.corpus import add_documents
from curation.versions.kept_bm25 import bm25_alone, documents_digest
from index.lexical import LexicalIndex


def _docs(con, *rows: tuple[str, str, str]) -> None:
    add_documents(con, [Document(pmid, title, abstract, "test") for pmid, title, abstract in rows])


def test_the_kept_index_is_read_back_and_ranks_as_a_built_one(con, tmp_path):
    _docs(con, ("1", "BRAF V600E melanoma", "Vemurafenib treats BRAF V600E melanoma."),
          ("2", "EGFR in lung cancer", "Erlotinib and EGFR L858R."), ("3", "A review", "Nothing relevant here."))
    first = bm25_alone(con, tmp_path)
    kept = list((tmp_path / "bm25").glob("bm25-*"))
    assert len(kept) == 1 and (kept[0] / "ids.json").exists()
    again = bm25_alone(con, tmp_path)
    built = LexicalIndex.build([Document("1", "BRAF V600E melanoma", "Vemurafenib treats BRAF V600E melanoma.",
                                         "test"), Document("2", "EGFR in lung cancer", "Erlotinib and EGFR L858R.",
                                                           "test"), Document("3", "A review", "Nothing relevant here.",
                                                                             "test")])
    for index in (first, again):
        assert index.ids == built.ids
        assert index.search(["BRAF melanoma"], k=3) == built.search(["BRAF melanoma"], k=3)
    assert list((tmp_path / "bm25").glob("bm25-*")) == kept  # read, not written again


def test_a_new_document_or_a_damaged_copy_makes_a_new_build(con, tmp_path):
    _docs(con, ("1", "BRAF V600E", "Vemurafenib."))
    before = documents_digest(con)
    bm25_alone(con, tmp_path)
    _docs(con, ("2", "EGFR", "Erlotinib."))
    assert documents_digest(con) != before
    index = bm25_alone(con, tmp_path)
    assert sorted(index.ids) == ["1", "2"]
    folder = tmp_path / "bm25" / f"bm25-{documents_digest(con)[:32]}"
    (folder / "ids.json").write_text("[\"1\"]")  # damaged: its manifest says 2 documents
    assert sorted(bm25_alone(con, tmp_path).ids) == ["1", "2"]
    assert sorted(LexicalIndex.load(folder).ids) == ["1", "2"]  # rebuilt in its place
    assert bm25_alone(con, None).ids  # no folder: built, nothing kept
