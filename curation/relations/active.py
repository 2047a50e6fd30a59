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

SCORE_THE_REST_HINT = ("\"Score the rest\" on Train & evaluate brings them up to date (or `python -m curation rescore` "
                       "while the app is stopped)")

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
    (the mean of its Dev pair F1s, BioRED any relation and BC5CDR chemical-induced disease, over the Dev sets
    both were judged on). A scorer with no Dev figure (no Dev file in its data folder) replaces none: it is
    activated only when none is active."""
    new = manifest.get("dev_pair_f1_mean")
    row = get_active_relation_scorer(con)
    if row is None:
        figure = "no Dev file to judge it on" if new is None else f"Dev pair F1 {float(new):.3f}"  # type: ignore[arg-type]
        return True, f"activated: no relation scorer was active ({figure})"
    if new is None:
        return False, f"kept {row[1]}: the new scorer has no Dev figure (no Dev file in its data folder) to compare"
    try:
        _, old_manifest = load_scorer_folder(row[0])
    except RelationError as exc:
        return True, f"activated: the active scorer does not load ({exc})"
    if old_manifest.get("dev_pair_f1_mean") is None:
        return True, f"activated: the active scorer {row[1]} has no Dev figure (Dev pair F1 {float(new):.3f})"  # type: ignore[arg-type]
    compared = _compared(manifest, old_manifest)
    if compared is None:
        return False, f"kept {row[1]}: it was judged on other Dev files than the new scorer; nothing to compare"
    new_f1, old_f1, on = compared
    if new_f1 >= old_f1 - GATE_TOLERANCE:
        return True, f"activated: Dev pair F1 {new_f1:.3f} against {old_f1:.3f} for {row[1]}{on}"
    return False, f"kept {row[1]}: Dev pair F1 {new_f1:.3f} is worse than its {old_f1:.3f}{on}"


def _compared(new: Mapping[str, object], old: Mapping[str, object]) -> tuple[float, float, str] | None:
    """(new mean Dev F1, old mean Dev F1, which Dev sets when not all): over the corpora both have a figure on;
    None when they share none."""
    new_dev, old_dev = new.get("dev_pair_f1"), old.get("dev_pair_f1")
    if not isinstance(new_dev, Mapping) or not isinstance(old_dev, Mapping) or set(new_dev) == set(old_dev):
        return float(new["dev_pair_f1_mean"]), float(old["dev_pair_f1_mean"]), ""  # type: ignore[arg-type]
    common = [corpus for corpus in new_dev if corpus in old_dev]
    if not common:
        return None

    def mean(dev: Mapping) -> float:
        return sum(float(dev[c]) for c in common) / len(common)

    return mean(new_dev), mean(old_dev), f" (on {', '.join(common)} Dev, the Dev files both were judged on)"
