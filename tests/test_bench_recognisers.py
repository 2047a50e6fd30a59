"""bench/_recogniser_compare.py: the CNN and the transformer per kind on dev, alone and under each policy."""

from __future__ import annotations

from types import SimpleNamespace

from bench._recogniser_compare import compare_recognisers
from bench.entities import _Memo, evaluate
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.learning.recogniser.data import CorpusPart
from curation.records import Document, Mention, Synonym

TEXT = "Vemurafenib targets BRAF in melanoma."
GOLD = ((0, 11, "Vemurafenib", "ChemicalEntity"), (20, 24, "BRAF", "GeneOrGeneProduct"),
        (28, 36, "melanoma", "DiseaseOrPhenotypicFeature"))


class Fixed:
    """A recogniser that finds the same spans in every text."""

    def __init__(self, name: str, spans: list[tuple[int, int, str]]) -> None:
        self.name = name
        self.spans = spans
        self.manifest = SimpleNamespace(name=name)
        self.device = "cpu"
        self.processes = 1

    def recognise(self, texts):
        return [list(self.spans) for _ in texts]


def test_each_kind_goes_to_the_recogniser_that_finds_it_and_the_transformer_is_timed():
    dev = CorpusPart("dev", (Document("1", TEXT, "", "biored", tuple(
        Mention("1", s, e, t, kind, f"id{s}", "biored") for s, e, t, kind in GOLD)),))
    matcher = Matcher(Lexicon([Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True)]))
    cnn = Fixed("cnn", [(20, 24, "gene"), (28, 31, "disease")])  # the disease span is cut short
    transformer = Fixed("tf", [(28, 36, "disease"), (20, 23, "gene")])  # the gene span is cut short
    kinds = ("gene", "chemical", "disease")
    out = compare_recognisers({"cnn": _Memo(cnn), "transformer": _Memo(transformer)}, transformer, "folder",
                              matcher, None, dev, evaluate, kinds)
    assert out["recogniser_alone"]["cnn"]["gene"]["f1"] == 1.0
    assert out["recogniser_alone"]["transformer"]["gene"]["f1"] == 0.0
    assert out["best"]["gene"]["recogniser"] == "cnn"
    assert out["best"]["disease"]["recogniser"] == "transformer"
    # no recogniser finds the chemical, the dictionary does (under every policy but "recogniser"): ties go to
    # the CNN and to recogniser-first, as bench/entities.py breaks them
    assert out["policy_f1"]["cnn"]["chemical"] == {"dictionary": 1.0, "recogniser": 0.0, "recogniser_first": 1.0,
                                                   "dictionary_first": 1.0}
    assert out["best"]["chemical"] == {"recogniser": "cnn", "policy": "recogniser_first", "f1": 1.0}
    assert out["throughput"]["abstracts"] == 1 and out["throughput"]["recogniser_abstracts_per_s"] > 0


def test_a_partially_annotated_dev_part_is_scored_on_its_own_kinds_only():
    from bench.recogniser_corpora import score

    mentions = tuple(Mention("1", s, e, t, k, "x") for s, e, t, k in GOLD)
    part = CorpusPart("gnormplus_dev", (Document("1", "", TEXT, mentions=mentions),), ("GENE",))
    # BRAF right; a disease the corpus does not annotate is neither a hit nor a false positive there
    found = score(Fixed("one", [(20, 24, "gene"), (28, 36, "disease"), (0, 4, "gene")]), part)
    assert (found["GENE.p"], found["GENE.r"], found["ents_p"]) == (0.5, 1.0, 0.5) and "DISEASE.f" not in found
    every = score(Fixed("one", [(20, 24, "gene"), (28, 36, "disease")]), CorpusPart("biored_dev", part.documents))
    assert every["DISEASE.f"] == 1.0 and every["CHEMICAL.r"] == 0.0 and every["documents"] == 1
