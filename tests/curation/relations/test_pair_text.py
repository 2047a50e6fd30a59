"""The pair text model: the sentences holding both concepts, masked; what it learns; its out-of-fold reading; its
saved form; and the scorer that carries it."""

from __future__ import annotations

import numpy as np
import pytest

from curation.records import Document, Mention
from curation.relations.features import FEATURES, pair_features
from curation.relations.pair_text import (
    PairText,
    fit_pair_text,
    out_of_fold,
    pair_text,
    pair_types,
    text_features,
)
from curation.relations.pairs import Pair, RelationError, group_by_concept
from curation.relations.scorer import RelationScorer
from curation.relations.scorer_folder import load_scorer_folder, write_scorer


def _document(pmid: str, sentence: str, gene: str = "KRAS", drug: str = "gefitinib") -> tuple[Document, Pair]:
    title = "A study."
    text = f"{title} {sentence} Patients were followed."
    mentions = (Mention(pmid, text.index(gene), text.index(gene) + len(gene), gene, "Gene", "3845"),
                Mention(pmid, text.index(drug), text.index(drug) + len(drug), drug, "Chemical", "D000077156"))
    return Document(pmid, title, text[len(title) + 1:], mentions=mentions), Pair(
        pmid, "3845", "Gene", "D000077156", "Chemical")


def test_the_chemical_is_masked_b_whichever_side_it_is_on():
    document, pair = _document("1", "KRAS mutations predict resistance to gefitinib.")
    grouped = group_by_concept(document.mentions)
    assert pair_text(document.text, pair, grouped) == " @a  mutations predict resistance to  @b ."
    flipped = Pair("1", "D000077156", "Chemical", "3845", "Gene")
    assert pair_text(document.text, flipped, grouped) == pair_text(document.text, pair, grouped)
    apart, far = _document("2", "KRAS was sequenced. Then gefitinib was given.")
    assert pair_text(apart.text, far, group_by_concept(apart.mentions)) == ""  # no sentence holds both
    assert pair_types("ChemicalEntity", "GeneOrGeneProduct") == pair_types("gene", "chemical") == "chemical-gene"


RELATED = ["{g} mutant tumours responded to {d}.", "{g} mutations confer resistance to {d}.",
           "Response to {d} depended on {g} status."]
UNRELATED = ["{g} was sequenced and {d} was stored at room temperature.", "{g} and {d} were listed in a table.",
             "The {d} supplier and the {g} antibody vendor were named."]


def _items(n: int = 60):
    items, labels, pmids = [], [], []
    for i in range(n):
        for label, templates in ((1, RELATED), (0, UNRELATED)):
            sentence = templates[i % 3].format(g="KRAS", d="gefitinib")
            document, pair = _document(f"{label}{i}", sentence)
            items.append((pair_text(document.text, pair, group_by_concept(document.mentions)), "chemical-gene"))
            labels.append(label)
            pmids.append(document.pmid)
    return items, labels, pmids


def test_it_learns_which_words_relate_a_pair_and_reads_them_out_of_fold():
    items, labels, pmids = _items()
    model = fit_pair_text(items, labels)
    related = model.probability(" @a  mutant tumours responded to  @b .", "chemical-gene")
    listed = model.probability(" @a  and  @b  were listed in a table.", "chemical-gene")
    assert related > 0.8 > 0.2 > listed
    whole, oof = out_of_fold(items + [("", "chemical-gene")], labels + [1], pmids + ["x"])
    assert whole.weights == model.weights  # the served model is the one fitted on every item
    assert oof[-1] == 0.0  # no sentence holds it: no reading
    assert ((oof[:-1] >= 0.5) == np.array(labels)).mean() > 0.9
    assert text_features(0.0, False) == (0.0, 0.0) and text_features(0.5, True) == (0.5, 0.0)
    with pytest.raises(RelationError, match="related and unrelated"):
        fit_pair_text(items, [1] * len(items))


def test_civic_statements_teach_it_a_relation_the_pairs_never_show():
    items, labels, _ = _items()
    statement = " @a  G12D confers insensitivity to  @b  in colorectal cancer."
    before = fit_pair_text(items, labels).probability(statement, "chemical-variant")
    after = fit_pair_text(items, labels, [statement, " @a  insensitivity to  @b  was seen."] * 5).probability(
        statement, "chemical-variant")
    assert after > before + 0.1


def test_the_scorer_reads_the_model_and_its_folder_keeps_it(tmp_path):
    items, labels, _ = _items()
    model = fit_pair_text(items, labels)
    document, pair = _document("9", "KRAS mutant tumours responded to gefitinib.")
    f = FEATURES.index
    read = pair_features(document, pair, text_model=model)
    assert read[f("text_related")] > 0.8 and read[f("text_log_odds")] > 0
    assert pair_features(document, pair)[f("text_related")] == 0.0  # no model: 0
    given = pair_features(document, pair, text_model=model, text_probability=0.25)
    assert given[f("text_related")] == 0.25  # the out-of-fold probability wins over the model's own reading
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, len(FEATURES))).astype(np.float32)
    scorer = RelationScorer.fit(x, (x[:, 0] > 0).astype(int))
    folder = write_scorer(tmp_path / "relations-1", RelationScorer(scorer.mean, scorer.scale, scorer.coef,
                                                                    scorer.intercept, scorer.threshold, text=model),
                          {"name": "relations-1"})
    loaded, _ = load_scorer_folder(folder)
    assert isinstance(loaded.text, PairText)
    assert loaded.text.probability(*items[0]) == pytest.approx(model.probability(*items[0]), abs=1e-4)
    (folder / "text.json").write_text("{")
    with pytest.raises(RelationError, match="text.json cannot be read"):
        load_scorer_folder(folder)
