"""The normaliser's character n-gram TF-IDF index of one kind, kept as plain arrays (``.npz``, no pickle).

Fitting it over a kind's names is the slow part of a first fuzzy query (~250k gene names: 8-25 s on 2 cores).
:func:`save_fuzzy` writes what :meth:`~curation.entities.normalise.Normaliser.tfidf` fitted: the vocabulary's
terms in column order, the idf weights and the CSR matrix of the names; :func:`load_fuzzy` rebuilds the same
vectoriser (same vocabulary and weights, hence the same query vectors) and matrix. Which names the rows are is the
lexicon's (``Lexicon.entries(kind)``, in order), so a file is only read beside the lexicon it was fitted on: the
kept matcher's folder (:mod:`curation.entities.matcher_cache`), whose manifest holds the file's checksum.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

FIELDS = ("terms", "idf", "data", "indices", "indptr", "shape", "ngram_range")


class DamagedIndex(Exception):
    """A kept TF-IDF file that does not match its checksum or cannot be read."""


def save_fuzzy(vectoriser, matrix, ngram_range: tuple[int, int]) -> bytes:
    """The ``.npz`` bytes of a fitted ``TfidfVectorizer`` and its CSR matrix (rows: the kind's names)."""
    terms = sorted(vectoriser.vocabulary_, key=vectoriser.vocabulary_.get)  # column order
    out = io.BytesIO()
    np.savez(out, terms=np.array(terms, dtype=str), idf=vectoriser.idf_, data=matrix.data, indices=matrix.indices,
             indptr=matrix.indptr, shape=np.array(matrix.shape), ngram_range=np.array(ngram_range))
    return out.getvalue()


def load_fuzzy(path: Path, sha256: str) -> tuple:
    """``(vectoriser, matrix)`` from a file :func:`save_fuzzy` wrote, checked against its checksum.

    Raises:
        DamagedIndex: the file is missing, does not match ``sha256`` or is not such a file.
    """
    from scipy.sparse import csr_matrix
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        raw = path.read_bytes()
        if hashlib.sha256(raw).hexdigest() != sha256:
            raise DamagedIndex(f"{path.name} does not match its checksum")
        with np.load(io.BytesIO(raw), allow_pickle=False) as arrays:
            terms, idf, data, indices, indptr, shape, ngrams = (arrays[f] for f in FIELDS)
        vectoriser = TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(int(n) for n in ngrams), lowercase=True)
        vectoriser.vocabulary_ = {term: column for column, term in enumerate(terms.tolist())}
        vectoriser.idf_ = idf  # after the vocabulary: the setter checks their lengths agree
        matrix = csr_matrix((data, indices, indptr), shape=tuple(int(n) for n in shape))
    except (OSError, ValueError, KeyError) as exc:
        raise DamagedIndex(f"{path.name}: {exc}") from None
    return vectoriser, matrix
