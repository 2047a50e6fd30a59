"""Entity normalisation of what a curator types: ranked concept candidates.

Follows the candidate retrieval of Le et al. (2023), *A metric learning-based method for
biomedical entity linking* (seed 001, §3.1): a synonym dictionary S = {name: {concepts}},
and for names not in it, character n-gram TF-IDF vectors of the typed text and of every
dictionary name, ranked by cosine similarity, taking concepts in order of their best name.
Before the fuzzy step, notation the dictionary cannot hold is normalised by rule:
variants ("Val600Glu" -> "V600E"), residues ("serine 473" -> "S473") and PTM types
("phosphorylated" -> "phosphorylation").

Order of the steps and their ``how``: "exact" (score 1), "variant" / "residue" / "ptm"
(score 1), "fuzzy" (cosine, below 1).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation.entities.fuzzy_index import DamagedIndex, load_fuzzy
from curation.entities.lexicon import Lexicon, normalise_name
from curation.entities.name_patterns import gene_lookup
from curation.entities.ptm import normalise_ptm, normalise_residue
from curation.entities.variants import variant_keys

RULE_KINDS = ("variant", "residue", "ptm")


@dataclass(frozen=True)
class Candidate:
    """One ranked answer to "which concept did the curator mean?".

    Attributes:
        concept_id: the concept's id in its kind (DrugBank id, gene symbol, variant key, ...).
        kind: the dictionary kind ("chemical", "gene", "variant", ...).
        canonical: the concept's display name.
        matched: the dictionary name (or rule output) that matched.
        score: 1.0 for exact and rule matches, the cosine similarity for fuzzy ones.
        how: "exact", "variant", "residue", "ptm" or "fuzzy".
    """

    concept_id: str
    kind: str
    canonical: str
    matched: str
    score: float
    how: str


class Normaliser:
    """Turns typed text into ranked :class:`Candidate` concepts of a :class:`Lexicon`.

    Args:
        lexicon: the dictionaries to normalise against.
        kept: per kind, a TF-IDF index fitted before on this very lexicon (``.npz`` file and its checksum,
            :mod:`curation.entities.fuzzy_index`), read instead of fitted; a damaged file is fitted anew.
        ngram_range: character n-gram sizes (``char_wb`` analyser, lower-cased).
        min_score: fuzzy candidates below this cosine similarity are dropped.

    The TF-IDF index is fitted on the first fuzzy query (or by :meth:`fit`), one matrix
    per kind.

    Example:
        >>> normaliser = Normaliser(lexicon)
        >>> normaliser.normalise("vemurafinib", kind="chemical")[0].canonical
        'Vemurafenib'
    """

    def __init__(self, lexicon: Lexicon, ngram_range: tuple[int, int] = (2, 4), min_score: float = 0.3,
                 kept: Mapping[str, tuple[Path, str]] | None = None) -> None:
        self.lexicon = lexicon
        self.ngram_range = ngram_range
        self.min_score = min_score
        self.kept = dict(kept or {})  # kind -> (file, checksum): indexes fitted before on this lexicon
        self._index: dict[str, tuple[object, object, list[tuple[str, str]]]] = {}
        self._gene_of: Callable[[str], str | None] | None = None  # built on the first variant query

    def normalise(self, text: str, kind: str | None = None, k: int = 5) -> list[Candidate]:
        """Ranked candidates for ``text``, best first, at most ``k`` (per the whole list).

        Args:
            text: what the curator typed.
            kind: restrict to one kind (None: every kind of the lexicon and the rule kinds).
            k: how many candidates to return.
        """
        text = " ".join(text.split())
        if not text:
            return []
        out: list[Candidate] = []
        for found_kind, concept in self.lexicon.lookup(text, kind):
            out.append(self._candidate(found_kind, concept, text, 1.0, "exact"))
        out.extend(self._rules(text, kind))
        if len(out) < k:
            kinds = [kind] if kind else list(self.lexicon.kinds)
            # A variant the rules could read is settled by its notation: its nearest names are
            # other variants ("V600K" for "V600E", another gene's "T17 DELETION" for "CDKN2A
            # deletion"), not spellings of it.
            if any(c.how == "variant" for c in out):
                kinds = [each for each in kinds if each != "variant"]
            for each in kinds:
                out.extend(self._fuzzy(text, each, k))
        return _dedupe(out)[:k]

    def fit(self, kinds: Iterable[str] | None = None) -> Normaliser:
        """Build the TF-IDF indexes now rather than on the first fuzzy query (about 3 s for
        DrugBank's 41k names); returns ``self`` so it chains after the constructor."""
        for kind in kinds if kinds is not None else self.lexicon.kinds:
            self._fitted(kind)
        return self

    def tfidf(self, kind: str) -> tuple:
        """The fitted ``(vectoriser, matrix, rows)`` of one kind, rows ``(concept, name)`` in the
        matrix's row order (``vectoriser`` is None for a kind with no names); the learned
        linker (:mod:`curation.entities.linking`) scores the same names with it."""
        return self._fitted(kind)

    def best(self, text: str, kind: str | None = None) -> Candidate | None:
        """The top candidate, or None when nothing is similar enough."""
        found = self.normalise(text, kind, k=1)
        return found[0] if found else None

    # --- steps --------------------------------------------------------------------------

    def _candidate(self, kind: str, concept: str, matched: str, score: float, how: str) -> Candidate:
        canonical = self.lexicon.canonical(kind, concept) or concept
        return Candidate(concept, kind, canonical, matched, score, how)

    def _rules(self, text: str, kind: str | None) -> list[Candidate]:
        out: list[Candidate] = []
        if kind in (None, "variant"):
            if self._gene_of is None:
                self._gene_of = gene_lookup(self.lexicon)
            for key in variant_keys(text, gene_of=self._gene_of):
                out.append(self._rule_candidate("variant", key, "variant"))
        if kind in (None, "residue"):
            residue = normalise_residue(text)
            if residue:
                out.append(self._rule_candidate("residue", residue, "residue"))
        if kind in (None, "ptm"):
            ptm = normalise_ptm(text)
            if ptm:
                out.append(self._rule_candidate("ptm", ptm, "ptm"))
        return out

    def _rule_candidate(self, kind: str, key: str, how: str) -> Candidate:
        # Prefer the lexicon's concept when the key is one of its names ("V600E" from CIViC): the concept filed
        # under the key itself first, since a KB profile can carry the key as a name too ("V600E AMPLIFICATION"
        # once named V600E "AMPLIFICATION").
        concepts = [concept for _, concept in self.lexicon.lookup(key, kind)]
        if concepts:
            return self._candidate(kind, key if key in concepts else concepts[0], key, 1.0, how)
        return Candidate(key, kind, key, key, 1.0, how)

    def _fuzzy(self, text: str, kind: str, k: int) -> list[Candidate]:
        vectoriser, matrix, rows = self._fitted(kind)
        if not rows:
            return []
        query = vectoriser.transform([normalise_name(text)])  # (1, n_features)
        scores = (matrix @ query.T).toarray().ravel()  # (n_names,); rows are L2-normalised
        order = np.argsort(-scores)
        out: list[Candidate] = []
        seen: set[str] = set()
        for i in order[: 20 * k]:
            score = float(scores[i])
            if score < self.min_score:
                break
            concept, name = rows[i]
            if concept in seen:
                continue
            seen.add(concept)
            out.append(self._candidate(kind, concept, name, round(score, 4), "fuzzy"))
            if len(out) == k:
                break
        return out

    def _fitted(self, kind: str) -> tuple:
        if kind not in self._index:
            rows = self.lexicon.name_rows(kind)  # (concept, name) in entries' order: the matrix's rows
            if not rows:
                self._index[kind] = (None, None, [])
                return self._index[kind]
            if kind in self.kept:
                try:
                    vectoriser, matrix = load_fuzzy(*self.kept[kind])
                    if matrix.shape[0] == len(rows) and tuple(vectoriser.ngram_range) == tuple(self.ngram_range):
                        self._index[kind] = (vectoriser, matrix, rows)
                        return self._index[kind]
                except DamagedIndex as exc:
                    print(f"the kept name index is not used ({exc}): fitting it again", file=sys.stderr)
            from sklearn.feature_extraction.text import TfidfVectorizer  # only when fitted here (~0.8 s to import)

            vectoriser = TfidfVectorizer(analyzer="char_wb", ngram_range=self.ngram_range, lowercase=True)
            matrix = vectoriser.fit_transform([normalise_name(name) for _, name in rows])  # (n_names, n_features)
            self._index[kind] = (vectoriser, matrix.tocsr(), rows)
        return self._index[kind]


def _dedupe(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Keep each (kind, concept) once, at its best score; stable for equal scores."""
    best: dict[tuple[str, str], Candidate] = {}
    order: list[tuple[str, str]] = []
    for candidate in candidates:
        key = (candidate.kind, candidate.concept_id)
        if key not in best:
            order.append(key)
            best[key] = candidate
        elif candidate.score > best[key].score:
            best[key] = candidate
    ranked = [best[key] for key in order]
    return sorted(ranked, key=lambda c: -c.score)
