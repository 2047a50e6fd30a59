"""The recogniser's activation rule: when a newly trained recogniser replaces the active one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation.errors import CurationError
from curation.store.annotations import get_active_entity_model
from curation.versions.activation import Verdict

TOLERANCE = 0.01  # a new recogniser is activated when its dev F1 ≥ the active one's minus this


def judge_recogniser(con: duckdb.DuckDBPyConnection, folder: Path, chosen: bool) -> Verdict:
    """Whether the recogniser at ``folder`` becomes active, and why: one chosen by hand always; a newly trained one
    unless its dev F1 is below the active one's (same dev set) by more than :data:`TOLERANCE`.

    Raises:
        RecogniserError: ``folder`` holds no readable recogniser manifest.
    """
    from curation.entities.recogniser import read_recogniser_manifest

    if chosen:
        return Verdict(True, "activated as chosen")
    row = get_active_entity_model(con, "recogniser")
    if row is None:
        return Verdict(True, "activated: no recogniser was active")
    try:
        active = read_recogniser_manifest(Path(row.path))
    except CurationError:
        return Verdict(True, f"activated: the active recogniser {row.name} cannot be read any more")
    new, old = read_recogniser_manifest(folder).dev_scores.get("ents_f"), active.dev_scores.get("ents_f")
    if new is None or old is None:
        return Verdict(True, "activated: no dev F1 to compare")
    if new >= old - TOLERANCE:
        return Verdict(True, f"activated: dev F1 {new:.3f} vs {old:.3f} of {active.name}")
    return Verdict(False, f"kept inactive: dev F1 {new:.3f} is below {old:.3f} of the active {active.name} by more "
                          f"than {TOLERANCE}; activate it on the Train page to use it anyway")
