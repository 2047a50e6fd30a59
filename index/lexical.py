"""Lexical index: BM25 with bm25s, saved as its plain files and memory-mapped on load.

Tokenisation keeps biomedical names whole enough to match: lower-cased word tokens of two or
more characters (V600E → "v600e", BCR::ABL1 → "bcr", "abl1"), English stop words removed,
Snowball stemming. Documents are indexed as title + abstract.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

# The one thing this module does at import time, because it must come before bm25s's own import: bm25s
# imports JAX when JAX is installed (bm25s/selection.py runs `import jax.lax` and a top_k), and JAX then
# preallocates 75% of the GPU's memory in every process that imports it — the app and the retrain worker —
# so the second retrain on a GPU machine ran out of CUDA memory. Only a default: a setting the user
# exported wins. Retrieval itself stays on bm25s's numpy backend (`backend_selection="numpy"` below).
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import bm25s  # noqa: E402 (after the JAX setting above, on purpose)
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import Stemmer  # noqa: E402

from index.documents import TextDocument  # noqa: E402
from index.errors import RetrievalError  # noqa: E402
from index.hits import Ranking, ranked  # noqa: E402

IDS_FILE = "ids.json"
MANIFEST_FILE = "lexical.json"
FORMAT_VERSION = 1


class LexicalIndexError(RetrievalError):
    """A BM25 index that cannot be loaded or built."""


@dataclass(frozen=True)
class LexicalConfig:
    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "en"


class LexicalIndex:
    """bm25s index plus the document ids of its rows."""

    def __init__(self, retriever: bm25s.BM25, ids: list[str], config: LexicalConfig) -> None:
        self.retriever = retriever
        self.ids = ids
        self.config = config
        self._stemmer = Stemmer.Stemmer(config.stemmer) if config.stemmer else None
        self._doc_terms: sp.csr_matrix | None = None  # built by doc_term_matrix on first use

    @classmethod
    def build(cls, documents: Sequence[TextDocument], config: LexicalConfig = LexicalConfig()) -> LexicalIndex:
        stemmer = Stemmer.Stemmer(config.stemmer) if config.stemmer else None
        texts = [d.text for d in documents]
        tokens = bm25s.tokenize(texts, stopwords=config.stopwords, stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        retriever.index(tokens, show_progress=False)
        return cls(retriever, [d.pmid for d in documents], config)

    def __len__(self) -> int:
        return len(self.ids)

    @functools.cached_property
    def row_of(self) -> dict[str, int]:
        """Document id → its row (the order of :attr:`ids`, of :meth:`weighted_scores` and of the
        doc-term matrix); computed once: an index's ids never change after it is built or loaded."""
        return {pmid: row for row, pmid in enumerate(self.ids)}

    def _tokens(self, queries: Sequence[str]) -> list[list[str]]:
        return bm25s.tokenize(
            list(queries),
            stopwords=self.config.stopwords,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )

    def search(self, queries: Sequence[str], k: int) -> list[Ranking]:
        """Top-k (doc id, BM25 score) per query; documents scoring 0 are left out."""
        if not queries:
            return []
        k = min(k, len(self))
        if k == 0:
            return [[] for _ in queries]
        tokens = self._tokens(queries)
        results: list[Ranking] = [[] for _ in queries]
        # bm25s cannot score a query with no known token; such queries simply have no hits.
        known = [i for i, t in enumerate(tokens) if any(w in self.retriever.vocab_dict for w in t)]
        if not known:
            return results
        rows, scores = self.retriever.retrieve(
            [tokens[i] for i in known], k=k, show_progress=False, n_threads=1, backend_selection="numpy"
        )  # (n_known, k) each; numpy, not "auto": auto picks JAX (and so the GPU) whenever JAX is installed
        for slot, (row_ids, row_scores) in zip(known, zip(rows, scores, strict=True), strict=True):
            results[slot] = [(self.ids[r], float(s)) for r, s in zip(row_ids, row_scores, strict=True) if s > 0]
        return results

    # --- weighted terms: the concept search's expanded queries and RM3 ------------------------

    def term_weights(self, forms: Sequence[tuple[str, float]]) -> dict[int, float]:
        """Weighted query terms from weighted surface forms, tokenised exactly as the documents were.

        A token's weight is the largest, over the forms that contain it, of the form's weight divided by
        its number of tokens: a one-word synonym ("HER2") carries its whole weight, a four-word one
        ("epidermal growth factor receptor") spreads it. Tokens the index never saw are dropped (after
        the division, so an unknown word still takes its share of its form). Empty forms and forms of
        weight <= 0 are ignored.

        Args:
            forms: (surface form, weight) pairs, e.g. ``[("ERBB2", 1.0), ("HER2", 0.8)]``.

        Returns:
            token id (a column of bm25s's score matrix) → weight.
        """
        kept = [(text, float(weight)) for text, weight in forms if text.strip() and weight > 0]
        if not kept:
            return {}
        vocab = self.retriever.vocab_dict
        out: dict[int, float] = {}
        for (_, weight), tokens in zip(kept, self._tokens([text for text, _ in kept]), strict=True):
            if not tokens:  # only stop words or one-letter tokens
                continue
            share = weight / len(tokens)
            for token in tokens:
                if token in vocab:
                    term = int(vocab[token])
                    out[term] = max(out.get(term, 0.0), share)
        return out

    def weighted_scores(self, weights: Mapping[int, float]) -> np.ndarray:
        """Σ_t w_t · BM25(t, d) for every document, read from bm25s's precomputed score matrix.

        With unit weights this is what ``retriever.get_scores`` gives for the same distinct tokens
        (non-occurrence scores of BM25L / BM25+ included).

        Args:
            weights: token id → weight, as :meth:`term_weights` or :func:`index.expansion.rm3` give.

        Returns:
            (n_docs,) float32 scores, in the order of :attr:`ids`.
        """
        scores = np.zeros(len(self), dtype=np.float32)  # (n_docs,)
        # bm25s keeps a CSC matrix (n_docs, vocabulary) as three arrays, memory-mapped after load:
        # column t's rows are indices[indptr[t]:indptr[t + 1]], its scores the same slice of data.
        matrix = self.retriever.scores
        data, indices, indptr = matrix["data"], matrix["indices"], matrix["indptr"]
        n_terms = len(indptr) - 1
        # BM25L / BM25+ give every document a term's non-occurrence score, stored apart.
        absent = getattr(self.retriever, "nonoccurrence_array", None)
        constant = 0.0
        for term, weight in weights.items():
            if weight == 0:
                continue
            if not 0 <= term < n_terms:
                raise LexicalIndexError(
                    f"token id {term} is not in this BM25 index (its vocabulary has {n_terms} tokens); "
                    "take the weights from this index's term_weights"
                )
            start, end = int(indptr[term]), int(indptr[term + 1])
            # a column lists each document once, so a fancy-indexed += is exact (and far faster than np.add.at)
            scores[np.asarray(indices[start:end])] += np.float32(weight) * np.asarray(data[start:end])
            if absent is not None:
                constant += float(weight) * float(absent[term])
        if constant:
            scores += np.float32(constant)
        return scores

    def containing(self, spellings: Sequence[str]) -> list[str] | None:
        """The documents that hold every token of one of the spellings, the best BM25 score of their tokens first.

        A candidate set for a phrase check (the caller reads the texts): a spelling with a token the index never
        saw has no document.

        Args:
            spellings: forms of one name, e.g. ``["FABP-4", "FABP4"]``.

        Returns:
            Document ids, or None when a spelling has no token at all (stop words and single letters: "G-to-A"
            written "G to A"): the index cannot narrow what may write it.
        """
        vocab = self.retriever.vocab_dict
        matrix = self.retriever.scores
        indices, indptr = matrix["indices"], matrix["indptr"]
        mask = np.zeros(len(self), dtype=bool)  # (n_docs,) scratch: one term's documents
        rows = np.zeros(0, dtype=np.int64)
        terms: set[int] = set()
        tokenised = self._tokens(spellings)
        if not tokenised or not all(tokenised):
            return None
        for tokens in tokenised:
            if any(t not in vocab for t in tokens):
                continue
            ids = sorted({int(vocab[t]) for t in tokens}, key=lambda term: int(indptr[term + 1] - indptr[term]))
            found = np.asarray(indices[int(indptr[ids[0]]) : int(indptr[ids[0] + 1])])  # the rarest term's
            for term in ids[1:]:  # kept only where every other term occurs too
                if not len(found):
                    break
                column = np.asarray(indices[int(indptr[term]) : int(indptr[term + 1])])
                mask[column] = True
                found = found[mask[found]]
                mask[column] = False
            rows = np.union1d(rows, found)
            terms.update(ids)
        if not len(rows):
            return []
        scores = self.weighted_scores(dict.fromkeys(terms, 1.0))[rows]
        return [self.ids[r] for r in rows[np.lexsort((rows, -scores))]]

    def search_weighted(self, weights: Mapping[int, float], k: int) -> Ranking:
        """Top-k (doc id, score) of a weighted query, ties by doc id; documents scoring 0 are left out.

        Args:
            weights: token id → weight.
            k: how many hits at most.

        Returns:
            The ranking, best first.
        """
        if k <= 0 or not weights:
            return []
        scores = self.weighted_scores(weights)  # (n_docs,)
        positive = np.flatnonzero(scores > 0)
        if positive.size > k:
            # Keep every document tied with the k-th score so that ties are then broken by doc id,
            # not by row order.
            kth = np.partition(scores[positive], positive.size - k)[positive.size - k]
            positive = positive[scores[positive] >= kth]
        return ranked({self.ids[row]: float(scores[row]) for row in positive})[:k]

    def doc_term_matrix(self) -> sp.csr_matrix:
        """(n_docs, vocabulary) BM25 term scores, one row per document: the documents' models for feedback.

        Built once from bm25s's score matrix and cached; callers must not modify it. An entry is
        BM25(t, d) for a term the document contains; BM25L / BM25+'s non-occurrence score of the terms
        a document lacks is left out (it says nothing about the document).

        Returns:
            CSR matrix, float32, rows in the order of :attr:`ids`, columns token ids.
        """
        if self._doc_terms is None:
            matrix = self.retriever.scores
            indptr = np.asarray(matrix["indptr"])
            data = np.array(matrix["data"], dtype=np.float32)  # a copy: the stored one may be memory-mapped
            absent = getattr(self.retriever, "nonoccurrence_array", None)
            if absent is not None:  # stored as BM25 minus the non-occurrence score
                data += np.repeat(np.asarray(absent, dtype=np.float32), np.diff(indptr))
            self._doc_terms = sp.csc_matrix(
                (data, np.asarray(matrix["indices"]), indptr), shape=(len(self), len(indptr) - 1)
            ).tocsr()
        return self._doc_terms

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.retriever.save(str(folder), show_progress=False)
        (folder / IDS_FILE).write_text(json.dumps(self.ids))
        manifest = {
            "format_version": FORMAT_VERSION,
            "documents": len(self),
            "config": asdict(self.config),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "versions": {"bm25s": bm25s.__version__, "numpy": np.__version__},
        }
        (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
        return folder

    @classmethod
    def load(cls, folder: str | Path, mmap: bool = True) -> LexicalIndex:
        folder = Path(folder)
        try:
            manifest = json.loads((folder / MANIFEST_FILE).read_text())
            ids = json.loads((folder / IDS_FILE).read_text())
            retriever = bm25s.BM25.load(str(folder), mmap=mmap, show_progress=False)
        except FileNotFoundError as exc:
            raise LexicalIndexError(
                f"BM25 index in {folder} is incomplete: {Path(exc.filename).name} is missing"
            ) from None
        except (ValueError, OSError, json.JSONDecodeError) as exc:
            raise LexicalIndexError(f"BM25 index in {folder} is corrupted ({exc}); rebuild it") from None
        if manifest.get("documents") != len(ids):
            raise LexicalIndexError(
                f"BM25 index in {folder} is inconsistent: manifest says {manifest.get('documents')} "
                f"documents, ids.json has {len(ids)}; rebuild it"
            )
        return cls(retriever, ids, LexicalConfig(**manifest.get("config", {})))
