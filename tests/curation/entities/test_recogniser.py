"""The trained recogniser: training data, training, the folder's checks, loading."""

from __future__ import annotations

import json

import pytest

from curation.entities.recogniser import (
    CorpusPart,
    RecogniserError,
    blank,
    load_recogniser,
    read_recogniser_manifest,
    to_spacy_docs,
    train_recogniser,
)
from curation.records import Document, Mention
from tests.curation.entities.tiny_recogniser import _corpus


def test_tokenizer_splits_the_marks_inside_biomedical_words():
    nlp = blank()
    assert [t.text for t in nlp.make_doc("BRAF(V600E)-mutant KRAS/NRAS")] == [
        "BRAF", "(", "V600E", ")", "-", "mutant", "KRAS", "/", "NRAS",
    ]


def test_gold_mentions_become_entities_and_other_types_of_a_partial_corpus_are_missing():
    nlp = blank()
    doc = _corpus(1)[0]
    part = CorpusPart("bc5cdr", (doc,), labels=("CHEMICAL", "DISEASE"))
    gene_spans = [(m.start, m.end) for m in doc.mentions if m.type == "GeneOrGeneProduct"]
    docs, counts = to_spacy_docs(nlp, part, unlabelled=lambda text: gene_spans)
    labels = {e.label_ for e in docs[0].ents}
    assert labels == {"CHEMICAL", "DISEASE"}
    braf = [t for t in docs[0] if t.text == "BRAF"]
    assert braf and all(t.ent_iob_ == "" for t in braf)  # missing: neither entity nor outside
    v600e = [t for t in docs[0] if t.text == "V600E"]
    assert all(t.ent_iob_ == "O" for t in v600e)  # not marked by the dictionary: outside
    assert counts["missing_tokens"] == 2
    full, _ = to_spacy_docs(nlp, CorpusPart("biored", (doc,)))
    assert {e.label_ for e in full[0].ents} == {"GENE", "VARIANT", "CHEMICAL", "DISEASE"}


def test_misaligned_mentions_are_counted_not_trained(tmp_path):
    doc = Document("1", "BRAFV600E found.", "", "x", (Mention("1", 0, 4, "BRAF", "GeneOrGeneProduct", "673"),))
    _, counts = to_spacy_docs(blank(), CorpusPart("x", (doc,)))
    assert counts["misaligned"] == 1


def test_a_trained_recogniser_is_published_with_its_manifest_and_finds_entities(trained):
    manifest = read_recogniser_manifest(trained)
    assert manifest.selected_on == "dev"
    assert manifest.trained_on["train.documents"] == 24
    assert not trained.with_name("tiny.tmp").exists()
    recogniser = load_recogniser(trained)
    text = "Patients with melanoma carrying BRAF V600E responded to vemurafenib."
    spans = recogniser.recognise([text])[0]
    assert {k for *_, k in spans} <= {"gene", "variant", "chemical", "disease", "cellline"}
    assert spans, "the tiny recogniser learned nothing from its own training sentences"
    for start, end, _ in spans:
        assert 0 <= start < end <= len(text)


def test_an_empty_training_corpus_is_refused_and_nothing_is_written(tmp_path):
    out = tmp_path / "r"
    with pytest.raises(RecogniserError, match="no documents with entity mentions"):
        train_recogniser([CorpusPart("train", ())], CorpusPart("dev", _corpus(2)), out)
    assert not out.exists() and not (tmp_path / "r.tmp").exists()


def test_a_folder_that_is_not_a_recogniser_is_refused(tmp_path):
    with pytest.raises(RecogniserError, match="not a recogniser folder"):
        load_recogniser(tmp_path)


def test_a_recogniser_of_another_format_or_spacy_version_is_refused(trained, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(trained, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps(manifest | {"format": "recogniser/0"}))
    with pytest.raises(RecogniserError, match="format 'recogniser/0'"):
        load_recogniser(copy)
    (copy / "manifest.json").write_text(json.dumps(manifest | {"spacy_version": "2.3.0"}))
    with pytest.raises(RecogniserError, match="spaCy 2.3.0"):
        load_recogniser(copy)
    (copy / "manifest.json").write_text("{not json")
    with pytest.raises(RecogniserError, match="malformed"):
        load_recogniser(copy)


def test_a_malformed_or_empty_corpus_file_is_named_and_nothing_is_trained(tmp_path):
    from curation.learning.recogniser.data import read_corpus

    bad = tmp_path / "Train.PubTator"
    bad.write_text("1|t|BRAF V600E.\n1|a|Text.\n1\tzero\t4\tBRAF\tGeneOrGeneProduct\t673\n")
    with pytest.raises(RecogniserError, match="Train.PubTator"):
        read_corpus(bad)
    empty = tmp_path / "Dev.PubTator"
    empty.write_text("")
    with pytest.raises(RecogniserError, match="no documents"):
        read_corpus(empty)
    with pytest.raises(RecogniserError, match="not found"):
        read_corpus(tmp_path / "missing.PubTator")


def test_an_installed_spacy_ner_pipeline_is_used_with_its_labels_mapped(tmp_path):
    import spacy

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "GENE_OR_GENE_PRODUCT", "pattern": "BRAF"},
                        {"label": "CHEMICAL", "pattern": "vemurafenib"},
                        {"label": "ORGANISM", "pattern": "mice"}])
    nlp.to_disk(tmp_path / "scispacy_like")
    recogniser = load_recogniser(tmp_path / "scispacy_like")
    text = "BRAF and vemurafenib in mice."
    assert sorted(recogniser.recognise([text])[0]) == [(0, 4, "gene"), (9, 20, "chemical")]  # ORGANISM dropped
    other = spacy.blank("en")
    other.add_pipe("entity_ruler").add_patterns([{"label": "ORGANISM", "pattern": "mice"}])
    other.to_disk(tmp_path / "animals")
    with pytest.raises(RecogniserError, match="none of its entity labels"):
        load_recogniser(tmp_path / "animals")
