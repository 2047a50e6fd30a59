"""The kept name index read back without scikit-learn: the same query vectors and scores as the fitted vectoriser."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from curation.entities.fuzzy_index import DamagedIndex, KeptVectoriser, load_fuzzy, save_fuzzy
from curation.entities.lexicon import normalise_name
from curation.entities.synonyms import drugbank_synonyms

ODD = ["", " ", "a", "BRAF", "braf  v600e", "V600E", "p.Val600Glu", "TGFβ1", "Müller  cell\tline", "5-FU",
       "BCR::ABL1", "x" * 300, "an unknown   name", "ÆØÅ", "ﬁ ligature", "İstanbul"]


def _fitted(names: list[str], ngram_range=(2, 4)):
    vectoriser = TfidfVectorizer(analyzer="char_wb", ngram_range=ngram_range, lowercase=True)
    return vectoriser, vectoriser.fit_transform(names).tocsr()


def _kept(tmp_path, vectoriser, matrix, ngram_range=(2, 4)) -> tuple[KeptVectoriser, object]:
    raw = save_fuzzy(vectoriser, matrix, ngram_range)
    path = tmp_path / "fuzzy-0.npz"
    path.write_bytes(raw)
    return load_fuzzy(path, hashlib.sha256(raw).hexdigest())


def _same(a, b) -> None:
    a, b = a.tocsr(), b.tocsr()
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)  # bit for bit, not approximately


def test_query_vectors_and_scores_are_the_fitted_vectorisers_on_real_names(data_dir, tmp_path):
    names = sorted({normalise_name(s.name) for s in drugbank_synonyms(data_dir / "dicts" / "drugbank_vocabulary.csv")})
    vectoriser, matrix = _fitted(names)
    kept, kept_matrix = _kept(tmp_path, vectoriser, matrix)
    _same(kept_matrix, matrix)
    queries = [normalise_name(q) for q in names[::97] + ODD + ["vemurafinib", "imatinib mesylat", "cis platin"]]
    _same(kept.transform(queries), vectoriser.transform(queries))
    for query in queries[:50]:  # one at a time, as the normaliser asks
        ours = (kept_matrix @ kept.transform([query]).T).toarray().ravel()
        theirs = (matrix @ vectoriser.transform([query]).T).toarray().ravel()
        assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("ngram_range", [(2, 4), (1, 3), (3, 3)])
def test_odd_texts_and_other_ngram_sizes(tmp_path, ngram_range):
    names = ["vemurafenib", "BRAF inhibitor", "5-fluorouracil", "TGF-beta 1", "Müller glia", "a", "ab c"]
    vectoriser, matrix = _fitted(names, ngram_range)
    kept, _ = _kept(tmp_path, vectoriser, matrix, ngram_range)
    assert kept.ngram_range == ngram_range and kept.vocabulary_ == vectoriser.vocabulary_
    _same(kept.transform(ODD + names), vectoriser.transform(ODD + names))


def test_a_damaged_file_is_refused(tmp_path):
    vectoriser, matrix = _fitted(["vemurafenib", "imatinib"])
    raw = save_fuzzy(vectoriser, matrix, (2, 4))
    path = tmp_path / "fuzzy-0.npz"
    path.write_bytes(raw[:-10])
    with pytest.raises(DamagedIndex, match="checksum"):
        load_fuzzy(path, hashlib.sha256(raw).hexdigest())
