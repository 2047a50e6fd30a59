"""The learned entity linker: the apply rule, candidates, the saved folder, the hard cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.linking import (
    FORMAT_VERSION,
    DevName,
    LexiconLinker,
    LinkerUnavailable,
    Thresholds,
    choose_thresholds,
    load_linker,
    numbers_agree,
    recalibrate,
    train_linker,
)
from curation.entities.name_encoder import NameEncoderConfig, sample_batches, synonym_sets
from curation.entities.synonyms import Lexicon, drugbank_synonyms
from curation.errors import USER_ERRORS
from curation.records import Synonym

NAMES = {
    "DB08881": ["Vemurafenib", "PLX4032", "Zelboraf"],
    "DB99999": ["PLX4720"],  # a different tool compound one edit from PLX4032
    "DB00619": ["Imatinib", "Gleevec", "STI571"],
    "DB05773": ["Trastuzumab emtansine", "T-DM1", "Kadcyla"],
    "DB08912": ["Dabrafenib", "Tafinlar"],
    "DB00072": ["Trastuzumab", "Herceptin"],
}
GENES = {"2064": ["ERBB2", "HER2", "HER-2/neu"], "673": ["BRAF", "B-Raf"], "1956": ["EGFR", "ErbB1"]}


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    synonyms = [Synonym(c, "chemical", n, "test", i == 0) for c, names in NAMES.items() for i, n in enumerate(names)]
    synonyms += [Synonym(c, "gene", n, "test", i == 0) for c, names in GENES.items() for i, n in enumerate(names)]
    synonyms.append(Synonym("DB00001", "chemical", "Dabrafenib", "test"))  # an ambiguous name
    return Lexicon(synonyms)


@pytest.mark.parametrize(("text", "kind", "concept"), [
    ("HER2", "gene", "2064"), ("PLX4032", "chemical", "DB08881"), ("Gleevec", "chemical", "DB00619"),
    ("T-DM1", "chemical", "DB05773"), ("t-dm1", "chemical", "DB05773"),
])  # fmt: skip
def test_exact_unambiguous_names_are_applied_at_one(lexicon: Lexicon, text: str, kind: str, concept: str) -> None:
    link = LexiconLinker(lexicon).link(text, kind)
    assert (link.concept_id, link.confidence, link.applied) == (concept, 1.0, True)


def test_an_ambiguous_exact_name_is_offered_not_applied(lexicon: Lexicon) -> None:
    link = LexiconLinker(lexicon).link("dabrafenib", "chemical")
    assert not link.applied
    assert {c for c, _, _ in link.candidates[:2]} == {"DB08912", "DB00001"}


def test_a_typo_is_a_candidate_but_never_applied_uncalibrated(lexicon: Lexicon) -> None:
    link = LexiconLinker(lexicon).link("vemurafinib", "chemical")
    assert link.concept_id == "DB08881" and link.canonical == "Vemurafenib"
    assert 0 < link.confidence < 1 and not link.applied
    assert link.candidates[0][0] == "DB08881"


def test_the_threshold_rule(lexicon: Lexicon) -> None:
    typo = LexiconLinker(lexicon).link("vemurafinib", "chemical").confidence
    loose = LexiconLinker(lexicon, {"chemical": Thresholds(min_score=typo - 0.01)})
    strict = LexiconLinker(lexicon, {"chemical": Thresholds(min_score=typo + 0.01)})
    assert loose.link("vemurafinib", "chemical").applied
    low = strict.link("vemurafinib", "chemical")
    assert not low.applied and low.confidence < strict.thresholds["chemical"].min_score
    # a margin rule: the best must beat the second concept by min_margin
    assert not LexiconLinker(lexicon, {"chemical": Thresholds(0.0, 1.0)}).link("vemurafinib", "chemical").applied
    assert not LexiconLinker(lexicon, {"gene": Thresholds(0.0)}).link("vemurafinib", "chemical").applied  # per kind


def test_a_code_name_is_not_linked_to_another_code_name(lexicon: Lexicon) -> None:
    anything = LexiconLinker(lexicon, {"chemical": Thresholds(min_score=0.0)})
    link = anything.link("PLX4033", "chemical")  # one edit from PLX4032 and from PLX4720's family
    assert not link.applied
    assert anything.link("PLX 4720", "chemical").applied  # same numbers: spacing is not a new drug
    assert numbers_agree("PLX-4032", "PLX4032") and not numbers_agree("PLX4032", "PLX4720")
    assert numbers_agree("T-DM1", "trastuzumab emtansine") and not numbers_agree("IL-6", "IL-8")


def test_choose_thresholds_keeps_precision_and_refuses_low_scores() -> None:
    rows = [(0.95, 0.3, True, True)] * 50 + [(0.6, 0.01, True, False)] * 10 + [(0.6, 0.2, True, True)] * 5
    chosen = choose_thresholds(rows, len(rows), target=0.98)
    assert chosen.dev_precision >= 0.98 and chosen.dev_applied == 55
    assert not chosen.allows(0.6, 0.01)
    assert choose_thresholds([(0.9, 0.5, True, False)] * 20, 20).dev_applied == 0  # nothing safe: apply nothing


def test_batches_hold_several_names_of_a_concept_and_one_kind() -> None:
    sets = synonym_sets({f"chemical:{c}": n for c, n in NAMES.items()} | {f"gene:{c}": n for c, n in GENES.items()})
    assert "chemical:DB99999" not in sets  # one name: no positive pair
    kinds = {label: label.split(":")[0] for label in sets}
    for texts, labels in sample_batches(sets, kinds, NameEncoderConfig(concepts_per_batch=3).with_loop(max_steps=10)):
        assert len(texts) == len(labels) and max(labels) + 1 <= 3
        assert all(labels.count(label) >= 2 for label in labels)
        assert len({kinds[next(k for k, v in sets.items() if t in v)] for t in texts}) == 1


def test_train_save_load_and_refuse_bad_folders(lexicon: Lexicon, tmp_path: Path) -> None:
    sets = {f"chemical:{c}": n for c, n in NAMES.items()} | {f"gene:{c}": n for c, n in GENES.items()}
    kinds = {label: label.split(":")[0] for label in sets}
    dev = [DevName("vemurafinib", "chemical", "DB08881"), DevName("Her-2", "gene", "2064")]
    config = NameEncoderConfig(concepts_per_batch=4, names_per_concept=2).with_loop(max_steps=2, device="cpu")
    folder = tmp_path / "tiny"
    linker, manifest = train_linker(synonym_sets(sets), kinds, lexicon, dev, folder, config, counts={"x": 1})
    assert manifest.format_version == FORMAT_VERSION and manifest.config["steps"] == 2
    assert linker.link("vemurafinib", "chemical").candidates[0][0] == "DB08881"
    loaded = load_linker(folder, lexicon, device="cpu")
    assert loaded.scorer.weight == linker.scorer.weight and loaded.thresholds == linker.thresholds
    assert loaded.link("Gleevec", "chemical").applied
    # dev says short exact chemical names are wrong: recalibration stops applying them, the rest stays
    wrong = [DevName("T-DM1", "chemical", "DB00072")] * 25
    right = [DevName("Gleevec", "chemical", "DB00619")] * 25
    again = recalibrate(folder, lexicon, wrong + right + dev, device="cpu")
    assert not again.link("T-DM1", "chemical").applied and again.link("Gleevec", "chemical").applied
    assert load_linker(folder, lexicon).thresholds["chemical"].exact["short-1"] == [0.0, 25]
    assert again.link("Zelboraf", "chemical").applied  # long and seen once, like Gleevec

    with pytest.raises(LinkerUnavailable, match="no such linker folder"):
        load_linker(tmp_path / "absent", lexicon)
    manifest_path = folder / "manifest.json"
    data = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**data, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(LinkerUnavailable, match="format version"):
        load_linker(folder, lexicon)
    manifest_path.write_text("{not json")
    with pytest.raises(LinkerUnavailable, match="not readable JSON") as caught:
        load_linker(folder, lexicon)
    assert isinstance(caught.value, USER_ERRORS)


def test_cli_parses_train_linker(tmp_path: Path) -> None:
    from curation.cli import build_parser

    args = build_parser().parse_args(["train-linker", "--out", str(tmp_path / "l"), "--steps", "5"])
    assert (args.steps, args.out, args.func.__name__) == (5, tmp_path / "l", "cmd_train_linker")


DRUGBANK = Settings().data_dir / "dicts" / "drugbank_vocabulary.csv"


@pytest.mark.skipif(not DRUGBANK.is_file(), reason="shared DrugBank vocabulary absent")
def test_real_drugbank_typo_finds_vemurafenib() -> None:
    linker = LexiconLinker(Lexicon(drugbank_synonyms(DRUGBANK)))
    link = linker.link("vemurafinib", "chemical")
    assert link.concept_id == "DB08881" and not link.applied
    assert linker.link("Vemurafenib", "chemical").applied
