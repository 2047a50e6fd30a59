"""Which relation scorer scores pairs now, and whether a newly trained one replaces it.

The store's ``relation_scorers`` records the scorer folders it has seen, one active
(:mod:`curation.store.relations`). :func:`active_scorer` loads it (never raising: one that fails to load comes
back as none, with the reason); :func:`judge` applies the retriever's rule to a new one: not worse on Dev.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import duckdb

from curation.relations.pairs import RelationError
from curation.relations.scorer import RelationScorer
from curation.relations.scorer_folder import load_scorer_folder
from curation.store.relations import UNSCORED, get_active_relation_scorer

NO_SCORER = ("no relation scorer active: suggestions rank candidates by co-occurrence; train one on Train & "
             "evaluate (Relation scorer) or with python -m curation train-relations")


@dataclass(frozen=True)
class ActiveScorer:
    """The scorer that scores pairs now (None: none active, pairs stored unscored) and its version name."""

    scorer: RelationScorer | None
    version: str = UNSCORED
    path: str = ""
    message: str = ""

    @property
    def threshold(self) -> float:
        """The probability at which a document counts as stating the relation (a co-mention: any)."""
        return self.scorer.threshold if self.scorer is not None else 0.0


def active_scorer(con: duckdb.DuckDBPyConnection) -> ActiveScorer:
    """The active relation scorer; never raises: one that fails to load comes back as none, with the reason."""
    row = get_active_relation_scorer(con)
    if row is None:
        return ActiveScorer(None, message=NO_SCORER)
    path, name = row
    try:
        scorer, _ = load_scorer_folder(path)
    except RelationError as exc:
        return ActiveScorer(None, message=f"the active relation scorer could not be loaded ({exc}): suggestions "
                                          "rank candidates by co-occurrence")
    return ActiveScorer(scorer, name, path)


GATE_TOLERANCE = 0.005  # a new scorer may lose this much mean Dev F1 (noise) and still replace the active one


def judge(con: duckdb.DuckDBPyConnection, manifest: Mapping[str, object]) -> tuple[bool, str]:
    """Whether a newly trained scorer replaces the active one, and why: the retriever's rule — not worse on dev
    (the mean of its Dev pair F1s, BioRED any relation and BC5CDR chemical-induced disease)."""
    new = float(manifest.get("dev_pair_f1_mean", 0.0))  # type: ignore[arg-type]
    row = get_active_relation_scorer(con)
    if row is None:
        return True, f"activated: no relation scorer was active (Dev pair F1 {new:.3f})"
    try:
        _, old_manifest = load_scorer_folder(row[0])
    except RelationError as exc:
        return True, f"activated: the active scorer does not load ({exc})"
    old = old_manifest.get("dev_pair_f1_mean")
    if old is None:
        return True, f"activated: the active scorer {row[1]} has no Dev figure (Dev pair F1 {new:.3f})"
    if new >= float(old) - GATE_TOLERANCE:
        return True, f"activated: Dev pair F1 {new:.3f} against {float(old):.3f} for {row[1]}"
    return False, f"kept {row[1]}: Dev pair F1 {new:.3f} is worse than its {float(old):.3f}"
