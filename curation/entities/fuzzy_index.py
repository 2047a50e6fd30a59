"""The normaliser's character n-gram TF-IDF index of one kind, kept as plain arrays (``.npz``, no pickle).

Fitting it over a kind's names is the slow part of a first fuzzy query (~250k gene names: 8-25 s on 2 cores).
:func:`save_fuzzy` writes what :meth:`~curation.entities.normalise.Normaliser.tfidf` fitted: the vocabulary's terms in
column order, the idf weights and the CSR matrix of the names; :func:`load_fuzzy` reads them back as a
:class:`KeptVectoriser` (same vocabulary and weights, the same query vectors as the fitted ``TfidfVectorizer`` gives,
bit for bit: tests/curation/entities/test_fuzzy_index.py) and the matrix, without importing scikit-learn (~0.8 s of a
CLI search on 2 cores). Which names the rows are is the lexicon's (``Lexicon.entries(kind)``, in order), so a file is
only read beside the lexicon it was fitted on: the kept matcher's folder (:mod:`curation.entities.matcher_cache`), whose
manifest holds the file's checksum.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Iterable
from functools import lru_cache
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


class KeptVectoriser:
    """A fitted ``TfidfVectorizer(analyzer="char_wb", ngram_range, lowercase=True)`` (l2 norm, idf, raw counts) read
    back from its vocabulary and idf weights: :meth:`transform` computes what the fitted one's ``transform`` does,
    in the same order of operations (scikit-learn 1.x's ``_char_wb_ngrams``, ``_count_vocab``,
    ``TfidfTransformer.transform`` and ``inplace_csr_row_normalize_l2``), hence the same floats.

    Attributes:
        vocabulary_: n-gram → column.
        idf_: (n_features,) float64 idf weight of each column.
        ngram_range: the n-gram sizes.
    """

    _white_spaces = re.compile(r"\s\s+")

    def __init__(self, vocabulary: dict[str, int], idf: np.ndarray, ngram_range: tuple[int, int]) -> None:
        if len(vocabulary) != len(idf):
            raise ValueError(f"{len(vocabulary)} terms but {len(idf)} idf weights")
        self.vocabulary_ = vocabulary
        self.idf_ = np.asarray(idf, dtype=np.float64)
        self.ngram_range = ngram_range

    def _ngrams(self, text: str) -> list[str]:
        text = self._white_spaces.sub(" ", text.lower())
        low, high = self.ngram_range
        out = []
        for word in text.split():
            word = f" {word} "
            for n in range(low, high + 1):
                offset = 0
                out.append(word[offset:offset + n])
                while offset + n < len(word):
                    offset += 1
                    out.append(word[offset:offset + n])
                if offset == 0:  # a short word (shorter than n) is counted once
                    break
        return out

    def transform(self, texts: Iterable[str]):
        """The (n_texts, n_features) l2-normalised TF-IDF rows of ``texts``, a SciPy CSR matrix."""
        from scipy.sparse import csr_matrix

        columns: list[int] = []
        counts: list[int] = []
        indptr = [0]
        for text in texts:
            counter: dict[int, int] = {}
            for gram in self._ngrams(text):
                column = self.vocabulary_.get(gram)
                if column is not None:
                    counter[column] = counter.get(column, 0) + 1
            columns.extend(counter)
            counts.extend(counter.values())
            indptr.append(len(columns))
        matrix = csr_matrix((np.asarray(counts, dtype=np.float64), np.asarray(columns, dtype=np.int32),
                             np.asarray(indptr, dtype=np.int32)), shape=(len(indptr) - 1, len(self.vocabulary_)))
        matrix.sort_indices()
        matrix.data *= self.idf_[matrix.indices]
        for row in range(matrix.shape[0]):  # summed one by one, in column order, as scikit-learn's loop does
            start, end = matrix.indptr[row], matrix.indptr[row + 1]
            total = 0.0
            for value in matrix.data[start:end].tolist():
                total += value * value
            if total != 0.0:
                matrix.data[start:end] /= math.sqrt(total)
        return matrix


def load_fuzzy(path: Path, sha256: str) -> tuple[KeptVectoriser, object]:
    """:func:`read_fuzzy`, each file read once per process while it is unchanged (a few kept at a time; read-only to
    their users): the app's matcher thread reads them ahead (:func:`curation.runtime.matcher.start_matcher`), so that
    a restart's first typed name does not wait for its kind's file (~0.35 s for the genes' 61 MB on 2 cores)."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        raise DamagedIndex(f"{path.name}: {exc}") from None
    return _load_once(path, sha256, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _load_once(path: Path, sha256: str, mtime_ns: int, size: int) -> tuple[KeptVectoriser, object]:
    return read_fuzzy(path, sha256)


def read_fuzzy(path: Path, sha256: str) -> tuple[KeptVectoriser, object]:
    """``(vectoriser, matrix)`` from a file :func:`save_fuzzy` wrote, checked against its checksum.

    Raises:
        DamagedIndex: the file is missing, does not match ``sha256`` or is not such a file.
    """
    from scipy.sparse import csr_matrix

    try:
        raw = path.read_bytes()
        if hashlib.sha256(raw).hexdigest() != sha256:
            raise DamagedIndex(f"{path.name} does not match its checksum")
        with np.load(io.BytesIO(raw), allow_pickle=False) as arrays:
            terms, idf, data, indices, indptr, shape, ngrams = (arrays[f] for f in FIELDS)
        low, high = (int(n) for n in ngrams)
        vectoriser = KeptVectoriser({term: column for column, term in enumerate(terms.tolist())}, idf, (low, high))
        matrix = csr_matrix((data, indices, indptr), shape=tuple(int(n) for n in shape))
    except (OSError, ValueError, KeyError) as exc:
        raise DamagedIndex(f"{path.name}: {exc}") from None
    return vectoriser, matrix
