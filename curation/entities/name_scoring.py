"""Ranking the concepts of a lexicon for a name: character n-gram TF-IDF, a name encoder, or both.

Le et al. (2023, seed 001, §3.1): the TF-IDF neighbours (the
:class:`~curation.entities.normalise.Normaliser`'s index) united with the encoder's dense neighbours,
re-ranked by ``w * dense + (1 - w) * tfidf``; a concept scores its best name. The linkers of
:mod:`curation.entities.linking` decide from these rankings whether to apply a link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from curation.entities.lexicon import Lexicon, normalise_name
from curation.entities.normalise import Normaliser

MODES = ("tfidf", "dense", "combined", "prototype")
MEMO_SIZE = 100_000  # query embeddings kept (~150 MB at 384 floats); cleared whole when full


@dataclass(frozen=True)
class Ranked:
    """One ranked concept for a name: its id, its best-matching name and the score."""

    concept_id: str
    name: str
    score: float


class NameScorer:
    """Ranks the concepts of one lexicon for names, by TF-IDF, an encoder, or both.

    Args:
        lexicon: the concepts and names to link to.
        encoder: a SentenceTransformer, or None (TF-IDF only).
        weight: w in ``w * dense + (1 - w) * tfidf`` for mode "combined".
        pool: names taken from each of the two rankings before re-ranking their union.

    Name embeddings are computed per kind on first use (a minute for DrugBank's 41k names on
    one CPU core) and kept.
    """

    def __init__(self, lexicon: Lexicon, encoder=None, weight: float = 0.5, pool: int = 20) -> None:
        self.lexicon = lexicon
        self.encoder = encoder
        self.weight = weight
        self.pool = pool
        self.normaliser = Normaliser(lexicon, min_score=0.0)
        self._embeddings: dict[str, np.ndarray] = {}
        self._prototypes: dict[str, tuple[list[str], np.ndarray]] = {}
        self._memo: dict[str, np.ndarray] = {}  # name -> embedding, for queries seen again

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) L2-normalised embeddings of names (each distinct name encoded once, and kept:
        the same names come back in every ranking mode and in calibration)."""
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        if len(self._memo) + len(unique) > MEMO_SIZE:
            self._memo.clear()
        new = [t for t in unique if t not in self._memo]
        if new:
            vectors = np.asarray(
                self.encoder.encode(new, batch_size=256, normalize_embeddings=True, convert_to_numpy=True),
                dtype=np.float32,
            ).reshape(len(new), -1)
            self._memo.update(zip(new, vectors, strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])

    def rank(self, texts: Sequence[str], kind: str, k: int = 5, mode: str = "combined",
             weight: float | None = None, query_embeddings: np.ndarray | None = None) -> list[list[Ranked]]:
        """The top ``k`` concepts per text, best first.

        Args:
            texts: the names to link.
            kind: the lexicon kind to link into.
            k: concepts per text.
            mode: one of :data:`MODES` ("prototype": cosine to the mean of a concept's name embeddings).
            weight: overrides ``self.weight`` (dev search).
            query_embeddings: (len(texts), dim) embeddings, when the caller already has them.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        vectoriser, matrix, rows = self.normaliser.tfidf(kind)
        if not rows or not texts:
            return [[] for _ in texts]
        w = self.weight if weight is None else weight
        dense_needed = mode != "tfidf"
        if dense_needed and self.encoder is None:
            raise ValueError(f"mode {mode!r} needs an encoder")
        out: list[list[Ranked]] = []
        step = 256
        for start in range(0, len(texts), step):
            chunk = list(texts[start : start + step])
            q_dense = None
            if dense_needed:
                q_dense = (query_embeddings[start : start + step] if query_embeddings is not None
                           else self.encode(chunk))  # (b, dim)
            if mode == "prototype":
                concepts, protos = self._prototype_matrix(kind)
                scores = q_dense @ protos.T  # (b, n_concepts)
                for row in scores:
                    top = np.argsort(-row)[:k]
                    out.append([Ranked(concepts[i], self.lexicon.canonical(kind, concepts[i]), float(row[i]))
                                for i in top])
                continue
            sparse = (vectoriser.transform([normalise_name(t) for t in chunk]) @ matrix.T).toarray()  # (b, n)
            dense = q_dense @ self._name_matrix(kind).T if dense_needed else None  # (b, n)
            for i in range(len(chunk)):
                if mode == "tfidf":
                    score, pool = sparse[i], _top(sparse[i], self.pool * k)
                elif mode == "dense":
                    score, pool = dense[i], _top(dense[i], self.pool * k)
                else:
                    pool = np.union1d(_top(sparse[i], self.pool), _top(dense[i], self.pool))
                    score = np.zeros_like(sparse[i])
                    score[pool] = w * dense[i][pool] + (1 - w) * sparse[i][pool]
                out.append(_by_concept(score, pool, rows, k))
        return out

    def _name_matrix(self, kind: str) -> np.ndarray:
        if kind not in self._embeddings:
            rows = self.normaliser.tfidf(kind)[2]
            self._embeddings[kind] = self.encode([name for _, name in rows])  # (n_names, dim)
        return self._embeddings[kind]

    def _prototype_matrix(self, kind: str) -> tuple[list[str], np.ndarray]:
        if kind not in self._prototypes:
            rows = self.normaliser.tfidf(kind)[2]
            names = self._name_matrix(kind)
            index: dict[str, list[int]] = {}
            for i, (concept, _) in enumerate(rows):
                index.setdefault(concept, []).append(i)
            concepts = list(index)
            protos = np.stack([names[index[c]].mean(axis=0) for c in concepts])  # (n_concepts, dim)
            protos /= np.linalg.norm(protos, axis=1, keepdims=True) + 1e-12
            self._prototypes[kind] = (concepts, protos)
        return self._prototypes[kind]


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    n = min(n, len(scores))
    part = np.argpartition(-scores, n - 1)[:n]
    return part[np.argsort(-scores[part])]


def _by_concept(score: np.ndarray, pool: np.ndarray, rows: list[tuple[str, str]], k: int) -> list[Ranked]:
    out: list[Ranked] = []
    seen: set[str] = set()
    for i in pool[np.argsort(-score[pool], kind="stable")]:
        concept, name = rows[i]
        if concept not in seen:
            seen.add(concept)
            out.append(Ranked(concept, name, round(float(score[i]), 4)))
            if len(out) == k:
                break
    return out
