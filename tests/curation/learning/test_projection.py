from __future__ import annotations

import numpy as np
import pytest

from curation.grades import Grade
from curation.learning.build import BuildRequest, build_version
from curation.learning.projection import (
    NOT_COMPUTED,
    NOT_POSITIVE,
    OTHER,
    QUERY,
    UNDECIDED,
    ColourBy,
    Method,
    ProjectionConfig,
    ProjectionError,
    build_projection,
    project,
    sample_documents,
)
from curation.learning.training import TrainConfig
from curation.records import Document, KBRecord
from curation.schemas import PO
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.decisions import record_decision
from curation.store.kb import add_kb_records
from curation.store.worklist import add_worklist_item
from curation.workflows.projection import project_version
from index.dense import DenseIndex

KEYWORDS = ("braf", "egfr", "kras", "vemurafenib", "osimertinib", "melanoma", "lung", "cats")
DOCS = [
    Document("11", "Vemurafenib in BRAF V600E melanoma", "BRAF V600E mutant melanoma responded to vemurafenib."),
    Document("12", "BRAF <b>V600E</b> and melanoma", "Melanoma with BRAF V600E was studied."),
    Document("13", "Osimertinib and EGFR T790M", "EGFR T790M resistance is overcome by osimertinib in lung cancer."),
    Document("14", "EGFR in lung cancer", "Lung adenocarcinoma often carries EGFR mutations."),
    Document("15", "Sleep in cats", "Domestic cats sleep for most of the day."),
    Document("16", "KRAS G12C", "KRAS G12C in colorectal cancer."),
]
RECORDS = [
    KBRecord("PO", (("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", "Vemurafenib")), "11", "t", "1"),
    KBRecord("PO", (("Gene", "EGFR"), ("Variant", "T790M"), ("Treatment", "Osimertinib")), "13", "t", "2"),
    KBRecord("PO", (("Gene", "KRAS"), ("Variant", "G12C"), ("Treatment", "")), "16", "t", "3"),
]


class KeywordEncoder:
    """One dimension per keyword: enough geometry to test with, no model to load."""

    def get_sentence_embedding_dimension(self) -> int:
        return len(KEYWORDS)

    def encode(self, texts, **_) -> np.ndarray:
        return np.vstack([_one_hot(t) for t in texts])


def _one_hot(text: str) -> np.ndarray:
    v = np.array([float(k in text.lower()) for k in KEYWORDS], dtype=np.float32) + 1e-3
    return v / np.linalg.norm(v)


@pytest.fixture
def loaded(con):
    with transaction(con):
        add_documents(con, DOCS)
        add_kb_records(con, RECORDS, origin="test")
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "12", Grade.PARTIAL)
    record_decision(
        con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "11", Grade.COMPLETE, answer="Vemurafenib"
    )
    record_decision(con, "bo", PO, {"Gene": "BRAF", "Variant": "V600E"}, "11", Grade.NOT_RELEVANT)
    add_worklist_item(con, PO, {"Gene": "KRAS", "Variant": "G12C"})
    return con


@pytest.fixture
def dense():
    return DenseIndex.build(
        np.vstack([_one_hot(f"{d.title} {d.abstract}") for d in DOCS]), [d.pmid for d in DOCS], "kw"
    )


def test_pca_shapes_and_determinism():
    vectors = np.random.default_rng(0).normal(size=(40, 16))
    xy = project(vectors, "pca", seed=1)
    assert xy.shape == (40, 2) and xy.dtype == np.float32
    assert np.array_equal(xy, project(vectors, Method.PCA, seed=1))
    assert project(np.zeros((0, 16))).shape == (0, 2)
    assert np.array_equal(project(vectors[:1]), np.zeros((1, 2)))
    assert project(vectors[:, :1]).shape == (40, 2)  # one dimension: the second axis is 0


def test_umap_is_seeded_and_needs_a_few_points():
    vectors = np.random.default_rng(0).normal(size=(30, 8))
    xy = project(vectors, "umap", seed=3)
    assert xy.shape == (30, 2) and np.isfinite(xy).all()
    assert np.allclose(xy, project(vectors, "umap", seed=3))
    with pytest.raises(ProjectionError, match="at least 4 points"):
        project(vectors[:3], "umap")
    with pytest.raises(ProjectionError, match="unknown projection 'tsne'"):
        project(vectors, "tsne")


def test_sample_keeps_decided_documents_and_the_cap():
    ids = [str(i) for i in range(100)]
    sample = sample_documents(ids, decided={"5", "77", "missing"}, preferred={"1", "2", "3"}, cap=10, seed=4)
    assert {"5", "77"} <= set(sample) and "missing" not in sample
    assert len(sample) == 12 and {"1", "2", "3"} <= set(sample)  # preferred ones come before the rest
    assert sample == sample_documents(ids, {"5", "77"}, {"1", "2", "3"}, 10, 4)
    assert sample != sample_documents(ids, {"5", "77"}, {"1", "2", "3"}, 10, 5)
    assert sample_documents(ids, {"5"}, (), cap=0, seed=1) == ["5"]


def test_points_carry_grades_genes_answers_and_hover(loaded, dense):
    result = build_projection(loaded, PO, dense, KeywordEncoder(), ProjectionConfig(seed=2), version="kw")
    documents = {p.key: p for p in result.points if p.kind == "document"}
    queries = {p.key: p for p in result.points if p.kind == QUERY}
    assert set(documents) == {d.pmid for d in DOCS}
    assert set(queries) == {"Treatment for gene BRAF and variant V600E?", "Treatment for gene KRAS and variant G12C?"}
    # The best active grade of any curator, "undecided" otherwise.
    assert documents["11"].grade == Grade.COMPLETE and documents["12"].grade == Grade.PARTIAL
    assert documents["13"].grade == UNDECIDED
    assert (documents["11"].gene, documents["11"].answer) == ("BRAF", "Vemurafenib")
    assert (documents["13"].gene, documents["13"].answer) == ("EGFR", "Osimertinib")
    assert (documents["12"].gene, documents["12"].answer) == ("BRAF", "")
    assert documents["15"].gene == "" and documents["15"].margin_class == NOT_COMPUTED
    braf = queries["Treatment for gene BRAF and variant V600E?"]
    assert (braf.grade, braf.gene, braf.answer) == (QUERY, "BRAF", "Vemurafenib")
    # Hover text is escaped: titles are data, not markup.
    assert documents["12"].hover == "PMID 12<br>BRAF &lt;b&gt;V600E&lt;/b&gt; and melanoma"
    assert result.labels(ColourBy.GENE).count("none") == 2  # no record or decision names a gene for 14 and 15
    assert result.labels(ColourBy.GRADE, top=2).count(OTHER) > 0
    again = build_projection(loaded, PO, dense, KeywordEncoder(), ProjectionConfig(seed=2), version="kw")
    assert again == result


def test_margin_classes_follow_the_training_table(loaded, dense):
    def text_match(value, kind, document):  # the variant is never mentioned
        return kind != "variant" and value.lower() in document.text.lower()

    result = build_projection(loaded, PO, dense, KeywordEncoder(), version="kw", text_match=text_match)
    classes = {p.key: p.margin_class for p in result.points if p.kind == "document"}
    assert classes["11"] == "pos-2 (0.2)"  # gene and treatment mentioned, variant missing: PO table 7(a)
    assert classes["12"] == NOT_POSITIVE and classes["16"] == NOT_POSITIVE  # no KB answer: not a positive


def test_cap_and_missing_documents_are_noted(loaded):
    partial_index = DenseIndex.build(
        np.vstack([_one_hot(d.abstract) for d in DOCS[2:]]), [d.pmid for d in DOCS[2:]], "kw"
    )
    result = build_projection(loaded, PO, partial_index, KeywordEncoder(), ProjectionConfig(max_documents=1))
    (shown,) = [p.key for p in result.points if p.kind == "document"]
    assert shown in {"13", "16"}  # KB documents come first
    assert any("2 decided documents are not in this version's index" in n for n in result.notes)


@pytest.mark.slow
def test_a_real_zero_shot_version(loaded, tmp_path):
    request = BuildRequest(schema=PO, version="po-base", train=False, train_config=TrainConfig(max_seq_length=64))
    version = build_version(request, {d.pmid: d for d in DOCS}, tmp_path / "models")
    result = project_version(loaded, version, PO, ProjectionConfig(method=Method.PCA, seed=1))
    assert result.version == "po-base" and result.method == "pca"
    assert len(result.points) == len(DOCS) + 2
    xs = np.array([[p.x, p.y] for p in result.points])
    assert np.isfinite(xs).all() and xs.std(axis=0).min() > 0
    again = project_version(loaded, version, PO, ProjectionConfig(method=Method.PCA, seed=1))
    assert np.allclose(xs, [[p.x, p.y] for p in again.points], atol=1e-5)
